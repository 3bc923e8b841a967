import { z } from 'zod';
import { integer, port, bool, hostPortList, enumOf, setting, type SettingSpec } from './spec.ts';

/** The log. */
export const logSettingSpecs = {
  log: setting({
    schema: enumOf(['embedded', 'kafka']),
    default: 'embedded',
    expects: 'embedded|kafka',
    describe: 'which log to use; kafka when --kafka-brokers is set and this is left at its default',
  }),
  dataDir: setting({
    schema: z.string().min(1),
    default: './data',
    expects: 'a directory path',
    describe: 'directory of the embedded log (flashlog.db)',
  }),
  kafkaBrokers: setting({
    schema: hostPortList.optional(),
    expects: 'host:port[,host:port...]',
    describe: 'Kafka bootstrap brokers; selects the kafka log',
  }),
  kafkaClientId: setting({ schema: z.string().min(1), default: 'flashlog', expects: 'a client id', describe: 'Kafka client id' }),
  topicPrefix: setting({
    schema: z
      .string()
      .max(200)
      .regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only (Kafka topic names)'),
    default: '',
    expects: 'a topic name prefix such as "unichain." (empty for none)',
    describe: 'prefix of every topic and consumer group flashlog uses, so deployments can share one Kafka cluster',
  }),
  topicPartitions: setting({
    schema: integer(1, 1024),
    default: '1',
    expects: 'an integer 1-1024',
    describe: 'partitions of topics flashlog creates',
  }),
  topicRetentionMs: setting({
    schema: z
      .string()
      .regex(/^-?\d+$/)
      .transform(Number),
    default: '604800000',
    expects: 'milliseconds, -1 for forever',
    describe: 'retention of topics flashlog creates',
  }),
  topicReplication: setting({
    schema: integer(1, 16),
    default: '1',
    expects: 'an integer 1-16',
    describe: 'replication factor of topics flashlog creates',
  }),
  group: setting({
    schema: z.string().min(1).optional(),
    expects: 'a consumer group id',
    describe: 'consumer group (defaults per command)',
  }),
} satisfies Record<string, SettingSpec>;

/** Tail. */
export const tailSettingSpecs = {
  fromBeginning: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'read the topic from its first record',
  }),
  limit: setting({ schema: integer(1).optional(), expects: 'a positive integer', describe: 'stop after this many records' }),
  follow: setting({ schema: bool, boolean: true, default: 'false', expects: 'true|false', describe: 'keep waiting for new records' }),
} satisfies Record<string, SettingSpec>;
