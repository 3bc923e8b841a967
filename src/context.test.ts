import { describe, expect, it } from 'vitest';
import { createShutdown, drainWithin } from './context.ts';
import { createLogger } from './obs/logger.ts';

const never = new Promise<void>(() => {});
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    name: 'test',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) } as never,
  });
  return { logger, lines };
}

describe('shutdown', () => {
  it('goes on past a close given timeoutMs that never finishes, with one log line, and runs the closes registered before it', async () => {
    const { logger, lines } = capturingLogger();
    const shutdown = createShutdown(logger);
    const closed: string[] = [];
    shutdown.register('log', () => {
      closed.push('log');
    });
    shutdown.register('execution', () => never, { timeoutMs: 20 });
    await shutdown.run('SIGTERM'); // without the bound, this never resolves
    expect(closed).toEqual(['log']);
    expect(lines.filter((line) => line.msg === 'shutdown: closing did not finish in time; going on')).toEqual([
      expect.objectContaining({ resource: 'execution', timeoutMs: 20 }),
    ]);
  });
});

describe('drainWithin', () => {
  it('waits for the work as long as shutdown has not started, then at most timeoutMs', async () => {
    const controller = new AbortController();
    let abandoned = 0;
    let release!: () => void;
    const work = new Promise<void>((resolve) => (release = resolve));
    let settled = false;
    const drained = drainWithin(work, { signal: controller.signal, timeoutMs: 1, onAbandoned: () => abandoned++ }).then(
      () => (settled = true),
    );
    await sleep(30);
    expect(settled).toBe(false); // no abort yet: the bound does not apply
    release();
    await drained;
    expect(abandoned).toBe(0);

    const stuck = drainWithin(never, { signal: controller.signal, timeoutMs: 10, onAbandoned: () => abandoned++ });
    controller.abort();
    await stuck;
    expect(abandoned).toBe(1);
  });

  it('passes a rejection of the work through', async () => {
    const failed = drainWithin(Promise.reject(new Error('append failed')), {
      signal: new AbortController().signal,
      timeoutMs: 10,
      onAbandoned: () => {},
    });
    await expect(failed).rejects.toThrow('append failed');
  });
});
