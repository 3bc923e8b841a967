import { Worker } from 'node:worker_threads';
import { Observable, type Subscription } from 'rxjs';
import { FlashlogError } from '../errors.ts';
import { createBatchQueue } from './batch-queue.ts';
import type { KafkaReplayWorkerData } from './kafka-replay-worker.ts';
import type { ConsumeOptions, LogConsumer, LogRecord, RecordPosition } from './port.ts';
import { decodeReplayBatch, type ReplayMessage } from './replay-batch.ts';

export interface KafkaReplaySettings {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly maxWaitMs: number;
  readonly maxBytesPerPartition: number;
  /** The log's running replay workers (terminated when it closes). */
  readonly workers: Set<Worker>;
}

/**
 * A LogConsumer (ephemeral: no group) that reads the records present at subscribe time in a worker
 * thread (kafka-replay-worker.ts: kafkajs fetching and decoding on the second core, batches posted
 * as one string each, replay-batch.ts), then follows the log live in this thread with `follow`, a
 * consumer started at the offset after the last record the worker delivered on each partition: every
 * record once, in order per partition. A replay of a long log spent about half of its main-thread
 * time in kafkajs (each fetch copied, each record's offset and timestamp through a 64-bit integer
 * class, its buffers sliced, then decoded to text); the main thread now only slices strings.
 */
export function createKafkaReplayConsumer(
  consume: ConsumeOptions,
  settings: KafkaReplaySettings,
  follow: (seek: readonly RecordPosition[]) => LogConsumer,
): LogConsumer {
  let live: LogConsumer | undefined;
  let stop: (() => void) | undefined;
  let closed = false;
  const records$ = new Observable<LogRecord>((subscriber) => {
    const queue = createBatchQueue<LogRecord>((record) => subscriber.next(record));
    const workerData: KafkaReplayWorkerData = {
      brokers: settings.brokers,
      clientId: settings.clientId,
      topics: consume.topics,
      seek: (consume.seek ?? []).map(({ topic, partition, offset }) => ({ topic, partition, offset: offset.toString() })),
      maxWaitMs: settings.maxWaitMs,
      maxBytesPerPartition: settings.maxBytesPerPartition,
      windowBatches: 4,
    };
    const worker = new Worker(new URL('./kafka-replay-worker.ts', import.meta.url), { workerData });
    settings.workers.add(worker);
    let handedOver = false;
    let following: Subscription | undefined;
    const fail = (message: string) => {
      if (!subscriber.closed) subscriber.error(new FlashlogError('LOG_REPLAY_FAILED', `kafka replay worker: ${message}`));
    };
    worker.on('message', (message: ReplayMessage) => {
      if (subscriber.closed) return;
      if (message.type === 'batch') {
        void queue.push(decodeReplayBatch(message)).then(() => worker.postMessage('ack'));
      } else if (message.type === 'done') {
        handedOver = true;
        const seek = message.positions.map(({ topic, partition, offset }) => ({ topic, partition, offset: BigInt(offset) }));
        live = follow(seek);
        // Behind the replay's batches still queued: the same queue keeps the order.
        following = live.records$.subscribe({
          next: (record) => void queue.push([record]),
          error: (error: unknown) => subscriber.error(error),
          complete: () => subscriber.complete(),
        });
      } else fail(message.message);
    });
    worker.on('error', (error: Error) => fail(error.message));
    worker.on('exit', (code) => {
      settings.workers.delete(worker);
      if (!handedOver && !closed) fail(`exited with code ${code} before the replay was done`);
    });
    stop = () => subscriber.complete();
    return () => {
      queue.clear();
      following?.unsubscribe();
      if (!handedOver) void worker.terminate();
    };
  });
  return {
    records$,
    // Ephemeral: nothing to commit (a consumer with a group reads in this thread, kafka-consumer.ts).
    commit: async () => {},
    async close() {
      closed = true;
      stop?.();
      await live?.close();
    },
  };
}
