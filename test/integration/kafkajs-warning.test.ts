import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * Node warns about a negative timeout once per process, so each case runs in a process of its own:
 * kafkajs's real request queue (whose throttle check computes the negative delay), with and
 * without the filter, and a negative timeout of another origin.
 */
const filter = new URL('../../src/obs/warnings.ts', import.meta.url).href;
const kafkajsThrottleCheck = `
  const RequestQueue = createRequire(${JSON.stringify(import.meta.url)})('kafkajs/src/network/requestQueue/index.js');
  const queue = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 1000, clientId: 't', broker: 'b', logger: { debug() {} } });
  queue.scheduleCheckPendingRequests();
  clearTimeout(queue.throttleCheckTimeoutId);`;

function stderrOf(withFilter: boolean, body: string): string {
  const script = `
    import { createRequire } from 'node:module';
    import { ignoreKafkajsNegativeTimeoutWarning } from ${JSON.stringify(filter)};
    if (${withFilter}) ignoreKafkajsNegativeTimeoutWarning();
    ${body}
    await new Promise((resolve) => setTimeout(resolve, 20));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stderr;
}

describe('ignoreKafkajsNegativeTimeoutWarning', () => {
  it("without it, kafkajs's request queue makes Node print TimeoutNegativeWarning (the cause)", () => {
    expect(stderrOf(false, kafkajsThrottleCheck)).toContain('TimeoutNegativeWarning');
  });

  it('with it, that warning is not printed', () => {
    expect(stderrOf(true, kafkajsThrottleCheck)).not.toContain('Warning');
  });

  it('a negative timeout of another origin, and other warnings, still print', () => {
    expect(stderrOf(true, 'clearTimeout(setTimeout(() => {}, -5));')).toContain('TimeoutNegativeWarning');
    expect(stderrOf(true, "process.emitWarning('something else', 'ExperimentalWarning');")).toContain(
      'ExperimentalWarning: something else',
    );
  });
});
