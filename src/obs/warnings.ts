/**
 * kafkajs 2.2.4 (the newest release) schedules its request queue's throttle check at
 * `throttledUntil - Date.now()` with `throttledUntil` starting at -1, i.e. a large negative delay,
 * on every broker answer. Node 24 warns about each (`TimeoutNegativeWarning: -17957… is a negative
 * number`) and uses 1 ms, which is what kafkajs meant (tulios/kafkajs#1751; the fix, #1768, is
 * unreleased). This drops exactly that warning: a `TimeoutNegativeWarning` raised from kafkajs's
 * request queue. Any other warning, and a negative timeout anywhere else, is still printed.
 *
 * Call once at process start (the CLI does); returns a function that restores `emitWarning`.
 */
export function ignoreKafkajsNegativeTimeoutWarning(proc: NodeJS.Process = process): () => void {
  const original = proc.emitWarning;
  const filtered = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const first = rest[0];
    const type =
      typeof first === 'string' ? first : typeof first === 'object' && first !== null ? (first as { type?: unknown }).type : undefined;
    const name = warning instanceof Error ? warning.name : type;
    if (name === 'TimeoutNegativeWarning' && /kafkajs[\\/]src[\\/]network[\\/]requestQueue/.test(new Error().stack ?? '')) return;
    (original as (...args: unknown[]) => void).call(this, warning, ...rest);
  };
  proc.emitWarning = filtered as NodeJS.Process['emitWarning'];
  return () => {
    if (proc.emitWarning === (filtered as unknown)) proc.emitWarning = original;
  };
}
