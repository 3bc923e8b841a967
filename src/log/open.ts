import { join } from 'node:path';
import type { Config } from '../config/settings.ts';
import type { Logger } from '../obs/logger.ts';
import { createEmbeddedLog } from './embedded/embedded.ts';
import { createKafkaLog } from './kafka/kafka.ts';
import type { Log } from './port.ts';
import { withTopicPrefix } from './topic-prefix.ts';
import { allTopics, topics } from '../records/topics.ts';

/** The embedded log's file in --data-dir. */
export const embeddedLogFile = 'flashlog.db';

/**
 * Opens the log the config selects (under --topic-prefix) and creates flashlog's topics on it.
 * flashlog.meta (the chain stamp, chain-stamp.ts) has one partition and keeps its records forever,
 * whatever the other topics' settings: its first record is the stamp.
 */
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
      : createEmbeddedLog({ path: join(config.dataDir, embeddedLogFile) });
  const log = withTopicPrefix(opened, config.topicPrefix);
  await log.ensureTopics(
    allTopics.map((name) => ({
      name,
      partitions: name === topics.meta ? 1 : config.topicPartitions,
      replication: config.topicReplication,
      retentionMs: name === topics.meta ? -1 : config.topicRetentionMs,
    })),
  );
  return log;
}

/**
 * The embedded log in the file at `path`, as it is: no topics created, nothing written (a look at
 * a log before it is set aside). Callers add the topic prefix.
 */
export const openEmbeddedLogFile = (path: string): Log => createEmbeddedLog({ path });
