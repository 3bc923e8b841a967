import type { Worker } from 'node:worker_threads';
import { Observable, type Subscription } from 'rxjs';
import type { Logger } from '../../obs/logger.ts';
import { createBatchQueue, type BatchQueue } from '../batch-queue.ts';
import type { LogConsumer, LogRecord, RecordPosition } from '../port.ts';
import { decodeReplayBatch, type ReplayAck, type ReplayMessage } from './replay-batch.ts';

/**
 * A LogConsumer (ephemeral: no group) that reads the records present at subscribe time in a worker
 * thread (replay-worker.ts: fetching from the broker and decoding on the second core, each
 * batch posted as one buffer, replay-batch.ts), then follows the log live in this
 * thread with `follow`: a consumer started at the offset after the last record the worker delivered
 * on each partition, so every record comes once, in order per partition. Each batch delivered here
 * is acknowledged, its buffer handed back (ReplayAck), and the worker keeps a bounded number
 * unacknowledged. A worker that fails or ends before it is done costs one warning and nothing
 * else: this thread follows on from the offset after the last batch it took.
 * Why: a replay from Kafka spent about a third of its main-thread time in kafkajs (copying each
 * fetch, decoding each record's offset and timestamp through a 64-bit integer class, slicing its
 * buffers, then UTF-8 to text); here that thread only makes each value's string from the batch.
 */
export function createWorkerReplayConsumer(
  start: () => Worker,
  /** The log's running replay workers (terminated when it closes). */
  workers: Set<Worker>,
  follow: (seek: readonly RecordPosition[]) => LogConsumer,
  options: {
    readonly seek: readonly RecordPosition[];
    readonly logger?: Logger;
    /** Whether the log has closed (its workers are terminated then: the replay just ends). */
    readonly logClosed: () => boolean;
  },
): LogConsumer {
  let live: LogConsumer | undefined;
  let stop: (() => void) | undefined;
  let closed = false;
  let paused = false;
  let queued: BatchQueue<LogRecord> | undefined;
  const records$ = new Observable<LogRecord>((subscriber) => {
    const queue = createBatchQueue<LogRecord>((record) => subscriber.next(record));
    queued = queue;
    if (paused) queue.pause();
    const worker = start();
    workers.add(worker);
    // The next offset per partition after the batches taken from the worker (queued or delivered).
    const taken = new Map(options.seek.map((position) => [`${position.topic}/${position.partition}`, position]));
    let handedOver = false;
    let following: Subscription | undefined;
    const handOver = (seek: readonly RecordPosition[]) => {
      handedOver = true;
      live = follow(seek);
      if (paused) live.pause();
      // Behind the replay's batches still queued: the same queue keeps the order.
      following = live.records$.subscribe({
        next: (record) => void queue.push([record]),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    };
    // A worker that fails (or ends too soon) loses nothing: this thread reads on from where it stopped.
    const fail = (reason: string) => {
      if (handedOver || subscriber.closed || closed) return;
      if (options.logClosed()) {
        subscriber.complete();
        return;
      }
      options.logger?.warn(
        { reason, at: [...taken.values()].map((position) => `${position.topic}/${position.partition}@${position.offset}`) },
        'log replay worker failed; reading on in this thread',
      );
      void worker.terminate();
      handOver([...taken.values()]);
    };
    worker.on('message', (message: ReplayMessage) => {
      if (subscriber.closed || handedOver) return;
      if (message.type === 'batch') {
        const { topic, partition, offsets } = message;
        taken.set(`${topic}/${partition}`, { topic, partition, offset: offsets[offsets.length - 1]! + 1n });
        const buffer = message.values.buffer as ArrayBuffer;
        void queue.push(decodeReplayBatch(message, () => worker.postMessage({ type: 'ack', buffer } satisfies ReplayAck, [buffer])));
      } else if (message.type === 'done') {
        handOver(message.positions.map(({ topic, partition, offset }) => ({ topic, partition, offset: BigInt(offset) })));
      } else fail(message.message);
    });
    worker.on('error', (error: Error) => fail(error.message));
    worker.on('exit', (code) => {
      workers.delete(worker);
      fail(`exited with code ${code} before the replay was done`);
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
    // Ephemeral: nothing to commit (a consumer with a group reads in this thread).
    commit: async () => {},
    // The worker keeps a bounded number of batches unacknowledged, and a batch is acknowledged once
    // delivered: holding the queue holds the worker. The live follower pauses its fetches.
    pause() {
      paused = true;
      queued?.pause();
      live?.pause();
    },
    resume() {
      if (!paused) return;
      paused = false;
      live?.resume();
      queued?.resume();
    },
    async close() {
      closed = true;
      stop?.();
      await live?.close();
    },
  };
}
