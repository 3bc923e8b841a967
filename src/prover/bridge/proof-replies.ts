import { errorMessage } from '../../errors.ts';
import { gauge, histogram, type Registry } from '../../obs/metrics.ts';
import type { ProveOutcome } from './host-client.ts';
import type { ProofReplyRecord } from '../../records/proofs.ts';

/**
 * The one reply value of each request id, for the prover bridge: a reply is remembered once made
 * (and stored replies are loaded at start), so a redelivered request id is answered with the
 * stored reply byte for byte; a request id already being proved joins that proof instead of
 * starting another. The newest `maxStored` replies are kept, the oldest dropped first.
 */
export interface ProofRepliesOptions {
  readonly prove: (request: unknown, signal: AbortSignal) => Promise<ProveOutcome>;
  /** Aborted when the bridge stops: proofs in flight give no reply (the request is redelivered). */
  readonly signal: AbortSignal;
  readonly maxStored: number;
  readonly metrics?: Registry | undefined;
}

export interface ProofReplies {
  /** The reply value for the request: stored, joined (in flight), or new; undefined when stopped first. */
  replyFor(requestId: string, request: unknown): { value: Promise<string | undefined>; kind: 'replayed' | 'joined' | 'new' };
  /** The stored reply of a request id, if any. */
  stored(requestId: string): string | undefined;
  remember(requestId: string, value: string): void;
  readonly size: number;
  readonly inFlight: number;
}

/** A reply record's value: the proof result or the JSON-RPC error, with how long the prover took. */
export function replyValue(requestId: string, outcome: ProveOutcome, proverMs: number): string {
  const reply: ProofReplyRecord =
    'error' in outcome
      ? { v: 1, requestId, repliedAt: Date.now(), proverMs, error: outcome.error }
      : { v: 1, requestId, repliedAt: Date.now(), proverMs, result: outcome.result as never };
  return JSON.stringify(reply);
}

export function createProofReplies(options: ProofRepliesOptions): ProofReplies {
  const m = options.metrics;
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
  const stored = new Map<string, string>();
  const inFlight = new Map<string, Promise<string | undefined>>();
  /** Map insertion order is age: re-inserting keeps the newest last, eviction drops the first. */
  const remember = (requestId: string, value: string) => {
    stored.delete(requestId);
    stored.set(requestId, value);
    while (stored.size > options.maxStored) stored.delete(stored.keys().next().value!);
  };

  function replyFor(requestId: string, request: unknown): ReturnType<ProofReplies['replyFor']> {
    const known = stored.get(requestId);
    if (known !== undefined) return { value: Promise.resolve(known), kind: 'replayed' };
    const joined = inFlight.get(requestId);
    if (joined) return { value: joined, kind: 'joined' };
    const value = (async () => {
      const started = performance.now();
      inFlightGauge?.inc();
      try {
        const outcome = await options
          .prove(request, options.signal)
          .catch((error: unknown): ProveOutcome => ({ error: { code: -32603, message: `prover call failed: ${errorMessage(error)}` } }));
        if (options.signal.aborted) return undefined; // our own shutdown: no reply, redelivered later
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

  return {
    replyFor,
    stored: (requestId) => stored.get(requestId),
    remember,
    get size() {
      return stored.size;
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}
