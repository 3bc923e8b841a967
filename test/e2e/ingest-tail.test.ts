import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { brotli, loadFixture, startFeedServer } from '../helpers/feed-server.ts';
import { eventually, kafkaBrokers, tempDir } from '../helpers/context.ts';

const cli = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function flashlog(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return {
    child,
    exited,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
  };
}

async function tail(
  topic: string,
  logArgs: string[],
): Promise<{ topic: string; key: string; offset: number; value: Record<string, unknown> }[]> {
  const run = flashlog(['tail', topic, '--from-beginning', ...logArgs, '--log-level', 'warn']);
  const code = await run.exited;
  expect(code, run.stderr).toBe(0);
  return run.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as never);
}

const messages = loadFixture('base-sepolia-33439826.json');
const logs: { name: string; args: () => string[] }[] = [
  {
    name: 'embedded',
    args: () => {
      const dir = tempDir();
      cleanups.push(dir.remove);
      return ['--data-dir', dir.path];
    },
  },
  { name: 'kafka', args: () => ['--kafka-brokers', kafkaBrokers().join(','), '--kafka-client-id', `e2e-${randomUUID().slice(0, 8)}`] },
];

describe.each(logs)('flashlog ingest -> $name log -> flashlog tail (child processes)', ({ name, args }) => {
  it('shows every flashblock and every assembled block', async () => {
    const server = await startFeedServer(() => messages.map((message) => ({ send: brotli(JSON.stringify(message)) })));
    cleanups.push(() => server.close());
    const logArgs = args();
    // Kafka keeps topics across runs; count this payload's blocks already there.
    const before =
      name === 'kafka'
        ? (await tail('flashlog.blocks', logArgs).catch(() => [])).filter((record) => record.value.payloadId === '0x03c33cc62b81edb6')
            .length
        : 0;
    const ingest = flashlog(['ingest', '--ws', server.url, ...logArgs, '--metrics-port', '0', '--log-level', 'info']);
    await server.played();
    const blocks = await eventually(
      async () => {
        const records = await tail('flashlog.blocks', logArgs);
        const mine = records.filter((record) => record.value.payloadId === '0x03c33cc62b81edb6');
        return mine.length >= 11 * (before / 11 + 1) ? mine : undefined;
      },
      60_000,
      'the 11 block records of this run',
    );
    // Prometheus metrics of the running ingest.
    const metricsUrl = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(ingest.stdout)?.[1];
    expect(metricsUrl, ingest.stdout).toBeDefined();
    const metrics = await (await fetch(metricsUrl!)).text();
    expect(metrics).toMatch(/flashlog_ingest_accepted_total\{kind="next"\} 10/);
    expect(metrics).toMatch(/flashlog_ingest_accepted_total\{kind="new_block"\} 1/);
    expect(metrics).toContain('flashlog_publish_records_total');
    ingest.child.kill('SIGTERM');
    expect(await ingest.exited).toBe(0);
    expect(ingest.stdout).toContain('"msg":"ingest started"');
    const last = blocks.at(-1)!;
    expect(last.key).toBe('33439826');
    expect(last.value).toMatchObject({
      v: 1,
      blockNumber: '0x1fe4052',
      index: 10,
      header: { gasUsed: '0x49f43c', receiptsRoot: '0xaa280e93aa4a7d3f616ad391404411abbeebe8bc8fb1ed9b3ef4d0a42bf64ccd' },
    });
    expect((last.value.transactions as unknown[]).length).toBe(24);
    // Other tests may share the Kafka topics: keep this run's flashblocks (the last 11 of this payload).
    const flashblocks = (await tail('flashlog.flashblocks', logArgs))
      .filter((record) => record.value.payloadId === '0x03c33cc62b81edb6')
      .slice(-11);
    expect(flashblocks.map((record) => record.value.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(flashblocks[0]!.value.flashblock).toEqual(messages[0]);
  });
});

describe('the CLI refuses bad settings', () => {
  it('exits 2 naming the setting, what it got and what it expects', async () => {
    const bad = flashlog(['ingest', '--ws', 'http://nope'], {});
    expect(await bad.exited).toBe(2);
    expect(bad.stderr).toContain('--ws');
    expect(bad.stderr).toContain('http://nope');
    expect(bad.stderr).toContain('expected ws:// or wss:// URL');
    const badEnv = flashlog(['ingest', '--ws', 'ws://127.0.0.1:1'], { FLASHLOG_MAX_FRAME_BYTES: 'lots' });
    expect(await badEnv.exited).toBe(2);
    expect(badEnv.stderr).toContain('FLASHLOG_MAX_FRAME_BYTES');
    expect(badEnv.stderr).toContain('"lots"');
    const help = flashlog(['ingest', '--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout).toContain('FLASHLOG_KAFKA_BROKERS');
  });
});
