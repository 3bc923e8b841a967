/**
 * Per-client token buckets: `ratePerSecond` tokens a second, bursts up to one second's worth.
 * Buckets idle for a minute are forgotten. The gateway takes one token per JSON-RPC call, on every
 * transport and inside batches (gateway/dispatch.ts).
 */
export interface RateLimiter {
  /** Takes `cost` tokens for `client`; false when it has not enough. */
  take(client: string, cost: number, nowMs?: number): boolean;
}

/** `now` is the clock (milliseconds) when `take` is given no time; tests stop it to count tokens exactly. */
export function createRateLimiter(ratePerSecond: number, now: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; atMs: number }>();
  let sweptAtMs = 0;
  return {
    take(client, cost, nowMs = now()) {
      if (nowMs - sweptAtMs > 60_000) {
        for (const [key, bucket] of buckets) if (nowMs - bucket.atMs > 60_000) buckets.delete(key);
        sweptAtMs = nowMs;
      }
      const bucket = buckets.get(client) ?? { tokens: ratePerSecond, atMs: nowMs };
      bucket.tokens = Math.min(ratePerSecond, bucket.tokens + ((nowMs - bucket.atMs) / 1000) * ratePerSecond);
      bucket.atMs = nowMs;
      buckets.set(client, bucket);
      if (bucket.tokens < cost) return false;
      bucket.tokens -= cost;
      return true;
    },
  };
}
