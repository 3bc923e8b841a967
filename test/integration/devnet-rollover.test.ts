import { encodeFunctionData, decodeFunctionResult, numberToHex, type Hex } from 'viem';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { rpc, type RpcBlock } from '../helpers/devnet-feed.ts';
import { eventually } from '../helpers/context.ts';
import { DevnetToken, DevnetWorkload } from '../../devnet/contracts/bytecode.ts';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';

/**
 * The bounded history on a real devnet (EDR, the producer, the load, the JSON-RPC server): with
 * --devnet-history-blocks 4 the chain rolls over to a new EDR provider every 4 sealed blocks, and a
 * reader sees one chain: parent hashes link across every rollover, state written before a rollover
 * is read after it (balances, nonces, contract storage through calls), the load's transactions go
 * on being accepted, and a block older than the window is answered null, as on a pruned node.
 */
let devnet: Devnet | undefined;
afterEach(async () => {
  await devnet?.close();
  devnet = undefined;
});

const HISTORY_BLOCKS = 4;
const rolloversOf = async (registry: Registry): Promise<number> =>
  (await registry.getSingleMetric('flashlog_devnet_rollovers_total')?.get())?.values[0]?.value ?? 0;

describe('devnet bounded history (--devnet-history-blocks)', () => {
  it('rolls over to a forked EVM every K blocks and stays one chain for readers', async () => {
    const metrics = new Registry();
    devnet = await createDevnet({ blockTimeMs: 300, flashblockMs: 100, load: 10, historyBlocks: HISTORY_BLOCKS, metrics });
    const net = devnet;
    const url = net.rpcUrl;
    // A user deposit in the first blocks (the load's: a fresh account minted ETH, nothing after):
    // its account is read again after the rollovers, its block and receipt are gone by then.
    type Tx = { hash: Hex; type: Hex; from: Hex; mint?: Hex; nonce: Hex };
    const deposit = await eventually(
      async () => {
        const head = BigInt(await rpc<Hex>(url, 'eth_blockNumber'));
        for (let number = 1n; number <= head; number++) {
          const block = await rpc<{ number: Hex; transactions: Tx[] } | null>(url, 'eth_getBlockByNumber', [numberToHex(number), true]);
          const found = block?.transactions.find((tx) => tx.type === '0x7e' && BigInt(tx.mint ?? 0) > 0n);
          if (found) return { ...found, blockNumber: block!.number };
        }
        return undefined;
      },
      20_000,
      'a user deposit mined',
    );
    expect(await rolloversOf(metrics), 'no rollover before the deposit was read').toBeLessThanOrEqual(1);

    await eventually(
      async () =>
        (await rolloversOf(metrics)) >= 3 &&
        BigInt(await rpc<Hex>(url, 'eth_blockNumber')) > BigInt(deposit.blockNumber) + BigInt(HISTORY_BLOCKS)
          ? true
          : undefined,
      40_000,
      'three rollovers, the deposit out of the window',
    );
    const head = BigInt(await rpc<Hex>(url, 'eth_blockNumber'));
    const counts = net.load!.counts();

    // One chain: every block kept links to the one before it, across the rollovers.
    const blocks: RpcBlock[] = [];
    for (let number = head; number > 0n; number--) {
      const block = await rpc<RpcBlock | null>(url, 'eth_getBlockByNumber', [numberToHex(number), false]);
      if (!block) break;
      blocks.unshift(block);
    }
    // The last K blocks (one fewer if a block was sealed while they were read).
    expect(blocks.length, 'blocks still answered').toBeGreaterThanOrEqual(HISTORY_BLOCKS - 1);
    expect(blocks.length).toBeLessThanOrEqual(HISTORY_BLOCKS);
    expect(BigInt(blocks[0]!.number), 'the oldest kept block is at or below the last fork block').toBeLessThanOrEqual(
      (head / BigInt(HISTORY_BLOCKS)) * BigInt(HISTORY_BLOCKS),
    );
    for (let i = 1; i < blocks.length; i++) expect(blocks[i]!.parentHash, `block ${blocks[i]!.number}`).toBe(blocks[i - 1]!.hash);
    // The oldest blocks kept are below the last fork block: the fork source answers them from its
    // ring, receipts and logs included.
    const oldest = blocks[0]!;
    const receipts = await rpc<{ transactionHash: Hex; blockHash: Hex }[]>(url, 'eth_getBlockReceipts', [oldest.number]);
    expect(receipts.map((receipt) => receipt.transactionHash)).toEqual(oldest.transactions);
    expect(receipts.every((receipt) => receipt.blockHash === oldest.hash)).toBe(true);
    // Logs over the whole chain: those of the blocks kept, the ring's part included, nothing older.
    const logs = await rpc<{ blockNumber: Hex; logIndex: Hex }[]>(url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: numberToHex(head) }]);
    const kept = await rpc<{ blockNumber: Hex; logIndex: Hex }[]>(url, 'eth_getLogs', [
      { fromBlock: oldest.number, toBlock: numberToHex(head) },
    ]);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toEqual(kept);
    // The rollovers happen at multiples of K: the last fork block is the last one at or below the head.
    const forkBlock = (head / BigInt(HISTORY_BLOCKS)) * BigInt(HISTORY_BLOCKS);
    expect(
      logs.some((log) => BigInt(log.blockNumber) <= forkBlock),
      'logs from the fork source (at or below the last fork block)',
    ).toBe(true);
    // A hash the devnet never had: null, not an error (the gateway polls receipts of pending transactions).
    expect(await rpc(url, 'eth_getTransactionReceipt', [`0x${'ab'.repeat(32)}`])).toBeNull();
    expect(await rpc(url, 'eth_getBlockByHash', [`0x${'cd'.repeat(32)}`, false])).toBeNull();

    // Older than the window: null, as on a pruned node; so is the early deposit and its receipt.
    expect(await rpc(url, 'eth_getBlockByNumber', [deposit.blockNumber, false])).toBeNull();
    expect(await rpc(url, 'eth_getTransactionReceipt', [deposit.hash])).toBeNull();
    expect(await rpc(url, 'eth_getTransactionByHash', [deposit.hash])).toBeNull();
    // State at a block older than the window is refused with a message that says so.
    await expect(rpc(url, 'eth_getBalance', [deposit.from, deposit.blockNumber])).rejects.toThrow(/not kept|missing trie node/);

    // State written before the rollovers, read after them: the deposit's account (minted, nonce 1).
    expect(BigInt(await rpc<Hex>(url, 'eth_getBalance', [deposit.from, 'latest']))).toBe(BigInt(deposit.mint!));
    expect(Number(await rpc<Hex>(url, 'eth_getTransactionCount', [deposit.from, 'latest']))).toBe(1);
    // Contract storage written at the load's start (token balances, the workload's counter):
    // the token's supply is still all there, spread over the ten accounts.
    // Every call at one block: the load goes on sending tokens while they are read, so a sum read
    // over several `latest` blocks may miss what moved between two of them.
    const at = await rpc<Hex>(url, 'eth_blockNumber');
    const call = async (to: Hex, data: Hex) => rpc<Hex>(url, 'eth_call', [{ to, data }, at]);
    // At once, so the block is still in the window (it rolls over every few hundred ms here).
    const [supply, balances] = await Promise.all([
      call(net.load!.token, encodeFunctionData({ abi: DevnetToken.abi, functionName: 'totalSupply' })).then((data) =>
        decodeFunctionResult({ abi: DevnetToken.abi, functionName: 'totalSupply', data }),
      ),
      Promise.all(
        net.accounts.map(async (account) =>
          decodeFunctionResult({
            abi: DevnetToken.abi,
            functionName: 'balanceOf',
            data: await call(
              net.load!.token,
              encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [account.address] }),
            ),
          }),
        ),
      ),
    ]);
    const held = balances.reduce((sum, balance) => sum + balance, 0n);
    expect(supply).toBeGreaterThan(0n);
    expect(held).toBe(supply);
    const counter = decodeFunctionResult({
      abi: DevnetWorkload.abi,
      functionName: 'counter',
      data: await rpc<Hex>(url, 'eth_call', [
        { to: net.load!.workload, data: encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'counter' }) },
        'latest',
      ]),
    });
    expect(counter).toBeGreaterThan(0n);

    // The load goes on being accepted after the rollovers (a lost nonce or balance would refuse it).
    const before = Object.values(counts).reduce((sum, n) => sum + n, 0);
    await eventually(
      () => (Object.values(net.load!.counts()).reduce((sum, n) => sum + n, 0) > before + 5 ? true : undefined),
      10_000,
      'more load transactions accepted',
    );
  }, 90_000);
});
