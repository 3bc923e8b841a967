import { join } from 'node:path';
import type { Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { blockRecordSchema } from '../../src/records/blocks.ts';
import { chainRecordSchema } from '../../src/records/chain.ts';
import { topics } from '../../src/records/topics.ts';
import { tempDir } from '../helpers/context.ts';
import { readTopic } from '../helpers/execution-harness.ts';
import { freePort, managed, report, rpcCall, sleep, stopAll, type Managed } from './harness.ts';

/**
 * Scenarios 12 and 13, restarts and a node that changes chain, with real `flashlog` processes on
 * a real devnet and the embedded log:
 *
 * 12. `kill -9` of the writer (`run --source blocks` on a Denim devnet, `ingest` on a flashblocks
 *     devnet), restarted on the same data directory after a pause while
 *     blocks keep coming (each of CHAOS_RESTART_SECONDS, default 5 and 60): flashlog.blocks must hold every block number from its first to its last
 *     (0 missing), each the node's canonical block where the node has one, and no gap record.
 * 12c. a restart past --max-backfill-blocks: the older missing blocks are one gap record.
 * 13. the Denim devnet under `run` (and a flashblocks devnet under `ingest`) restarted as a new
 *     chain (same chain id, new genesis, same ports): the writer stops with one line naming both
 *     chains and exit code 2; no block of the new chain is in the log.
 */
const restarts = (process.env.CHAOS_RESTART_SECONDS ?? '5,60').split(',').map(Number);
afterAll(stopAll);

async function startDevnet(args: readonly string[]): Promise<{ proc: Managed; rpc: string; ws: string }> {
  const proc = managed(['devnet', '--metrics-port', '0', ...args]);
  const line = await proc.current.waitFor((candidate) => candidate.msg === 'devnet started', 60_000);
  return { proc, rpc: String(line.rpc), ws: String(line.ws) };
}

const headOf = async (rpc: string) => BigInt(await rpcCall<Hex>(rpc, 'eth_blockNumber'));

/** The block numbers and hashes in flashlog.blocks (one per record), and the gap records of flashlog.chain. */
async function readLog(dataDir: string) {
  const log = createEmbeddedLog({ path: join(dataDir, 'flashlog.db') });
  try {
    const blocks = (await readTopic(log, topics.blocks)).map((record) => {
      const block = blockRecordSchema.parse(JSON.parse(record.value));
      return { number: BigInt(block.blockNumber), index: block.index, hash: block.header.hash ?? null };
    });
    const gaps = (await readTopic(log, topics.chain))
      .map((record) => chainRecordSchema.parse(JSON.parse(record.value)))
      .filter((record) => record.type === 'gap');
    return { blocks, gaps };
  } finally {
    await log.close();
  }
}

/** Numbers between the log's first and last block that no record holds. */
function missingNumbers(numbers: readonly bigint[]): bigint[] {
  const held = new Set(numbers);
  const first = numbers.reduce((a, b) => (b < a ? b : a));
  const last = numbers.reduce((a, b) => (b > a ? b : a));
  const missing: bigint[] = [];
  for (let n = first; n <= last; n++) if (!held.has(n)) missing.push(n);
  return missing;
}

/** Waits until the log's writer has published past `number` (its progress lines are not parsed: the node's head is). */
async function waitForHead(rpc: string, above: bigint, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await headOf(rpc)) <= above) {
    if (Date.now() > deadline) throw new Error(`the devnet did not pass block ${above} in ${timeoutMs} ms`);
    await sleep(200);
  }
}

describe.each(restarts)('scenario 12: kill -9 of the writer and a restart after %i s', (restartSeconds) => {
  it(`run --source blocks (200 ms blocks) killed with SIGKILL, restarted after ${restartSeconds} s: 0 blocks missing`, async () => {
    const dir = tempDir('flashlog-chaos-restart-blocks-');
    const devnet = await startDevnet(['--denim', '--devnet-port', '0', '--load', '5']);
    const args = ['run', '--source', 'blocks', '--rpc', devnet.rpc, '--rpc-ws', devnet.ws, '--data-dir', dir.path, '--port', '0'];
    const run = managed(args);
    await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000);
    await waitForHead(devnet.rpc, (await headOf(devnet.rpc)) + 20n);
    await run.kill('SIGKILL');
    const killedAt = await headOf(devnet.rpc);
    await sleep(restartSeconds * 1000);
    const restartedAt = await headOf(devnet.rpc);
    const began = Date.now();
    run.restart();
    await run.current.waitFor(
      (line) => line.msg === "blocks source: resuming from the last block the log holds; backfilling to the node's head",
      60_000,
    );
    const recoveryMs = Date.now() - began;
    await waitForHead(devnet.rpc, restartedAt + 20n);
    await run.stop();
    expect(await run.current.exited).toBe(0);
    const { blocks, gaps } = await readLog(dir.path);
    const missing = missingNumbers(blocks.map((block) => block.number));
    // Every number the log holds up to the node's safe-ish past is the node's canonical block there.
    const last = blocks.reduce((a, b) => (b.number > a ? b.number : a), 0n);
    let notCanonical = 0;
    for (let n = killedAt - 5n; n <= restartedAt + 5n && n <= last - 5n; n++) {
      const canonical = (await rpcCall<{ hash: Hex }>(devnet.rpc, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash;
      if (!blocks.some((block) => block.number === n && block.hash?.toLowerCase() === canonical.toLowerCase())) notCanonical++;
    }
    report({
      scenario: '12a run --source blocks: kill -9 and restart',
      load: '200 ms blocks, 5 tx/s',
      faults: `SIGKILL, restart after ${restartSeconds} s (${restartedAt - killedAt} blocks while down)`,
      lost: missing.length,
      duplicates: '-',
      recoveryMs,
      rssBeforeMiB: '-',
      rssAfterMiB: '-',
      notes: `blocks ${blocks[0]?.number}..${last} in the log; ${gaps.length} gap records; ${notCanonical} heights around the outage without the node's canonical block`,
    });
    expect(restartedAt - killedAt).toBeGreaterThan(BigInt(restartSeconds * 2));
    expect({ missing, gaps: gaps.length, notCanonical }).toEqual({ missing: [], gaps: 0, notCanonical: 0 });
  });

  it(`ingest (flashblocks) killed with SIGKILL, restarted after ${restartSeconds} s: 0 blocks missing`, async () => {
    const dir = tempDir('flashlog-chaos-restart-feed-');
    const devnet = await startDevnet([
      '--devnet-port',
      '0',
      '--devnet-ws-port',
      '0',
      '--block-time-ms',
      '1000',
      '--metadata-receipts',
      '--load',
      '5',
    ]);
    const args = [
      'ingest',
      '--ws',
      devnet.ws,
      '--rpc',
      devnet.rpc,
      '--executor',
      'metadata',
      '--data-dir',
      dir.path,
      '--metrics-port',
      '0',
    ];
    const ingest = managed(args);
    await ingest.current.waitFor((line) => line.msg === 'ingest started', 60_000);
    await waitForHead(devnet.rpc, (await headOf(devnet.rpc)) + 5n);
    await ingest.kill('SIGKILL');
    const killedAt = await headOf(devnet.rpc);
    await sleep(restartSeconds * 1000);
    const restartedAt = await headOf(devnet.rpc);
    const began = Date.now();
    ingest.restart();
    await ingest.current.waitFor(
      (line) => line.msg === 'flashblocks source: reading the blocks the feed did not show from the node',
      60_000,
    );
    const recoveryMs = Date.now() - began;
    await waitForHead(devnet.rpc, restartedAt + 5n);
    await ingest.stop();
    expect(await ingest.current.exited).toBe(0);
    const { blocks, gaps } = await readLog(dir.path);
    const missing = missingNumbers(blocks.map((block) => block.number));
    report({
      scenario: '12b ingest (flashblocks): kill -9 and restart',
      load: '1 s blocks, 200 ms flashblocks, 5 tx/s',
      faults: `SIGKILL, restart after ${restartSeconds} s (${restartedAt - killedAt} blocks while down)`,
      lost: missing.length,
      duplicates: '-',
      recoveryMs,
      rssBeforeMiB: '-',
      rssAfterMiB: '-',
      notes: `blocks ${blocks[0]?.number}..${blocks[blocks.length - 1]?.number} in the log; ${gaps.length} gap records`,
    });
    expect(restartedAt - killedAt).toBeGreaterThan(BigInt(Math.floor(restartSeconds / 2)));
    expect({ missing, gaps: gaps.length }).toEqual({ missing: [], gaps: 0 });
  });
});

describe('scenario 12c: a restart past --max-backfill-blocks', () => {
  it('run --source blocks --max-backfill-blocks 10, down 5 s (about 25 blocks): the oldest missing are one gap record, none silent', async () => {
    const dir = tempDir('flashlog-chaos-restart-gap-');
    const devnet = await startDevnet(['--denim', '--devnet-port', '0', '--load', '5']);
    const run = managed([
      'run',
      '--source',
      'blocks',
      '--rpc',
      devnet.rpc,
      '--rpc-ws',
      devnet.ws,
      '--data-dir',
      dir.path,
      '--port',
      '0',
      '--max-backfill-blocks',
      '10',
    ]);
    await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000);
    await waitForHead(devnet.rpc, (await headOf(devnet.rpc)) + 10n);
    await run.kill('SIGKILL');
    await sleep(5000);
    const restartedAt = await headOf(devnet.rpc);
    run.restart();
    await run.current.waitFor((line) => line.msg === 'ingest: blocks the log will not hold (a gap record on flashlog.chain)', 60_000);
    await waitForHead(devnet.rpc, restartedAt + 10n);
    await run.stop();
    const { blocks, gaps } = await readLog(dir.path);
    const missing = missingNumbers(blocks.map((block) => block.number));
    const covered = (n: bigint) => gaps.some((gap) => gap.type === 'gap' && BigInt(gap.fromBlock) <= n && n <= BigInt(gap.toBlock));
    const silent = missing.filter((n) => !covered(n));
    report({
      scenario: '12c run --source blocks: restart past --max-backfill-blocks 10',
      load: '200 ms blocks, 5 tx/s',
      faults: 'SIGKILL, restart after 5 s',
      lost: `${missing.length} in gap records, ${silent.length} silent`,
      duplicates: '-',
      recoveryMs: '-',
      rssBeforeMiB: '-',
      rssAfterMiB: '-',
      notes: `gaps ${JSON.stringify(gaps.map((gap) => (gap.type === 'gap' ? [gap.fromBlock, gap.toBlock, gap.reason] : [])))}`,
    });
    expect(missing.length).toBeGreaterThan(0);
    expect(gaps).toHaveLength(1);
    expect(silent).toEqual([]);
  });
});

describe('scenario 13: the node becomes another chain under a running writer', () => {
  it('a Denim devnet restarted as a new chain under run: one line naming both chains, exit 2, one chain in the log', async () => {
    const dir = tempDir('flashlog-chaos-chain-swap-');
    const port = await freePort();
    const devnetArgs = ['--denim', '--devnet-port', String(port), '--load', '5'];
    let devnet = await startDevnet(devnetArgs);
    const oldGenesis = (await rpcCall<{ hash: Hex }>(devnet.rpc, 'eth_getBlockByNumber', ['0x0', false])).hash;
    const run = managed(['run', '--source', 'blocks', '--rpc', devnet.rpc, '--rpc-ws', devnet.ws, '--data-dir', dir.path, '--port', '0']);
    await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000);
    await waitForHead(devnet.rpc, (await headOf(devnet.rpc)) + 30n);
    await devnet.proc.stop();
    const swappedAt = Date.now();
    // A new genesis needs a new second (the devnet's genesis is of its start time, in seconds).
    await sleep(1100);
    devnet = await startDevnet(devnetArgs);
    const newGenesis = (await rpcCall<{ hash: Hex }>(devnet.rpc, 'eth_getBlockByNumber', ['0x0', false])).hash;
    expect(newGenesis).not.toBe(oldGenesis);
    const code = await Promise.race([run.current.exited, sleep(30_000).then(() => 'still running' as const)]);
    const stoppedMs = Date.now() - swappedAt;
    const stderr = run.current.stderr().trim();
    const { blocks } = await readLog(dir.path);
    let ofNewChain = 0;
    for (const block of blocks) {
      if (block.hash && (await rpcCall(devnet.rpc, 'eth_getBlockByHash', [block.hash, false])) !== null) ofNewChain++;
    }
    report({
      scenario: '13 run --source blocks: the devnet restarted as a new chain',
      load: '200 ms blocks, 5 tx/s',
      faults: 'devnet stopped and started again on the same ports with a new genesis',
      lost: '-',
      duplicates: '-',
      recoveryMs: stoppedMs,
      rssBeforeMiB: '-',
      rssAfterMiB: '-',
      notes: `exit ${code}; ${blocks.length} block records, ${ofNewChain} of the new chain; stderr: ${stderr.slice(0, 300)}`,
    });
    expect(code).toBe(2);
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toContain(oldGenesis.toLowerCase());
    expect(stderr).toContain(newGenesis.toLowerCase());
    expect(ofNewChain).toBe(0);
  });

  it('a flashblocks devnet restarted as a new chain under ingest: one line naming both chains, exit 2, one chain in the log', async () => {
    const dir = tempDir('flashlog-chaos-chain-swap-feed-');
    const [port, wsPort] = [await freePort(), await freePort()];
    const devnetArgs = [
      '--devnet-port',
      String(port),
      '--devnet-ws-port',
      String(wsPort),
      '--block-time-ms',
      '1000',
      '--metadata-receipts',
      '--load',
      '5',
    ];
    let devnet = await startDevnet(devnetArgs);
    const oldGenesis = (await rpcCall<{ hash: Hex }>(devnet.rpc, 'eth_getBlockByNumber', ['0x0', false])).hash;
    const ingest = managed([
      'ingest',
      '--ws',
      devnet.ws,
      '--rpc',
      devnet.rpc,
      '--executor',
      'metadata',
      '--data-dir',
      dir.path,
      '--metrics-port',
      '0',
    ]);
    await ingest.current.waitFor((line) => line.msg === 'ingest started', 60_000);
    await waitForHead(devnet.rpc, (await headOf(devnet.rpc)) + 5n);
    await devnet.proc.stop();
    // A new genesis needs a new second (the devnet's genesis is of its start time, in seconds).
    await sleep(1100);
    devnet = await startDevnet(devnetArgs);
    const newGenesis = (await rpcCall<{ hash: Hex }>(devnet.rpc, 'eth_getBlockByNumber', ['0x0', false])).hash;
    expect(newGenesis).not.toBe(oldGenesis);
    const code = await Promise.race([ingest.current.exited, sleep(30_000).then(() => 'still running' as const)]);
    const stderr = ingest.current.stderr().trim();
    const { blocks } = await readLog(dir.path);
    report({
      scenario: '13b ingest (flashblocks): the devnet restarted as a new chain',
      load: '1 s blocks, 200 ms flashblocks, 5 tx/s',
      faults: 'devnet stopped and started again on the same ports with a new genesis',
      lost: '-',
      duplicates: '-',
      recoveryMs: '-',
      rssBeforeMiB: '-',
      rssAfterMiB: '-',
      notes: `exit ${code}; ${blocks.length} block records; stderr: ${stderr.slice(0, 300)}`,
    });
    expect(code).toBe(2);
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toContain(oldGenesis.toLowerCase());
    expect(stderr).toContain(newGenesis.toLowerCase());
  });
});
