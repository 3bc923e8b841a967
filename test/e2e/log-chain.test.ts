import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { readChainStamp } from '../../src/log/chain-stamp.ts';
import { topics } from '../../src/records/topics.ts';
import { eventually, kafkaBrokers, tempDir } from '../helpers/context.ts';
import { rpc } from '../helpers/devnet-feed.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * The log knows its chain, with processes restarted in the same directory (or under the same
 * Kafka topic prefix) as a user restarts them: against another chain a command stops with one
 * line naming the place and both chains; `run --devnet` twice serves the second chain only; a log
 * made before stamps is stamped by the first writer. The chains' ids and genesis hashes are asked
 * of the devnets themselves (eth_chainId, block 0), not of flashlog.
 */
const processes: FlashlogProcess[] = [];
const devnets: Devnet[] = [];
const dirs: { remove(): void }[] = [];
afterAll(async () => {
  for (const process of processes) await process.stop('SIGKILL').catch(() => undefined);
  for (const devnet of devnets) await devnet.close();
  for (const dir of dirs) dir.remove();
});

interface Chain {
  readonly rpcUrl: string;
  readonly chainId: bigint;
  readonly genesisHash: Hex;
}
let chainA: Chain;
let chainB: Chain;

async function chainOf(devnet: Devnet): Promise<Chain> {
  const genesis = await rpc<{ hash: Hex }>(devnet.rpcUrl, 'eth_getBlockByNumber', ['0x0', false]);
  return { rpcUrl: devnet.rpcUrl, chainId: BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_chainId', [])), genesisHash: genesis.hash };
}

beforeAll(async () => {
  // Two Denim devnets a second apart: same chain id, same accounts, another genesis (its time).
  const a = await createDevnet({ denim: true, load: 5 });
  devnets.push(a);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const b = await createDevnet({ denim: true, load: 5 });
  devnets.push(b);
  [chainA, chainB] = [await chainOf(a), await chainOf(b)];
  expect(chainA.chainId).toBe(chainB.chainId);
  expect(chainA.genesisHash).not.toBe(chainB.genesisHash);
}, 60_000);

/** A flashlog command whose stderr is kept whole. */
function start(args: readonly string[]): FlashlogProcess & { stderr: () => string } {
  const process = spawnFlashlog([...args, ...(args[0] === 'tail' ? [] : ['--no-metrics']), '--log-level', 'info']);
  processes.push(process);
  let stderr = '';
  process.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return Object.assign(process, { stderr: () => stderr });
}

/** A command that must stop at once, with exactly one line on stderr and no fatal log record (no stack trace). */
async function refused(args: readonly string[]): Promise<string> {
  const process = start(args);
  const code = await Promise.race([
    process.exited,
    new Promise((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000)),
  ]);
  expect(code, `flashlog ${args[0]}: ${process.stderr()}`).toBeTypeOf('number');
  expect(code, process.stderr()).not.toBe(0);
  // Node's own process warnings (kafkajs's TimeoutNegativeWarning) are not flashlog's lines.
  const nodeWarning = /^\(node:\d+\) \w*Warning|^Timeout duration was set|^\(Use `node --trace-warnings/;
  const lines = process
    .stderr()
    .trimEnd()
    .split('\n')
    .filter((line) => !nodeWarning.test(line));
  expect(lines, process.stderr()).toHaveLength(1);
  expect(process.lines.filter((line) => line.level === 60 || line.stack !== undefined || JSON.stringify(line).includes('    at '))).toEqual(
    [],
  );
  return lines[0]!;
}

const named = (chain: Chain) => `chain id ${chain.chainId}, genesis ${chain.genesisHash}`;

/** Writes a little of chain A with the blocks-source ingest into the log of `logArgs`, then stops it. */
async function ingestSome(logArgs: readonly string[], chain: Chain): Promise<void> {
  const ingest = start(['ingest', '--source', 'blocks', '--rpc', chain.rpcUrl, '--blocks-poll-ms', '100', ...logArgs]);
  await ingest.waitFor((line) => line.msg === 'ingest started (blocks source)', 30_000);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  expect(await ingest.stop('SIGTERM')).toBe(0);
}

describe('a log of another chain stops the command with one line', () => {
  it('embedded: ingest of chain A, then ingest, serve, run, tail and prover-bridge of chain B in the same directory', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const logArgs = ['--data-dir', dir.path];
    await ingestSome(logArgs, chainA);

    for (const args of [
      ['ingest', '--source', 'blocks', '--rpc', chainB.rpcUrl, ...logArgs],
      ['serve', '--rpc', chainB.rpcUrl, '--port', '0', ...logArgs],
      ['run', '--source', 'blocks', '--rpc', chainB.rpcUrl, '--port', '0', ...logArgs],
      ['tail', topics.blocks, '--from-beginning', '--rpc', chainB.rpcUrl, ...logArgs],
      ['prover-bridge', '--rpc', chainB.rpcUrl, '--prover-url', 'http://127.0.0.1:1', ...logArgs],
    ]) {
      const line = await refused(args);
      expect(line).toContain(`in ${dir.path}`);
      expect(line).toContain(named(chainA));
      expect(line).toContain(named(chainB));
    }
    // The same commands against chain A read on: the log is A's.
    const serve = start(['serve', '--rpc', chainA.rpcUrl, '--port', '0', ...logArgs]);
    await serve.waitFor((line) => line.msg === 'gateway listening', 30_000);
    expect(await serve.stop('SIGTERM')).toBe(0);
  }, 120_000);

  it('kafka: the same under one topic prefix on a real broker', async () => {
    const prefix = `chainlog.${randomUUID().slice(0, 8)}.`;
    const dir = tempDir();
    dirs.push(dir);
    const logArgs = ['--kafka-brokers', kafkaBrokers().join(','), '--topic-prefix', prefix, '--data-dir', dir.path];
    await ingestSome(logArgs, chainA);
    for (const args of [
      ['ingest', '--source', 'blocks', '--rpc', chainB.rpcUrl, ...logArgs],
      ['serve', '--rpc', chainB.rpcUrl, '--port', '0', ...logArgs],
    ]) {
      const line = await refused(args);
      expect(line).toContain(`under topic prefix "${prefix}"`);
      expect(line).toContain(named(chainA));
      expect(line).toContain(named(chainB));
    }
    // run --devnet is a new chain: topics cannot be moved aside, so a log under the prefix stops it.
    const line = await refused(['run', '--devnet', '--load', '0', '--port', '0', ...logArgs]);
    expect(line).toContain(`run --devnet starts a new chain`);
    expect(line).toContain(`under topic prefix "${prefix}"`);
    expect(line).toContain(named(chainA));
  }, 120_000);
});

describe('a log made before stamps', () => {
  it('is read with a warning, then stamped by the first writer with its node’s chain', async () => {
    const dir = tempDir();
    dirs.push(dir);
    // What an older flashlog left: its topics (no flashlog.meta) and a record.
    const old = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
    await old.ensureTopics([topics.flashblocks, topics.blocks, topics.logs, topics.chain].map((name) => ({ name })));
    await old.produce([{ topic: topics.chain, key: '1', value: JSON.stringify({ v: 1, type: 'safe', blockNumber: '0x1' }) }]);
    await old.close();

    const serve = start(['serve', '--rpc', chainA.rpcUrl, '--port', '0', '--data-dir', dir.path]);
    await serve.waitFor((line) => line.msg === 'gateway listening', 30_000);
    expect(serve.lines.filter((line) => line.level === 40 && String(line.msg).includes('has no chain stamp'))).toHaveLength(1);
    expect(await serve.stop('SIGTERM')).toBe(0);
    const unstamped = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
    expect(await readChainStamp(unstamped)).toBeNull();
    await unstamped.close();

    await ingestSome(['--data-dir', dir.path], chainA);
    const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
    try {
      expect(await readChainStamp(log)).toEqual({ chainId: chainA.chainId, genesisHash: chainA.genesisHash.toLowerCase() });
    } finally {
      await log.close();
    }
    const line = await refused(['serve', '--rpc', chainB.rpcUrl, '--port', '0', '--data-dir', dir.path]);
    expect(line).toContain(named(chainA));
  }, 120_000);
});

describe('run --devnet twice in the same directory', () => {
  it('the second run serves its own chain: pending at or past latest, none of the first chain’s logs', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const args = ['--data-dir', dir.path, '--port', '0', '--load', '10'];
    // The first chain, as in the report: the Denim devnet, left to grow well past where the second will be.
    const first = start(['run', '--devnet', '--denim', ...args]);
    const firstUrl = String((await first.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    const old = await eventually(
      async () => {
        const block = await rpc<{ number: Hex } | null>(firstUrl, 'eth_getBlockByNumber', ['pending', false]);
        return block && BigInt(block.number) >= 40n ? block : undefined;
      },
      60_000,
      'the first chain at block 40',
    );
    const oldLogs = await rpc<{ blockNumber: Hex }[]>(firstUrl, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: old.number }]);
    expect(oldLogs.length).toBeGreaterThan(0);
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = start(['run', '--devnet', ...args]);
    const url = String((await second.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    const devnetRpc = /RPC (http:\/\/\S+),/.exec(
      String((await second.waitFor((line) => typeof line.text === 'string' && line.text.startsWith('  devnet: RPC '), 30_000)).text),
    )![1]!;
    // Both devnets send the same load from the same accounts, so a transaction hash does not tell
    // the chains apart; the numbers do: the first chain is at 40 and more, the second near 0.
    for (let i = 0; i < 5; i++) {
      const latest = BigInt(await rpc<Hex>(devnetRpc, 'eth_blockNumber', []));
      const pending = await rpc<{ number: Hex } | null>(url, 'eth_getBlockByNumber', ['pending', false]);
      expect(pending).not.toBeNull();
      const number = BigInt(pending!.number);
      expect(number).toBeGreaterThanOrEqual(latest);
      expect(number).toBeLessThanOrEqual(latest + 2n);
      const logs = await rpc<{ blockNumber: Hex }[]>(url, 'eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]);
      expect(logs.filter((log) => BigInt(log.blockNumber) > number)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // The first chain's log is kept aside, and the run said so.
    expect(second.lines.some((line) => String(line.msg).startsWith('run --devnet starts a new chain in a fresh log'))).toBe(true);
    expect(existsSync(join(dir.path, 'previous', 'flashlog.db'))).toBe(true);
    expect(await second.stop('SIGTERM')).toBe(0);
  }, 180_000);
});
