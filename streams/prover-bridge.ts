import type { Subscription } from 'rxjs';
import { errorMessage } from '../src/errors.ts';
import { readLatestByKey } from '../src/log/latest-by-key.ts';
import type { Log, LogConsumer, LogRecord } from '../src/log/port.ts';
import { topics } from '../src/records/topics.ts';
import type { Logger } from '../src/obs/logger.ts';
import { counter, gauge, type Registry } from '../src/obs/metrics.ts';
import { createCommitWindow } from '../src/prover/bridge/commit-window.ts';
import { callProverHostWithRetry, type ProveOutcome } from '../src/prover/bridge/host-client.ts';
import { createProofReplies, replyValue } from '../src/prover/bridge/proof-replies.ts';
import { createReplyProducer } from '../src/prover/bridge/reply-producer.ts';
import { readRequestRecord } from '../src/prover/bridge/request-record.ts';
import { abortableSleep, createSlots } from '../src/prover/bridge/slots.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { openChainLog } from '../src/log/open-chain-log.ts';

/**
 * The prover-bridge topology:
 *
 *   flashlog.proofs.requests (consumer group) -> read request -> reply (stored | joined | prove via the host)
 *        -> produce to the request's reply topic, keyed by request id -> commit up to the first unfinished record
 *
 * - A long proof never blocks the consumer: records are taken off the log as they arrive (the
 *   Kafka adapter's eachBatch returns at once, so heartbeats go on), proofs run with bounded
 *   concurrency (src/prover/bridge/slots.ts), and offsets are committed per partition only up to the
 *   first unfinished record (src/prover/bridge/commit-window.ts).
 * - A request id gets one reply value for good (src/prover/bridge/proof-replies.ts): replies are
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
  let commitChain = Promise.resolve();
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

  function commit(partition: number, offset: bigint): void {
    if (!consumer) return;
    const position = { topic: requestTopic, partition, offset };
    const target = consumer;
    commitChain = commitChain
      .then(() => target.commit([position]))
      .then(
        () => {
          committedGauge?.set({ partition: String(partition) }, Number(offset));
        },
        (error: unknown) => {
          logger?.warn(
            { err: errorMessage(error), partition, offset: Number(offset) },
            'commit failed (the records will be redelivered and replayed)',
          );
        },
      );
  }

  function take(record: LogRecord): void {
    taken++;
    const entry = window.take(record.partition, record.offset);
    const job = (async () => {
      await slots.acquire();
      try {
        // A failure here (the log unreachable for listTopics, say) is retried: giving up would
        // leave the record unfinished and hold back every later commit of its partition.
        let finished = false;
        while (!controller.signal.aborted) {
          try {
            finished = await handle(record);
            break;
          } catch (error) {
            logger?.error({ err: errorMessage(error), offset: Number(record.offset) }, 'proof request failed unexpectedly; retrying');
            await abortableSleep(1000, controller.signal);
          }
        }
        if (finished) {
          const next = window.finish(entry);
          if (next !== undefined) commit(record.partition, next);
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
      await commitChain;
      await consumer?.close();
      resolveDone();
    },
    stats: () => ({ stored: replies.size, inFlight: replies.inFlight, queued: slots.waiting, taken }),
  };
}

/**
 * `flashlog prover-bridge`: flashlog.proofs.requests -> prover host -> flashlog.proofs.replies,
 * in a consumer group (default `flashlog-prover-bridge`), with --prover-concurrency proofs at once.
 */
export const proverBridgeCommand: Command = {
  name: 'prover-bridge',
  summary: 'carry proof requests from the log to the prover host and its replies back',
  usage: 'flashlog prover-bridge [--prover-url http://127.0.0.1:7300] [--prover-concurrency 4] [--timeout 1740] [log options]',
  // --rpc: the L2 node whose chain the log must hold (checked, never stamped).
  settings: [...serviceSettings, ...logSettings, 'group', 'proverUrl', 'proverConcurrency', 'timeout', 'rpc', 'rpcTimeoutMs'],
  defaults: { metricsPort: '9466' },
  longRunning: true,
  async run(ctx) {
    const { config, logger } = ctx;
    const log = await openChainLog(ctx, { writer: false, rpcUrl: config.rpc });
    ctx.shutdown.register('log', () => log.close());
    // The host enforces --timeout itself and answers -32000; the HTTP call waits a little longer.
    const httpTimeoutMs = config.timeout * 1000 + 30_000;
    const bridge = createProofBridge({
      log,
      group: config.group ?? 'flashlog-prover-bridge',
      concurrency: config.proverConcurrency,
      prove: (request, signal) => callProverHostWithRetry(config.proverUrl, request, { timeoutMs: httpTimeoutMs, signal }),
      logger,
      metrics: ctx.metrics,
    });
    ctx.shutdown.register('prover-bridge', () => bridge.stop());
    await bridge.start();
    logger.info({ prover: config.proverUrl, concurrency: config.proverConcurrency, log: log.kind }, 'prover bridge consuming');
    const stopped = new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([bridge.done, stopped]);
    } catch (error) {
      logger.error({ err: error }, 'the request stream failed');
      return 1;
    }
    return 0;
  },
};
