import type { Logger } from 'pino';

/**
 * A drift-free periodic loop for the devnet's producers: tick n starts at `origin + n × periodMs`
 * (never `periodMs` after the previous tick ended, which would drift by each tick's duration), and
 * ticks never overlap: a tick that overruns its period delays the next one, which then starts at
 * once. The first tick runs at once; `started` settles with it (a failed first tick rejects it and
 * the loop stops). A later tick that fails is logged once and the loop goes on.
 */
export interface TickLoop {
  /** Resolves after the first tick, rejects if it failed. */
  readonly started: Promise<void>;
  /** Stops after the tick in progress. */
  stop(): Promise<void>;
}

export function createTickLoop(periodMs: number, tick: () => Promise<void>, logger: Logger, what = 'tick'): TickLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let loopDone: Promise<void> = Promise.resolve();
  const origin = performance.now();
  let tickCount = 0;

  function schedule(): void {
    if (stopped) return;
    tickCount += 1;
    const delay = Math.max(0, origin + tickCount * periodMs - performance.now());
    timer = setTimeout(() => {
      loopDone = tick().then(schedule, (error: unknown) => {
        logger.error({ err: error }, `devnet: ${what} failed`);
        schedule();
      });
    }, delay);
  }

  const started = tick();
  loopDone = started.then(schedule, () => undefined);
  return {
    started,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await loopDone.catch(() => undefined);
    },
  };
}
