import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatEther, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../streams/commands.ts';
import { eventually } from '../helpers/context.ts';

/**
 * The README's commands, run as a user copies them: every ```sh block of its opening section and
 * of the prover walkthrough ("Try it (local mode)" and "Re-execute one block"), read from README.md
 * itself, so an edit to the README is what this tests. They run in a fresh clone (`git archive
 * HEAD`, the repository's node_modules linked in), `npx flashlog` as the clone's bin/flashlog.js.
 *
 * Substituted only where the README says so: every port (a default, or named in a line) is
 * replaced by a free one in every line that names it, and set through its variable for the
 * commands that use it by default. Long-running commands start in the background and must get
 * ready; the others run in order and must exit 0. A line this test does not know fails it.
 */
const repo = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(repo, 'README.md'), 'utf8');

/** The ```sh blocks under the heading `title` (up to the next heading of its level or above). */
function shBlocks(title: string | null): string[][] {
  const lines = readme.split('\n');
  const start = title === null ? 0 : lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '') === title);
  expect(start, `README heading "${title}"`).toBeGreaterThanOrEqual(0);
  // The opening section ends at the first heading; a titled one at the next of its level or above.
  const level = title === null ? 6 : lines[start]!.indexOf(' ');
  const blocks: string[][] = [];
  let block: string[] | null = null;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (block === null && /^#+ /.test(line) && line.indexOf(' ') <= level) break;
    if (block === null && line.trim() === '```sh') block = [];
    else if (block !== null && line.trim() === '```') {
      blocks.push(block);
      block = null;
    } else if (block !== null) {
      const command = line.replace(/\s+#\s.*$/, '').trim();
      if (command) block.push(command);
    }
  }
  return blocks;
}

/** Lines of the README that are not run here, and why. Any other line must be a flashlog command. */
const notRun: Record<string, string> = {
  'npm test': 'the test suite this test is part of',
};
/** Prefixes a line may have that are not run: `npm ci` (the clone has the repository's node_modules). */
const skippedPrefix = /^npm ci && /;

/** The log line that says a long-running command is ready. */
const ready: Record<string, (line: Record<string, unknown>) => boolean> = {
  run: (line) => typeof line.text === 'string' && line.text.startsWith('flashlog gateway: '),
  devnet: (line) => line.msg === 'devnet started',
  enclave: (line) => line.msg === 'enclave listening',
  'prover-host': (line) => line.msg === 'prover host listening',
  'prover-bridge': (line) => line.msg === 'prover bridge consuming',
};

const defaultPorts = [8545, 8546, 8547, 7111, 7112, 8000, 7300];
const ports = new Map<number, number>();
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
const substitute = (line: string) =>
  line.replace(new RegExp(`(?<=[:\\s])(${defaultPorts.join('|')})\\b`, 'g'), (port) => String(ports.get(Number(port))));

let clone: string;
const cleanups: (() => unknown)[] = [];
beforeAll(async () => {
  for (const port of defaultPorts) ports.set(port, await freePort());
  clone = mkdtempSync(join(tmpdir(), 'flashlog-readme-'));
  try {
    execFileSync('bash', ['-o', 'pipefail', '-c', `git -C "${repo}" archive --format=tar HEAD | tar -x -C "${clone}"`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    throw new Error(`the README test runs in a fresh clone made by git archive HEAD; it needs a git checkout: ${String(error)}`);
  }
  symlinkSync(join(repo, 'node_modules'), join(clone, 'node_modules'));
  cleanups.push(() => rmSync(clone, { recursive: true, force: true }));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Started {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  stderr: string;
  readonly exited: Promise<number | null>;
}

/** The flashlog command a README line runs, its arguments, and the env its default ports take. */
function parse(line: string): { name: string; args: string[]; env: Record<string, string> } {
  const match = /^npx flashlog (\S+)(.*)$/.exec(line);
  expect(match, `README line this test does not know: ${line}`).not.toBeNull();
  const name = match![1]!;
  expect(
    commands.some((command) => command.name === name),
    `flashlog has no command ${name}`,
  ).toBe(true);
  return {
    name,
    args: match![2]!.trim().split(/\s+/).filter(Boolean),
    env: {
      // The README: a taken port is changed in every line naming it, or set through its variable.
      FLASHLOG_PORT: String(ports.get(name === 'run' ? 8547 : 7300)),
      FLASHLOG_DEVNET_PORT: String(ports.get(8545)),
      FLASHLOG_DEVNET_WS_PORT: String(ports.get(7111)),
      FLASHLOG_LISTEN: `tcp://127.0.0.1:${ports.get(8000)}`,
      FLASHLOG_METRICS_PORT: '0',
    },
  };
}

function start(line: string): Started {
  const { name, args, env } = parse(line);
  expect(/["'$`|<>;&\\]/.test(args.join(' ')), `a long-running line with shell syntax: ${line}`).toBe(false);
  const child = spawn(process.execPath, [join(clone, 'bin/flashlog.js'), name, ...args], {
    cwd: clone,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started: Started = {
    name,
    child,
    lines: [],
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      try {
        started.lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        started.lines.push({ text });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (started.stderr += chunk.toString('utf8')));
  cleanups.push(() => stop(started));
  return started;
}

async function stop(started: Started): Promise<number | null> {
  if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGINT');
  const timer = setTimeout(() => started.child.kill('SIGKILL'), 30_000);
  const code = await started.exited;
  clearTimeout(timer);
  return code;
}

async function whenReady(started: Started, timeoutMs = 90_000): Promise<void> {
  const check = ready[started.name];
  expect(check, `no readiness line known for ${started.name}`).toBeDefined();
  await eventually(
    () => {
      if (started.child.exitCode !== null) throw new Error(`${started.name} exited ${started.child.exitCode}: ${started.stderr}`);
      return started.lines.some(check!) ? true : undefined;
    },
    timeoutMs,
    `${started.name} ready`,
  );
}

/**
 * Runs a one-shot line through the shell (it may redirect), in the clone, within 3 minutes.
 * Asynchronous: the services' output keeps being read meanwhile.
 */
function runLine(line: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { env } = parse(line);
  const shell = line.replace(/^npx flashlog /, `"${process.execPath}" "${join(clone, 'bin/flashlog.js')}" `);
  const child = spawn('bash', ['-c', shell], { cwd: clone, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

const rpc = async (url: string, method: string, params: unknown[] = []): Promise<unknown> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
};

/** A line naming `--block-number N` of `--l2-rpc URL` runs once the README's L2 has block N. */
async function waitForNamedBlock(line: string): Promise<void> {
  const block = /--block-number (\d+)/.exec(line);
  const l2 = /--l2-rpc (\S+)/.exec(line);
  if (!block || !l2) return;
  await eventually(
    async () => (Number(BigInt((await rpc(l2[1]!, 'eth_blockNumber')) as Hex)) >= Number(block[1]) ? true : undefined),
    90_000,
    `L2 block ${block[1]}`,
  );
}

describe('README: the opening commands', () => {
  const [intro] = shBlocks(null);
  it('has a command block', () => expect(intro?.length).toBeGreaterThan(0));

  for (const raw of intro ?? []) {
    const line = raw.replace(skippedPrefix, '');
    if (notRun[line]) continue;
    it(`${raw}: the gateway and devnet answer, the printed keys are funded, nothing warns`, async () => {
      const run = start(substitute(line));
      await whenReady(run);
      const printed = (pattern: RegExp) =>
        eventually(
          () => {
            for (const l of run.lines) {
              const match = typeof l.text === 'string' ? pattern.exec(l.text) : null;
              if (match) return match[1]!;
            }
            return undefined;
          },
          10_000,
          `a printed line ${pattern}`,
        );
      const gateway = await printed(/^flashlog gateway: (http:\/\/\S+)/);
      expect(gateway).toBe(`http://127.0.0.1:${ports.get(8547)}`);
      const devnetRpc = await printed(/devnet: RPC (http:\/\/\S+),/);
      // The funded accounts with their keys, as printed: each key's address (viem), funded on the devnet.
      const accounts = await eventually(() => {
        const found = run.lines
          .map((l) => (typeof l.text === 'string' ? /^\s+\((\d+)\) (0x[0-9a-fA-F]{40})\s+(0x[0-9a-f]{64})$/.exec(l.text) : null))
          .filter((m) => m !== null);
        return found.length === 10 ? found : undefined;
      });
      for (const [, index, address, key] of accounts) {
        expect(privateKeyToAccount(key as Hex).address, `account ${index}`).toBe(address);
        const balance = Number(formatEther(BigInt((await rpc(devnetRpc, 'eth_getBalance', [address, 'latest'])) as Hex)));
        expect(balance, `account ${index}`).toBeGreaterThan(1000);
      }
      // Account 9 is the user's: the load never sent from it.
      expect(await rpc(devnetRpc, 'eth_getTransactionCount', [accounts[9]![2], 'latest'])).toBe('0x0');
      const pending = await eventually(
        async () => ((await rpc(gateway, 'eth_getBlockByNumber', ['pending', false])) as { number: Hex } | null) ?? undefined,
        30_000,
        'a pending block from the gateway',
      );
      expect(BigInt(pending.number)).toBeGreaterThan(0n);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const warnings = run.lines.filter((l) => typeof l.level === 'number' && l.level >= 40);
      expect(warnings, 'warning or error lines of a fresh start').toEqual([]);
      expect(await stop(run)).toBe(0);
      expect(run.stderr, 'stderr of a fresh start').toBe('');
    }, 180_000);
  }
});

describe('README: the prover walkthrough, from a fresh clone', () => {
  const walkthrough = shBlocks('Try it (local mode)');
  const stateless = shBlocks('Re-execute one block');

  it('runs every line as written: the services get ready, every other command exits 0', async () => {
    const lines = [...walkthrough, ...stateless].flat().map(substitute);
    expect(lines.length).toBeGreaterThan(5);
    const services: Started[] = [];
    const results: Record<string, { status: number | null; stdout: string; stderr: string }> = {};
    for (const line of lines) {
      const { name } = parse(line);
      if (commands.find((command) => command.name === name)!.longRunning) {
        const started = start(line);
        services.push(started);
        await whenReady(started);
        continue;
      }
      await waitForNamedBlock(line);
      const result = await runLine(line);
      expect(result.status, `${line}\n${result.stderr}`).toBe(0);
      expect(result.stderr, line).not.toMatch(/Warning|"level":[456]0/);
      results[line] = result;
    }
    // What the lines wrote: the reply alone in reply.json, a proof that verify-proposal accepts.
    const reply = JSON.parse(readFileSync(join(clone, 'reply.json'), 'utf8')) as { result?: { Tee?: { proposals: unknown[] } } };
    expect(reply.result?.Tee?.proposals.length).toBeGreaterThan(0);
    const verified = Object.entries(results).find(([line]) => line.includes('verify-proposal'))![1];
    expect(
      verified.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { kind: string }).kind),
    ).toContain('aggregate');
    const executed = Object.entries(results).filter(([line]) => line.includes('execute-block'));
    expect(executed.length).toBe(2);
    for (const [line, result] of executed) {
      if (line.includes('--json')) expect((JSON.parse(result.stdout) as { matches: boolean }).matches, line).toBe(true);
      else expect(result.stdout, line).toContain('block hash matches');
    }
    for (const service of services) {
      expect(service.lines.filter((l) => typeof l.level === 'number' && l.level >= 50)).toEqual([]);
      expect(await stop(service), `${service.name} exit`).toBe(0);
    }
  }, 420_000);

  it('the committed example request and reply verify offline', async () => {
    const result = await runLine('npx flashlog verify-proposal examples/proof-reply.json examples/proof-request.json');
    expect(result.status, result.stderr).toBe(0);
  }, 60_000);
});
