import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaBrokers, tempDir } from '../helpers/context.ts';

/**
 * What the CLI prints, as a user sees it: the overview, one readable line for a failure (no JSON
 * object, no stack trace), and no kafkajs TimeoutNegativeWarning from a command that talks to Kafka.
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const example = fileURLToPath(new URL('../../examples/proof-request.json', import.meta.url));

function flashlog(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const servers: Server[] = [];
const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  for (const dir of dirs) dir.remove();
});

describe('flashlog CLI output', () => {
  it('--help describes OP Stack pre-confirmations in both forms, not Base flashblocks alone', async () => {
    const { code, stdout } = await flashlog(['--help']);
    expect(code).toBe(0);
    const first = stdout.split('\n')[0]!;
    expect(first).not.toContain('Base flashblocks');
    expect(first).toContain('OP Stack');
    expect(first).toContain('flashblocks feed');
    expect(first).toContain('200 ms blocks');
  });

  it('execute-block --l2-rpc with no node: one readable line on stderr, nothing on stdout, exit 1', async () => {
    const { code, stdout, stderr } = await flashlog(['execute-block', '--l2-rpc', 'http://127.0.0.1:9', '--block-number', '12']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^flashlog execute-block: .*http:\/\/127\.0\.0\.1:9/);
    expect(stderr).not.toMatch(/"level"|\bat .*\.ts:\d+/);
  });

  it('prover-host with its port taken: one line naming --port, exit 2', async () => {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const { code, stdout, stderr } = await flashlog([
      'prover-host',
      '--l1-rpc',
      'http://127.0.0.1:9',
      '--l2-rpc',
      'http://127.0.0.1:9',
      '--l2-chain-id',
      '1337',
      '--port',
      String(port),
      '--no-metrics',
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `flashlog prover-host: --port (FLASHLOG_PORT): 127.0.0.1:${port} is already in use; expected a free port (0 = any)\n`,
    );
  });

  it('a Kafka command prints no TimeoutNegativeWarning', async () => {
    const dir = tempDir('flashlog-cli-kafka-');
    dirs.push(dir);
    // prove over Kafka with nobody to answer: it produces, waits, and gives up after --timeout.
    const { code, stderr } = await flashlog([
      'prove',
      example,
      '--timeout',
      '3',
      '--kafka-brokers',
      kafkaBrokers().join(','),
      '--topic-prefix',
      `cli-output-${process.pid}.`,
      '--data-dir',
      dir.path,
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/no reply for request [0-9a-f-]{36} within 3s/);
    expect(stderr).not.toContain('TimeoutNegativeWarning');
    expect(stderr).not.toMatch(/\(node:\d+\) \w*Warning/);
  }, 90_000);
});
