import { Kafka, logLevel as kafkaLogLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../../obs/logger.ts';

/** A kafkajs client whose own log lines go to flashlog's logger (errors as warnings, the rest as debug). */
export function createKafkaClient(options: {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger?: Logger;
}): Kafka {
  const { logger } = options;
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: 8 },
    logLevel: kafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log }: LogEntry) => {
        const { message, ...rest } = log;
        if (level <= kafkaLogLevel.ERROR) logger?.warn({ kafka: namespace, ...rest }, message);
        else logger?.debug({ kafka: namespace, ...rest }, message);
      },
  });
}

/** A client connected on first use; a failed connection is forgotten, so the next use tries again. */
export interface LazyConnection<T> {
  get(): Promise<T>;
  /** The connection if one was asked for, then forgotten (the next get() connects anew). */
  forget(): Promise<T | undefined> | undefined;
}

export function lazyConnection<T extends { connect(): Promise<void> }>(create: () => T): LazyConnection<T> {
  let connection: Promise<T> | undefined;
  return {
    get() {
      connection ??= (async () => {
        const client = create();
        await client.connect();
        return client;
      })().catch((error: unknown) => {
        connection = undefined;
        throw error;
      });
      return connection;
    },
    forget() {
      const previous = connection;
      connection = undefined;
      return previous?.catch(() => undefined);
    },
  };
}
