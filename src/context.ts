import type { Config } from './config/settings.ts';
import type { Logger } from './obs/logger.ts';
import type { Registry } from './obs/metrics.ts';

/**
 * The one explicit context passed down to every stage. Nothing else reads the environment or
 * reaches for globals.
 */
export interface Context {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly shutdown: Shutdown;
}

/** Resources register a close function; shutdown runs them in reverse order, once. */
export interface Shutdown {
  readonly signal: AbortSignal;
  /**
   * `timeoutMs`: shutdown waits that long at most for this close, then logs one line and goes on
   * to the next (a close that waits on work that never ends must not keep the process alive).
   */
  register(name: string, close: () => Promise<void> | void, options?: { readonly timeoutMs?: number }): void;
  run(reason?: string): Promise<void>;
}

export function createShutdown(logger?: Logger): Shutdown {
  const controller = new AbortController();
  const closers: { name: string; close: () => Promise<void> | void; timeoutMs: number | undefined }[] = [];
  let running: Promise<void> | undefined;
  return {
    signal: controller.signal,
    register(name, close, options) {
      closers.push({ name, close, timeoutMs: options?.timeoutMs });
    },
    run(reason = 'shutdown') {
      running ??= (async () => {
        controller.abort(reason);
        for (const { name, close, timeoutMs } of closers.reverse()) {
          try {
            logger?.debug({ resource: name }, 'closing');
            const closing = Promise.resolve().then(close);
            if (timeoutMs === undefined) await closing;
            else
              await drainWithin(closing, {
                signal: controller.signal,
                timeoutMs,
                onAbandoned: () => logger?.warn({ resource: name, timeoutMs }, 'shutdown: closing did not finish in time; going on'),
              });
          } catch (error) {
            logger?.warn({ err: error, resource: name }, 'error while closing');
          }
        }
      })();
      return running;
    },
  };
}

/**
 * Waits for `work` (what a stage still has in flight when shutdown starts), but no longer than
 * `timeoutMs` after `signal` aborts: then resolves anyway and calls `onAbandoned` once. Before the
 * abort it waits as long as `work` runs. A rejection of `work` passes through.
 * @example await drainWithin(ingest.run(), { signal: ctx.shutdown.signal, timeoutMs: 5000, onAbandoned: () => logger.warn('...') });
 */
export function drainWithin(
  work: Promise<void>,
  options: { readonly signal: AbortSignal; readonly timeoutMs: number; readonly onAbandoned: () => void },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const startTimer = () => {
      timer = setTimeout(() => {
        options.signal.removeEventListener('abort', startTimer);
        options.onAbandoned();
        resolve();
      }, options.timeoutMs);
    };
    const settle = () => {
      if (timer) clearTimeout(timer);
      options.signal.removeEventListener('abort', startTimer);
    };
    work.then(
      () => {
        settle();
        resolve();
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
    if (options.signal.aborted) startTimer();
    else options.signal.addEventListener('abort', startTimer, { once: true });
  });
}
