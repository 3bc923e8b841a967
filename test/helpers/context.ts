import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config } from '../../src/config/settings.ts';
import { createShutdown, type Context } from '../../src/context.ts';
import { createLogger } from '../../src/obs/logger.ts';
import { createMetricsRegistry } from '../../src/obs/metrics.ts';

/** A context with the default config (plus overrides), a silent logger and its own registry. */
export function testContext(overrides: Partial<Config> = {}, level = process.env.FLASHLOG_TEST_LOG_LEVEL ?? 'silent'): Context {
  const { config } = parseConfig([], {}, []);
  const logger = createLogger({ level, name: 'test', destination: process.stderr as never });
  // Tests share ./data: a gateway writes its view snapshot only where a test asks for one.
  return {
    config: { ...config, viewSnapshot: 'off', ...overrides },
    logger,
    metrics: createMetricsRegistry({ defaults: false }),
    shutdown: createShutdown(logger),
  };
}

/** A temporary directory removed by the returned function. */
export function tempDir(prefix = 'flashlog-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const kafkaBrokers = (): string[] => (process.env.FLASHLOG_TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** The value of a counter/gauge sample in a registry, 0 when absent. */
export async function metricValue(ctx: Context, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = ctx.metrics.getSingleMetric(name);
  if (!metric) return 0;
  const data = await metric.get();
  return data.values
    .filter((sample) => Object.entries(labels).every(([key, value]) => String(sample.labels[key]) === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}
