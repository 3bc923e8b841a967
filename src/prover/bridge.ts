import { firstValueFrom, filter, scan, takeWhile, last, defaultIfEmpty, type Subscription } from 'rxjs';
import { errorMessage } from '../errors.ts';
import type { Log, LogConsumer, LogRecord } from '../log/port.ts';
import { topics } from '../log/topics.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, histogram, type Registry } from '../obs/metrics.ts';
import type { ProveOutcome } from './host-client.ts';
import { describeIssue, proofRequestRecordSchema, type ProofReplyRecord } from './proof-records.ts';

/**
 * The prover bridge: consumes flashlog.proofs.requests in a consumer group, calls the prover host,
 * and produces each outcome (proof or JSON-RPC error) to the request's reply topic, keyed by the
 * request id.
 *
 * - A long proof never blocks the consumer: records are taken off the log as they arrive (the
 *   Kafka adapter's eachBatch returns at once, so heartbeats go on), proofs run with bounded
 *   concurrency, and offsets are committed per partition only up to the first unfinished record.
 * - A request id gets one reply value for good: replies are remembered (and re-read from the reply
 *   topic at start), so a redelivered request id is answered with the stored reply, byte for
 *   byte, and a request id already in flight waits for that proof instead of starting another.
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

/** Reads a topic from its first record to the end offsets seen now: request id -> reply value. */
export async function loadStoredReplies(log: Log, topic: string): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  const ends = await log.endOffsets(topic);
  const remaining = new Map(ends.filter((end) => end.offset > 0n).map((end) => [end.partition, end.offset]));
  if (remaining.size === 0) return stored;
  const consumer = log.consumer({ topics: [topic], from: 'earliest' });
  try {
    await firstValueFrom(
      consumer.records$.pipe(
        scan((left, record: LogRecord) => {
          if (record.key !== null) stored.set(record.key, record.value);
          const end = left.get(record.partition);
          if (end !== undefined && record.offset + 1n >= end) left.delete(record.partition);
          return left;
        }, remaining),
        takeWhile((left) => left.size > 0, true),
        filter((left) => left.size === 0),
        last(),
        defaultIfEmpty(undefined),
      ),
    );
  } finally {
    await consumer.close();
  }
  return stored;
}

export function createProofBridge(options: ProofBridgeOptions): ProofBridge {
  const { log, logger } = options;
  const requestTopic = options.requestTopic ?? topics.proofRequests;
  const replyTopic = options.replyTopic ?? topics.proofReplies;
  const m = options.metrics;
  const outcomes =
    m &&
    counter(m, 'flashlog_prover_bridge_requests_total', 'proof requests handled, by outcome (proved, error, replayed, invalid)', [
      'outcome',
    ]);
  const inFlightGauge = m && gauge(m, 'flashlog_prover_bridge_in_flight', 'proofs being computed');
  const proveSeconds =
    m &&
    histogram(
      m,
      'flashlog_prover_bridge_prove_seconds',
      'time from taking a request to having its outcome',
      [],
      [0.1, 0.5, 1, 5, 30, 120, 600, 1800],
    );
  const committedGauge =
    m && gauge(m, 'flashlog_prover_bridge_committed_offset', 'next request offset committed, per partition', ['partition']);

  const stored = new Map<string, string>();
  const maxStored = options.maxStoredReplies ?? 10_000;
  let taken = 0;
  /** Map insertion order is age: re-inserting keeps the newest last, eviction drops the first. */
  const remember = (requestId: string, value: string) => {
    stored.delete(requestId);
    stored.set(requestId, value);
    while (stored.size > maxStored) stored.delete(stored.keys().next().value!);
  };
  const inFlight = new Map<string, Promise<string | undefined>>();
  const controller = new AbortController();
  /** Per partition, the records taken in offset order and whether each is finished. */
  const pending = new Map<number, { offset: bigint; done: boolean }[]>();
  const waiting: (() => void)[] = [];
  let running = 0;
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
  const work = new Set<Promise<void>>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      controller.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });

  /** Produces until the log takes it; false if the bridge stopped first. */
  async function produceReply(topic: string, requestId: string, value: string): Promise<boolean> {
    let delay = options.retryMs ?? 200;
    while (!controller.signal.aborted) {
      try {
        await log.produce([{ topic, key: requestId, value }]);
        return true;
      } catch (error) {
        logger?.warn({ err: errorMessage(error), requestId, topic }, 'reply not produced; retrying');
        await sleep(delay);
        delay = Math.min(delay * 2, 5000);
      }
    }
    return false;
  }

  const replyValue = (requestId: string, outcome: ProveOutcome, proverMs: number): string => {
    const reply: ProofReplyRecord =
      'error' in outcome
        ? { v: 1, requestId, repliedAt: Date.now(), proverMs, error: outcome.error }
        : { v: 1, requestId, repliedAt: Date.now(), proverMs, result: outcome.result as never };
    return JSON.stringify(reply);
  };

  /** The one reply value of a request id: stored, in flight, or computed now. */
  function replyFor(requestId: string, request: unknown): { value: Promise<string | undefined>; kind: 'replayed' | 'joined' | 'new' } {
    const known = stored.get(requestId);
    if (known !== undefined) return { value: Promise.resolve(known), kind: 'replayed' };
    const joined = inFlight.get(requestId);
    if (joined) return { value: joined, kind: 'joined' };
    const value = (async () => {
      const started = performance.now();
      inFlightGauge?.inc();
      try {
        const outcome = await options
          .prove(request, controller.signal)
          .catch((error: unknown): ProveOutcome => ({ error: { code: -32603, message: `prover call failed: ${errorMessage(error)}` } }));
        if (controller.signal.aborted) return undefined; // our own shutdown: no reply, redelivered later
        const ms = Math.round(performance.now() - started);
        proveSeconds?.observe(ms / 1000);
        const text = replyValue(requestId, outcome, ms);
        remember(requestId, text);
        return text;
      } finally {
        inFlightGauge?.dec();
        inFlight.delete(requestId);
      }
    })();
    inFlight.set(requestId, value);
    return { value, kind: 'new' };
  }

  /** Topics known to exist; a reply to a topic that does not exist would be retried forever. */
  const knownTopics = new Set<string>([replyTopic]);
  const topicExists = async (topic: string): Promise<boolean> => {
    if (knownTopics.has(topic)) return true;
    for (const name of await log.listTopics()) knownTopics.add(name);
    return knownTopics.has(topic);
  };

  async function handle(record: LogRecord): Promise<boolean> {
    let json: unknown;
    try {
      json = JSON.parse(record.value);
    } catch {
      json = undefined;
    }
    const parsed = proofRequestRecordSchema.safeParse(json);
    if (!parsed.success) {
      const requestId =
        (json && typeof json === 'object' && typeof (json as { requestId?: unknown }).requestId === 'string'
          ? (json as { requestId: string }).requestId
          : undefined) ??
        record.key ??
        undefined;
      const message = json === undefined ? 'request record: not JSON' : describeIssue(parsed.error, 'request record');
      outcomes?.inc({ outcome: 'invalid' });
      logger?.warn({ offset: Number(record.offset), partition: record.partition, requestId, error: message }, 'invalid proof request');
      if (!requestId) return true;
      const value = stored.get(requestId) ?? replyValue(requestId, { error: { code: -32602, message } }, 0);
      remember(requestId, value);
      return produceReply(replyTopic, requestId, value);
    }
    const { requestId, replyTopic: topic, request } = parsed.data;
    if (!(await topicExists(topic))) {
      const message = `request record.replyTopic: topic "${topic}" does not exist`;
      outcomes?.inc({ outcome: 'invalid' });
      logger?.warn({ requestId, error: message }, 'invalid proof request');
      return produceReply(replyTopic, requestId, replyValue(requestId, { error: { code: -32602, message } }, 0));
    }
    const { value, kind } = replyFor(requestId, request);
    const text = await value;
    if (text === undefined) return false;
    const ok = await produceReply(topic, requestId, text);
    if (ok) {
      const outcome = kind === 'new' ? ((JSON.parse(text) as { error?: unknown }).error ? 'error' : 'proved') : 'replayed';
      outcomes?.inc({ outcome });
      logger?.info({ requestId, outcome, kind, claimed: request.claimed_l2_block_number, replyTopic: topic }, 'proof reply produced');
    }
    return ok;
  }

  function commitFinished(partition: number): void {
    const list = pending.get(partition);
    if (!list) return;
    let next: bigint | undefined;
    while (list.length > 0 && list[0]!.done) next = list.shift()!.offset + 1n;
    if (next === undefined || !consumer) return;
    const position = { topic: requestTopic, partition, offset: next };
    const target = consumer;
    commitChain = commitChain
      .then(() => target.commit([position]))
      .then(
        () => {
          committedGauge?.set({ partition: String(partition) }, Number(position.offset));
        },
        (error: unknown) => {
          logger?.warn(
            { err: errorMessage(error), partition, offset: Number(position.offset) },
            'commit failed (the records will be redelivered and replayed)',
          );
        },
      );
  }

  function take(record: LogRecord): void {
    taken++;
    const entry = { offset: record.offset, done: false };
    let list = pending.get(record.partition);
    if (!list) pending.set(record.partition, (list = []));
    list.push(entry);
    const job = (async () => {
      if (running >= options.concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
      running++;
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
            await sleep(1000);
          }
        }
        if (finished) {
          entry.done = true;
          commitFinished(record.partition);
        }
      } finally {
        running--;
        waiting.shift()?.();
      }
    })();
    work.add(job);
    void job.finally(() => work.delete(job));
  }

  return {
    done,
    async start() {
      for (const [id, value] of await loadStoredReplies(log, replyTopic)) remember(id, value);
      logger?.info({ stored: stored.size, replyTopic }, 'stored proof replies loaded');
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
      for (const wake of waiting.splice(0)) wake();
      await Promise.allSettled([...work]);
      await commitChain;
      await consumer?.close();
      resolveDone();
    },
    stats: () => ({ stored: stored.size, inFlight: inFlight.size, queued: waiting.length, taken }),
  };
}
