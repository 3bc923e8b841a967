import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { managed, report, stopAll, type Managed } from './harness.ts';

/**
 * Issue 16: every long-running command started with its default ports, side by side on one
 * machine, as a newcomer would after reading the README (`devnet` in one terminal, `run` against
 * it in another, the proof path's "Try it" block), and each one's Prometheus metrics scraped where
 * the README says they are. It lives in the chaos suite because that suite runs one file at a time:
 * fixed ports must not meet another test's servers. Only the data directory is not a default (a
 * temporary one, instead of ./data in the checkout).
 */
const dataDir = mkdtempSync(join(tmpdir(), 'flashlog-default-ports-'));
const env = { FLASHLOG_DATA_DIR: dataDir };

/** Where each command serves /metrics with its defaults, and a metric only that command exports. */
const expected = [
  { command: 'devnet', url: 'http://127.0.0.1:8545/metrics', metric: 'flashlog_devnet_flashblocks_total' },
  { command: 'run', url: 'http://127.0.0.1:8547/metrics', metric: 'flashlog_ingest_accepted_total' },
  { command: 'serve', url: 'http://127.0.0.1:8548/metrics', metric: 'flashlog_view_records_total' },
  { command: 'ingest', url: 'http://127.0.0.1:9464/metrics', metric: 'flashlog_ingest_frames_total' },
  { command: 'enclave', url: 'http://127.0.0.1:9465/metrics', metric: 'flashlog_process_cpu_seconds_total' },
  { command: 'prover-bridge', url: 'http://127.0.0.1:9466/metrics', metric: 'flashlog_prover_bridge_in_flight' },
  { command: 'prover-host', url: 'http://127.0.0.1:7300/metrics', metric: 'flashlog_prover_host_healthy' },
] as const;
const ports = [8545, 7111, 8547, 8548, 9464, 9465, 9466, 8000, 7300];

async function inUse(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

afterAll(async () => {
  await stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('commands started with their defaults', () => {
  it('run side by side, each serving /metrics', async () => {
    report({
      scenario: '10 default ports',
      load: 'devnet defaults',
      faults: 'none: seven commands with default ports on one machine',
      lost: '-',
      duplicates: '-',
      recoveryMs: '-',
      rssBeforeMiB: '-',
      rssAfterMiB: '-',
    });
    const taken = [];
    for (const port of ports) if (await inUse(port)) taken.push(port);
    expect(taken, 'ports this test needs free (something else on this machine holds them)').toEqual([]);

    const started: Managed[] = [];
    const devnet = managed(['devnet'], env);
    started.push(devnet);
    await devnet.current.waitFor((line) => line.msg === 'devnet started', 60_000);
    const run = managed(['run', '--ws', 'ws://127.0.0.1:7111', '--rpc', 'http://127.0.0.1:8545'], env);
    const serve = managed(['serve', '--ws', 'ws://127.0.0.1:7111', '--rpc', 'http://127.0.0.1:8545'], env);
    const ingest = managed(['ingest', '--ws', 'ws://127.0.0.1:7111', '--rpc', 'http://127.0.0.1:8545', '--executor', 'metadata'], env);
    const enclave = managed(['enclave'], env);
    await enclave.current.waitFor((line) => line.msg === 'enclave listening', 30_000);
    // The README's "Try it (local mode)" prover-host and prover-bridge lines (the L1 devnet on 8546
    // is not started here: the host reads L1 only for a proof).
    const host = managed(
      ['prover-host', '--l1-rpc', 'http://127.0.0.1:8546', '--l2-rpc', 'http://127.0.0.1:8545', '--enclave', 'tcp://127.0.0.1:8000'],
      env,
    );
    const bridge = managed(['prover-bridge', '--prover-url', 'http://127.0.0.1:7300'], env);
    await Promise.all([
      run.current.waitFor((line) => line.msg === 'gateway listening', 60_000),
      serve.current.waitFor((line) => line.msg === 'gateway listening', 60_000),
      ingest.current.waitFor((line) => line.msg === 'ingest started', 60_000),
      host.current.waitFor((line) => line.msg === 'prover host listening', 60_000),
      bridge.current.waitFor((line) => line.msg === 'prover bridge consuming', 60_000),
    ]);
    const scraped: Record<string, boolean> = {};
    for (const { command, url, metric } of expected) {
      const response = await fetch(url);
      const text = await response.text();
      scraped[command] = response.status === 200 && text.includes(`\n# TYPE ${metric} `);
    }
    expect(scraped).toEqual(Object.fromEntries(expected.map(({ command }) => [command, true])));
    for (const proc of [devnet, run, serve, ingest, enclave, host, bridge])
      expect(proc.current.child.exitCode, proc.current.child.spawnargs.join(' ')).toBeNull();
  });
});
