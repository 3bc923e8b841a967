import type { Subscription } from 'rxjs';
import { errorMessage } from '../../errors.ts';
import { readLatestByKey } from '../../log/latest-by-key.ts';
import type { Log, LogConsumer, LogRecord } from '../../log/port.ts';
import { topics } from '../../records/topics.ts';
import type { Logger } from '../../obs/logger.ts';
import { counter, gauge, type Registry } from '../../obs/metrics.ts';
import { createCommitChain } from './commit-chain.ts';
import { createCommitWindow } from './commit-window.ts';
import type { ProveOutcome } from './host-client.ts';
import { createProofReplies, replyValue } from './proof-replies.ts';
import { createReplyProducer } from './reply-producer.ts';
import { readRequestRecord } from './request-record.ts';
import { retryUntilAborted } from './retry.ts';
import { createSlots } from './slots.ts';

/**
 * The proof bridge (`flashlog prover-bridge`, wired by streams/prover-bridge.ts):
 *
 *   flashlog.proofs.requests (consumer group) -> read request -> reply (stored | joined | prove via the host)
 *        -> produce to the request's reply topic, keyed by request id -> commit up to the first unfinished record
 *
 * - A long proof never blocks the consumer: records are taken off the log as they arrive (the
 *   Kafka adapter's eachBatch returns at once, so heartbeats go on), proofs run with bounded
 *   concurrency (slots.ts), and offsets are committed per partition only up to the
 *   first unfinished record (commit-window.ts, in order: commit-chain.ts).
 * - A request id gets one reply value for good (proof-replies.ts): replies are
 *   remembered, and re-read from the reply topic at start.
 */
export interface ProofBridgeOptions {
  readonly log: Log;
  readonly prove: (request: unknown, signal: AbortSignal) => Promise<ProveOutcome>;
  readonly group: string;
  readonly concurrency: number;
  readonly requestTopic?: string;
  /** The default reply topic, re-read at start to recover stored replies. */
  readonly replyTopic?: string;
  readonly logger?: Logger;
  readonly metrics?: Registry;
  /** Delay before retrying a reply the log refused. */
  readonly retryMs?: number;
  /** Delay before answering a request record again after its handling failed (default 1 s). */
  readonly failureRetryMs?: number;
  /** Replies kept in memory for redelivered ids, oldest dropped first (default 10,000). */
  readonly maxStoredReplies?: number;
}

export interface ProofBridge {
  /** Loads stored replies, then starts consuming. Resolves once consuming has started. */
  start(): Promise<void>;
  /** Stops consuming and abandons proofs in flight (their requests stay uncommitted). */
  stop(): Promise<void>;
  /** Resolves when the request stream ends or fails. */
  readonly done: Promise<void>;
  /** `taken` counts request records received from the log, redeliveries included. */
  stats(): { stored: number; inFlight: number; queued: number; taken: number };
}

export function createProofBridge(options: ProofBridgeOptions): ProofBridge {
  const { log, logger, metrics } = options;
  const requestTopic = options.requestTopic ?? topics.proofRequests;
  const replyTopic = options.replyTopic ?? topics.proofReplies;
  const outcomes =
    metrics &&
    counter(metrics, 'flashlog_prover_bridge_requests_total', 'proof requests handled, by outcome (proved, error, replayed, invalid)', [
      'outcome',
    ]);
  const committedGauge =
    metrics && gauge(metrics, 'flashlog_prover_bridge_committed_offset', 'next request offset committed, per partition', ['partition']);
  const controller = new AbortController();
  const replies = createProofReplies({
    prove: options.prove,
    signal: controller.signal,
    maxStored: options.maxStoredReplies ?? 10_000,
    metrics,
  });
  const replyLog = createReplyProducer({ log, replyTopic, retryMs: options.retryMs ?? 200, signal: controller.signal, logger });
  const window = createCommitWindow();
  const slots = createSlots(options.concurrency);
  const work = new Set<Promise<void>>();
  let taken = 0;
  let consumer: LogConsumer | undefined;
  let subscription: Subscription | undefined;
  const commits = createCommitChain({
    commit: (partition, offset) => consumer?.commit([{ topic: requestTopic, partition, offset }]) ?? Promise.resolve(),
    committed: (partition, offset) => committedGauge?.set({ partition: String(partition) }, Number(offset)),
    failed: (error, partition, offset) =>
      logger?.warn(
        { err: errorMessage(error), partition, offset: Number(offset) },
        'commit failed (the records will be redelivered and replayed)',
      ),
  });
  let resolveDone!: () => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined);

  /** Answers one request record; true once its reply is on the log (or it has nobody to answer). */
  async function handle(record: LogRecord): Promise<boolean> {
    const read = readRequestRecord(record.value, record.key);
    if (!read.ok) {
      const { requestId, message } = read;
      outcomes?.inc({ outcome: 'invalid' });
      logger?.warn({ offset: Number(record.offset), partition: record.partition, requestId, error: message }, 'invalid proof request');
      if (!requestId) return true;
      const value = replies.stored(requestId) ?? replyValue(requestId, { error: { code: -32602, message } }, 0);
      replies.remember(requestId, value);
      return replyLog.produce(replyTopic, requestId, value);
    }
    const { requestId, replyTopic: topic, request } = read.record;
    if (!(await replyLog.topicExists(topic))) {
      const message = `request record.replyTopic: topic "${topic}" does not exist`;
      outcomes?.inc({ outcome: 'invalid' });
      logger?.warn({ requestId, error: message }, 'invalid proof request');
      return replyLog.produce(replyTopic, requestId, replyValue(requestId, { error: { code: -32602, message } }, 0));
    }
    const { value, kind } = replies.replyFor(requestId, request);
    const text = await value;
    if (text === undefined) return false;
    const ok = await replyLog.produce(topic, requestId, text);
    if (ok) {
      const outcome = kind === 'new' ? ((JSON.parse(text) as { error?: unknown }).error ? 'error' : 'proved') : 'replayed';
      outcomes?.inc({ outcome });
      logger?.info({ requestId, outcome, kind, claimed: request.claimed_l2_block_number, replyTopic: topic }, 'proof reply produced');
    }
    return ok;
  }

  function take(record: LogRecord): void {
    taken++;
    const entry = window.take(record.partition, record.offset);
    const job = (async () => {
      await slots.acquire();
      try {
        const finished = await retryUntilAborted(() => handle(record), {
          signal: controller.signal,
          delayMs: options.failureRetryMs ?? 1000,
          onError: (error) =>
            logger?.error({ err: errorMessage(error), offset: Number(record.offset) }, 'proof request failed unexpectedly; retrying'),
        });
        if (finished) {
          const next = window.finish(entry);
          if (next !== undefined && consumer) commits.commit(record.partition, next);
        }
      } finally {
        slots.release();
      }
    })();
    work.add(job);
    void job.finally(() => work.delete(job));
  }

  return {
    done,
    async start() {
      for (const [id, value] of await readLatestByKey(log, replyTopic)) replies.remember(id, value);
      logger?.info({ stored: replies.size, replyTopic }, 'stored proof replies loaded');
      consumer = log.consumer({ topics: [requestTopic], group: options.group, from: 'earliest' });
      subscription = consumer.records$.subscribe({
        next: take,
        error: (error: unknown) => rejectDone(error),
        complete: () => resolveDone(),
      });
    },
    async stop() {
      controller.abort();
      subscription?.unsubscribe();
      slots.wakeAll();
      await Promise.allSettled([...work]);
      await commits.settled();
      await consumer?.close();
      resolveDone();
    },
    stats: () => ({ stored: replies.size, inFlight: replies.inFlight, queued: slots.waiting, taken }),
  };
}
