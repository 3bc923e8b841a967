import { join } from 'node:path';
import type { Config } from '../config/settings.ts';
import type { Logger } from '../obs/logger.ts';
import { createEmbeddedLog } from './embedded.ts';
import { createKafkaLog } from './kafka.ts';
import type { Log } from './port.ts';
import { withTopicPrefix } from './topic-prefix.ts';
import { allTopics } from './topics.ts';

/** Opens the log the config selects (under --topic-prefix) and creates flashlog's topics on it. */
export async function openLog(config: Config, logger: Logger): Promise<Log> {
  const opened =
    config.log === 'kafka'
      ? createKafkaLog({
          brokers: config.kafkaBrokers ?? [],
          clientId: config.kafkaClientId,
          logger,
          partitions: config.topicPartitions,
          replication: config.topicReplication,
          retentionMs: config.topicRetentionMs,
        })
      : createEmbeddedLog({ path: join(config.dataDir, 'flashlog.db') });
  const log = withTopicPrefix(opened, config.topicPrefix);
  await log.ensureTopics(
    allTopics.map((name) => ({
      name,
      partitions: config.topicPartitions,
      replication: config.topicReplication,
      retentionMs: config.topicRetentionMs,
    })),
  );
  return log;
}
