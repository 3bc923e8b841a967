import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { eventually, tempDir } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * Issue 16: the Grafana dashboard (infra/grafana/dashboards/flashlog.json) queries only metrics a
 * running flashlog exports. Real commands: a devnet, `run` against it (ingest, local executor,
 * reconciliation, view, gateway), `prover-host` and `prover-bridge`; every metric name in every
 * query and variable of the dashboard must be in their /metrics. Also: compose.yaml starts
 * Prometheus with infra/prometheus/prometheus.yml and Grafana with the dashboard.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const dashboardText = readFileSync(`${root}infra/grafana/dashboards/flashlog.json`, 'utf8');
const processes: FlashlogProcess[] = [];
const dir = tempDir();

afterAll(async () => {
  await Promise.all(processes.map((proc) => proc.stop()));
  dir.remove();
});

/** Every metric name a scrape exports, histogram and summary series included. */
async function exported(url: string): Promise<Set<string>> {
  const response = await fetch(url);
  expect(response.status, url).toBe(200);
  const names = new Set<string>();
  for (const match of (await response.text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

function start(args: string[]): FlashlogProcess {
  const proc = spawnFlashlog(args, { FLASHLOG_LOG_LEVEL: 'info' });
  processes.push(proc);
  return proc;
}

describe('the Grafana dashboard', () => {
  it('queries only metrics that running flashlog commands export', async () => {
    const queried = new Set(dashboardText.match(/flashlog_[a-z0-9_]+/g) ?? []);
    expect(queried.size).toBeGreaterThan(30);

    const devnet = start(['devnet', '--devnet-port', '0', '--devnet-ws-port', '0', '--block-time-ms', '1000']);
    const devnetLine = await devnet.waitFor((line) => line.msg === 'devnet started', 60_000);
    const rpc = String(devnetLine.rpc);
    const run = start(['run', '--ws', String(devnetLine.ws), '--rpc', rpc, '--port', '0', '--data-dir', dir.path]);
    const host = start(['prover-host', '--l1-rpc', rpc, '--l2-rpc', rpc, '--enclave', 'tcp://127.0.0.1:1', '--port', '0']);
    const bridge = start(['prover-bridge', '--data-dir', dir.path, '--prover-url', 'http://127.0.0.1:1', '--metrics-port', '0']);
    const [gateway, prover, bridgeMetrics] = await Promise.all([
      run.waitFor((line) => line.msg === 'gateway listening', 60_000),
      host.waitFor((line) => line.msg === 'prover host listening', 60_000),
      bridge.waitFor((line) => line.msg === 'metrics listening', 60_000),
    ]);
    // One call, so the view and gateway have served something.
    await fetch(String(gateway.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });

    // The executor's metrics appear once `run` has executed its first flashblock (auto picks the
    // executor from the feed): scrape until everything is there, or show what is missing.
    const missing = async () => {
      const names = new Set<string>();
      for (const url of [String(gateway.metrics), String(prover.metrics), String(bridgeMetrics.url), `${rpc}/metrics`]) {
        for (const name of await exported(url)) names.add(name);
      }
      return [...queried].filter((name) => !names.has(name));
    };
    const complete = await eventually(async () => ((await missing()).length === 0 ? true : undefined), 30_000, 'every metric').catch(
      () => false,
    );
    if (!complete) expect(await missing(), 'metrics the dashboard queries that no command exports').toEqual([]);
  }, 120_000);

  it('is started by compose.yaml with Prometheus scraping the compose services', () => {
    const compose = parse(readFileSync(`${root}compose.yaml`, 'utf8')) as {
      services: Record<string, { volumes?: string[]; environment?: Record<string, string> }>;
    };
    expect(compose.services.prometheus?.volumes).toContain('./infra/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(compose.services.grafana?.volumes).toEqual(
      expect.arrayContaining([
        './infra/grafana/provisioning:/etc/grafana/provisioning:ro',
        './infra/grafana/dashboards:/var/lib/grafana/dashboards:ro',
      ]),
    );
    const prometheus = parse(readFileSync(`${root}infra/prometheus/prometheus.yml`, 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = prometheus.scrape_configs.flatMap((job) => job.static_configs.flatMap((config) => config.targets));
    // The compose services' metrics: ingest on its metrics port, serve on its gateway port.
    expect(targets).toEqual(expect.arrayContaining(['ingest:9464', 'serve:8548']));
    const datasource = parse(readFileSync(`${root}infra/grafana/provisioning/datasources/prometheus.yaml`, 'utf8')) as {
      datasources: { uid: string; url: string }[];
    };
    expect(datasource.datasources[0]).toMatchObject({ uid: 'prometheus', url: 'http://prometheus:9090' });
  });
});
