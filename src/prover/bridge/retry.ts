import { abortableSleep } from './slots.ts';

/**
 * Runs `work` until it resolves, waiting `delayMs` after each failure (told to `onError`), or until
 * `signal` aborts; resolves with what it resolved with, or undefined when the signal aborted first.
 * The bridge answers a request record this way: giving up on one (the log unreachable for
 * listTopics, say) would leave it unfinished and hold back every later commit of its partition.
 * @example await retryUntilAborted(() => handle(record), { signal, delayMs: 1000, onError: (error) => logger.error(error) })
 */
export async function retryUntilAborted<T>(
  work: () => Promise<T>,
  options: { readonly signal: AbortSignal; readonly delayMs: number; readonly onError: (error: unknown) => void },
): Promise<T | undefined> {
  while (!options.signal.aborted) {
    try {
      return await work();
    } catch (error) {
      options.onError(error);
      await abortableSleep(options.delayMs, options.signal);
    }
  }
  return undefined;
}
