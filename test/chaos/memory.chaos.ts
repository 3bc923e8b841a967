import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { sampleProcess, slopePerMinute, type ProcessSample } from '../../scripts/sample-process.ts';
import { managed, report, rpcCall, sleep, stopAll } from './harness.ts';

/**
 * Scenario 9, memory that stays flat (issue 19): `flashlog run --devnet --load 30` (devnet, local
 * executor, view and gateway in one process) for CHAOS_MEMORY_SECONDS (default 180). Resident memory
 * is sampled every 5 s; after a 60 s warm-up, the trend of resident memory (least-squares slope times
 * the time after warm-up) must stay under 60 MB. The trend, not the last sample: the local executor
 * re-forks about once a minute and a fork grows until then, so RSS is a saw-tooth.
 */
const seconds = Number(process.env.CHAOS_MEMORY_SECONDS ?? 180);
const warmUpSeconds = 60;
const limitMiB = 60;

afterAll(stopAll);

describe('scenario 9: memory under load', () => {
  it(`run --devnet --load 30 for ${seconds} s: resident memory after a ${warmUpSeconds} s warm-up grows by less than ${limitMiB} MB`, async () => {
    const dir = tempDir('flashlog-chaos-memory-');
    onTestFinished(() => dir.remove());
    const run = managed(['run', '--devnet', '--load', '30', '--port', '0', '--metrics-port', '0', '--data-dir', dir.path]);
    const metrics = await run.current.waitFor((line) => line.msg === 'metrics listening', 60_000);
    const gateway = await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000);
    await run.current.waitFor((line) => line.msg === 'upstream connected', 60_000);
    const startedAt = Date.now();
    const samples: ProcessSample[] = [];
    while (Date.now() - startedAt < seconds * 1000) {
      const sample = await sampleProcess(run.pid!, String(metrics.url), startedAt);
      if (!sample) throw new Error('run --devnet exited during the scenario');
      samples.push(sample);
      await sleep(5000);
    }
    const pending = await rpcCall<{ transactions: unknown[] } | null>(String(gateway.url), 'eth_getBlockByNumber', ['pending', false]);
    const afterWarmUp = samples.filter((sample) => sample.atS >= warmUpSeconds);
    const slope = slopePerMinute(afterWarmUp, (sample) => sample.rssMiB);
    const minutesAfterWarmUp = (afterWarmUp.at(-1)!.atS - afterWarmUp[0]!.atS) / 60;
    const growthMiB = slope * minutesAfterWarmUp;
    const heapSlope = slopePerMinute(afterWarmUp, (sample) => sample.heapMiB);
    const cpu = (100 * (samples.at(-1)!.cpuS - afterWarmUp[0]!.cpuS)) / (samples.at(-1)!.atS - afterWarmUp[0]!.atS);
    const rss = samples.map((sample) => sample.rssMiB);
    report({
      scenario: '9 memory under load', load: `run --devnet --load 30, ${seconds} s`, faults: 'none (time)', lost: '-', duplicates: '-', recoveryMs: '-',
      rssBeforeMiB: Math.round(afterWarmUp[0]!.rssMiB), rssAfterMiB: Math.round(rss.at(-1)!),
      notes: `RSS trend after warm-up ${growthMiB.toFixed(1)} MB (${slope.toFixed(1)} MB/min), max ${Math.round(Math.max(...rss))} MB; heap ${heapSlope.toFixed(1)} MB/min; CPU ${cpu.toFixed(0)}% of a core`,
    });
    expect(pending, 'the gateway serves a pending block at the end').not.toBeNull();
    expect(growthMiB, `RSS samples (MB): ${rss.map((value) => Math.round(value)).join(' ')}`).toBeLessThan(limitMiB);
  }, (seconds + 60) * 1000);
});
