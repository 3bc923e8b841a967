import { afterAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { eventually, tempDir } from '../helpers/context.ts';
import { rpc } from '../helpers/devnet-feed.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * The two Denim commands of the README, as a user runs them: `flashlog run --devnet --denim`
 * (the devnet in-process, the blocks source on its WebSocket), and `flashlog run --network
 * base-sepolia` with `--rpc` pointed at a Denim devnet instead of Base's public RPC (the preset's
 * blocks source, polled). Each serves `pending` as the newest 200 ms block, with its real hash,
 * its `timestampMs`, and the logs and receipts of the node.
 */
const processes: FlashlogProcess[] = [];
let devnet: Devnet | undefined;
afterAll(async () => {
  for (const process of processes) await process.stop('SIGTERM').catch(() => undefined);
  await devnet?.close();
});

async function servesPending(run: FlashlogProcess, nodeUrl: () => Promise<string>): Promise<void> {
  const listening = await run.waitFor((line) => line.msg === 'gateway listening', 60_000);
  const url = listening.url as string;
  await run.waitFor((line) => typeof line.text === 'string' && /^pending block \d+: \d+ txs/.test(line.text), 30_000);
  const node = await nodeUrl();
  // A pending block with user transactions (the load generator), equal to the node's block.
  const pending = await eventually(
    async () => {
      const block = await rpc<{ number: Hex; hash: Hex; timestampMs?: Hex; transactions: Hex[] } | null>(url, 'eth_getBlockByNumber', [
        'pending',
        false,
      ]);
      return block && block.transactions.length > 2 ? block : undefined;
    },
    30_000,
    'a pending block with user transactions',
  );
  const canonical = await rpc<{ hash: Hex; timestampMs: Hex; transactions: Hex[] }>(node, 'eth_getBlockByNumber', [pending.number, false]);
  // No --reorg-every here: the node's block at that height is the one flashlog holds.
  expect(pending.hash).toBe(canonical.hash);
  expect(pending.transactions).toEqual(canonical.transactions);
  expect(pending.timestampMs).toBe(canonical.timestampMs);
  // The pending receipts (pending may have moved on by now: compare with the node's receipts of
  // the block they name).
  type Receipt = { transactionHash: Hex; blockHash: Hex; logs: unknown[] };
  const receipts = await rpc<Receipt[]>(url, 'eth_getBlockReceipts', ['pending']);
  expect(receipts.length).toBeGreaterThan(1);
  const nodeReceipts = await rpc<Receipt[]>(node, 'eth_getBlockReceipts', [receipts[0]!.blockHash]);
  expect(receipts.map((receipt) => receipt.transactionHash)).toEqual(nodeReceipts.map((receipt) => receipt.transactionHash));
  expect(receipts.flatMap((receipt) => receipt.logs)).toEqual(nodeReceipts.flatMap((receipt) => receipt.logs));
  expect(await run.stop('SIGTERM')).toBe(0);
}

describe('Base after Denim, from the command line', () => {
  it('flashlog run --devnet --denim serves the newest 200 ms block as pending', async () => {
    const dir = tempDir();
    const run = spawnFlashlog(['run', '--devnet', '--denim', '--data-dir', dir.path, '--port', '0', '--metrics-port', '0']);
    processes.push(run);
    try {
      const devnetLine = run.waitFor((line) => typeof line.text === 'string' && line.text.startsWith('  devnet: RPC '), 60_000);
      await servesPending(run, async () => /RPC (http:\/\/\S+),/.exec((await devnetLine).text as string)![1]!);
    } finally {
      dir.remove();
    }
  }, 90_000);

  it('flashlog run --network base-sepolia --rpc <a Denim devnet> follows it with the blocks source', async () => {
    devnet = await createDevnet({ denim: true, load: 15 });
    const dir = tempDir();
    const run = spawnFlashlog([
      'run',
      '--network',
      'base-sepolia',
      '--rpc',
      devnet.rpcUrl,
      '--data-dir',
      dir.path,
      '--port',
      '0',
      '--metrics-port',
      '0',
    ]);
    processes.push(run);
    try {
      const source = await run.waitFor((line) => typeof line.text === 'string' && line.text.startsWith('  source: '), 60_000);
      expect(source.text).toContain(`200 ms blocks from ${devnet.rpcUrl} (polled every 200 ms)`);
      await servesPending(run, async () => devnet!.rpcUrl);
    } finally {
      dir.remove();
    }
  }, 90_000);
});
