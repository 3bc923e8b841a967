import type { Logger } from '../obs/logger.ts';
import { counter, gauge, histogram, type Registry } from '../obs/metrics.ts';
import { errorMessage } from '../errors.ts';
import type { Log, ProduceRecord } from './port.ts';

export interface Publisher {
  /** Queues records; they are appended in order, in batches, retried while the log is away. */
  push(records: readonly ProduceRecord[]): void;
  /** Resolves when everything queued so far is appended. */
  flush(): Promise<void>;
  /** Number of records waiting. */
  readonly queued: number;
  close(): Promise<void>;
}

export interface PublisherOptions {
  readonly logger: Logger;
  readonly metrics: Registry;
  /** Records held while the log is unavailable; beyond it the oldest are dropped and counted. */
  readonly maxQueued: number;
  readonly batchSize?: number;
  /** Most value bytes per append (one record may exceed it alone): Kafka refuses requests over its max message size. */
  readonly batchBytes?: number;
  /** Called with the records of each successful append (for latency metrics). */
  readonly onAppended?: (records: readonly ProduceRecord[]) => void;
}

/**
 * The single writer of a process: keeps order, batches what accumulates while an append is in
 * flight, and rides out a log outage with a bounded buffer and backoff (200 ms doubling to 5 s).
 *
 * It is an invariant that records are appended in push order and that a record is removed from
 * the queue only after the log acknowledged it.
 */
export function createPublisher(log: Log, options: PublisherOptions): Publisher {
  const queue: ProduceRecord[] = [];
  const batchSize = options.batchSize ?? 1000;
  const batchBytes = options.batchBytes ?? 512 * 1024;
  /** The records of the next append: up to batchSize of them and batchBytes of keys and values. */
  const nextBatch = (): ProduceRecord[] => {
    let bytes = 0;
    let end = 0;
    while (end < queue.length && end < batchSize) {
      const record = queue[end]!;
      bytes += record.value.length + (record.key?.length ?? 0);
      if (end > 0 && bytes > batchBytes) break;
      end += 1;
    }
    return queue.slice(0, end);
  };
  const appended = counter(options.metrics, 'flashlog_publish_records_total', 'records appended to the log', ['topic']);
  const dropped = counter(options.metrics, 'flashlog_publish_dropped_total', 'records dropped because the publish buffer was full');
  const failures = counter(options.metrics, 'flashlog_publish_errors_total', 'failed appends (retried)');
  const appendSeconds = histogram(
    options.metrics,
    'flashlog_publish_append_seconds',
    'one append of a batch to the log, successful or not',
    [],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  );
  const queuedGauge = gauge(options.metrics, 'flashlog_publish_queue_records', 'records waiting to be appended');
  let running: Promise<void> | undefined;
  let waiters: (() => void)[] = [];
  let closed = false;
  let outageSince: number | undefined;

  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  async function drain(): Promise<void> {
    let backoffMs = 200;
    while (queue.length > 0 && !closed) {
      const batch = nextBatch();
      const stopTimer = appendSeconds.startTimer();
      try {
        await log.produce(batch).finally(() => stopTimer());
        queue.splice(0, batch.length);
        queuedGauge.set(queue.length);
        for (const record of batch) appended.inc({ topic: record.topic });
        options.onAppended?.(batch);
        backoffMs = 200;
        if (outageSince !== undefined) {
          options.logger.info({ downMs: Date.now() - outageSince, queued: queue.length }, 'log is back; publishing resumed');
          outageSince = undefined;
        }
      } catch (error) {
        failures.inc();
        if (outageSince === undefined) {
          outageSince = Date.now();
          options.logger.warn({ err: errorMessage(error), queued: queue.length }, 'append to the log failed; buffering and retrying');
        }
        await sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 5000);
      }
    }
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  }

  const kick = () => {
    if (running) return;
    running = drain().finally(() => {
      running = undefined;
      if (queue.length > 0 && !closed) kick();
    });
  };

  return {
    push(records) {
      if (closed || records.length === 0) return;
      queue.push(...records);
      if (queue.length > options.maxQueued) {
        const excess = queue.length - options.maxQueued;
        queue.splice(0, excess);
        dropped.inc(excess);
        options.logger.error({ dropped: excess, maxQueued: options.maxQueued }, 'publish buffer full: oldest records dropped');
      }
      queuedGauge.set(queue.length);
      kick();
    },
    flush() {
      if (queue.length === 0 && !running) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        kick();
      });
    },
    get queued() {
      return queue.length;
    },
    async close() {
      closed = true;
      await running;
      for (const resolve of waiters) resolve();
      waiters = [];
    },
  };
}
