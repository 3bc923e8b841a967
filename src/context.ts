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
  register(name: string, close: () => Promise<void> | void): void;
  run(reason?: string): Promise<void>;
}

export function createShutdown(logger?: Logger): Shutdown {
  const controller = new AbortController();
  const closers: { name: string; close: () => Promise<void> | void }[] = [];
  let running: Promise<void> | undefined;
  return {
    signal: controller.signal,
    register(name, close) {
      closers.push({ name, close });
    },
    run(reason = 'shutdown') {
      running ??= (async () => {
        controller.abort(reason);
        for (const { name, close } of closers.reverse()) {
          try {
            logger?.debug({ resource: name }, 'closing');
            await close();
          } catch (error) {
            logger?.warn({ err: error, resource: name }, 'error while closing');
          }
        }
      })();
      return running;
    },
  };
}
