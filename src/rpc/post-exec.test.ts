import { readFileSync } from 'node:fs';
import { keccak256, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { extendBlock, startBlock, type AssembledBlock } from '../chain/assemble.ts';
import { encodePostExecTx } from '../op/post-exec.ts';
import { createMetadataExecutor } from '../execute/metadata.ts';
import { blockRecords, blockRecordSchema } from '../records/blocks.ts';
import { topics } from '../records/topics.ts';
import { flashblockSchema } from '../schemas/flashblock.ts';
import { apply, findPendingTransaction, initialViewState, latestPending, type ViewState } from '../view/state.ts';
import { sharedPath } from '../../test/helpers/shared.ts';
import { createTransactionFormatter, formatPendingBlock } from './format.ts';

/**
 * A Lagoon subblocks stream from feed to RPC: the real Unichain Sepolia sequence (5 flashblocks, 6
 * transactions, era A receipts) with a `diff.post_exec_tx` added to its later subblocks, as
 * specs lagoon/post-exec.md § Subblocks describes it (no Lagoon feed was recorded: Lagoon is not
 * live on any chain before 2026-12-10). Each subblock restates the post-exec transaction; the last
 * one's is the block's.
 */
const raw = () =>
  JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/unichain-sepolia-35535698-with-receipts.json'), 'utf8')) as {
    base?: { block_number: string | number };
    diff: Record<string, unknown>;
  }[];

function postExecFor(blockNumber: bigint, entries: [number, bigint][]) {
  return encodePostExecTx({ version: 1, blockNumber, gasRefundEntries: entries.map(([index, gasRefund]) => ({ index, gasRefund })) });
}

/** The sequence with post-exec transactions by subblock index; returns the view after each and the last assembled block. */
async function stream(postExec: (blockNumber: bigint) => Record<number, ReturnType<typeof postExecFor> | undefined>) {
  const messages = raw();
  const blockNumber = BigInt(messages[0]!.base!.block_number);
  const byIndex = postExec(blockNumber);
  const parsed = messages.map((message, i) =>
    flashblockSchema.parse(byIndex[i] ? { ...message, diff: { ...message.diff, post_exec_tx: byIndex[i]!.raw } } : message),
  );
  const executor = createMetadataExecutor();
  let state: ViewState = initialViewState();
  let block: AssembledBlock | undefined;
  let offset = 0n;
  for (const message of parsed) {
    block = block ? extendBlock(block, message) : startBlock(message);
    const output = await executor.execute(block);
    for (const record of blockRecords(block, output, 'metadata')) {
      if (record.topic === topics.blocks) expect(blockRecordSchema.safeParse(JSON.parse(record.value)).success).toBe(true);
      state = apply(state, { type: 'record', record: { ...record, partition: 0, offset: offset++, timestamp: 0 } });
    }
  }
  return { state, block: block!, blockNumber };
}

describe('Lagoon post-exec transaction through feed, log, view and RPC', () => {
  it('the pending block ends with the last subblock’s 0x7d transaction, in op-reth’s RPC shape; receipts carry its opGasRefund', async () => {
    let last: ReturnType<typeof postExecFor> | undefined;
    const { state, block, blockNumber } = await stream((n) => {
      last = postExecFor(n, [
        [2, 222n],
        [5, 555n],
      ]);
      return {
        2: postExecFor(n, [[1, 111n]]),
        3: postExecFor(n, [
          [1, 111n],
          [2, 200n],
        ]),
        4: last,
      };
    });
    // The log: the block record carries the latest post-exec transaction beside (not in) `transactions`.
    expect(block.transactions).toHaveLength(6);
    expect(block.postExecTx).toEqual({ hash: keccak256(last!.raw), raw: last!.raw });

    const pending = latestPending(state)!;
    const formatter = createTransactionFormatter();
    const rpcBlock = await formatPendingBlock(pending, true, formatter);
    const txs = rpcBlock.transactions as Record<string, unknown>[];
    expect(txs).toHaveLength(7);
    expect(txs[6]).toEqual({
      hash: last!.hash,
      type: '0x7d',
      gas: '0x0',
      value: '0x0',
      input: last!.input,
      blockHash: null,
      blockNumber: `0x${blockNumber.toString(16)}`,
      transactionIndex: '0x6',
      from: '0x0000000000000000000000000000000000000000',
      gasPrice: pending.header.baseFeePerGas,
    });
    expect((await formatPendingBlock(pending, false, formatter)).transactions).toEqual([
      ...block.transactions.map((tx) => tx.hash),
      last!.hash,
    ]);
    expect(findPendingTransaction(state, last!.hash)?.position).toBe(6);

    // opGasRefund from the last subblock's payload: set on 2 and 5, and no longer on 1 (only an earlier subblock named it).
    expect(pending.receipts.map((receipt) => receipt.opGasRefund)).toEqual([undefined, undefined, '0xde', undefined, undefined, '0x22b']);
    // No receipt is streamed for the post-exec transaction (post-exec.md § Subblocks): none is answered before sealing.
    expect(pending.receipts[6]).toBeUndefined();
  });

  it('a later subblock without post_exec_tx leaves the block without one (absence is not sticky either way)', async () => {
    const { state, block } = await stream((n) => ({ 1: postExecFor(n, [[1, 5n]]), 2: postExecFor(n, [[1, 5n]]) }));
    expect(block.postExecTx).toBeNull();
    const pending = latestPending(state)!;
    expect(pending.postExecTx).toBeNull();
    expect(pending.receipts.every((receipt) => receipt.opGasRefund === undefined)).toBe(true);
    expect((await formatPendingBlock(pending, false, createTransactionFormatter())).transactions).toHaveLength(6);
  });

  it('refuses a post_exec_tx that is not a 0x7d transaction, naming the field', () => {
    const message = raw()[1]!;
    const result = flashblockSchema.safeParse({ ...message, diff: { ...message.diff, post_exec_tx: '0x02c0' as Hex } });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({ path: ['diff', 'post_exec_tx'], message: expect.stringMatching(/0x7d/) });
  });

  it("the metadata executor takes a subblock receipts_root that counts the post-exec transaction's receipt", async () => {
    const { createMetricsRegistry } = await import('../obs/metrics.ts');
    const { receiptsRoot, fromRpcReceipt } = await import('../evm/receipts.ts');
    const plain = raw();
    const blockNumber = BigInt(plain[0]!.base!.block_number);
    const last = postExecFor(blockNumber, [[1, 9n]]);
    // The receipts of the whole block (a plain pass), then the last subblock's root with the 0x7d receipt appended.
    const receipts = [];
    const first = createMetadataExecutor();
    let block: AssembledBlock | undefined;
    for (const message of plain.map((m) => flashblockSchema.parse(m))) {
      block = block ? extendBlock(block, message) : startBlock(message);
      receipts.push(...(await first.execute(block)).receipts);
    }
    const cumulative = BigInt(receipts.at(-1)!.cumulativeGasUsed);
    const withPostExec = await receiptsRoot([
      ...receipts.map(fromRpcReceipt),
      { type: 0x7d, status: 1, cumulativeGasUsed: cumulative, logsBloom: `0x${'00'.repeat(256)}`, logs: [] },
    ]);
    const lastIndex = plain.length - 1;
    plain[lastIndex] = { ...plain[lastIndex]!, diff: { ...plain[lastIndex]!.diff, post_exec_tx: last.raw, receipts_root: withPostExec } };
    const metrics = createMetricsRegistry({ defaults: false });
    const executor = createMetadataExecutor({ metrics });
    block = undefined;
    for (const message of plain.map((m) => flashblockSchema.parse(m))) {
      block = block ? extendBlock(block, message) : startBlock(message);
      await executor.execute(block);
    }
    const checks = await metrics.getSingleMetric('flashlog_executor_checks_total')!.get();
    expect(checks.values.map((sample) => [sample.labels.result, sample.value])).toEqual([['match', plain.length]]);
  });

  it('a blocks source: a node block ending with a 0x7d keeps its bytes from the node JSON and is served in the same shape, with its hash', async () => {
    const { rawTransaction } = await import('../source/raw-transaction.ts');
    const tx = postExecFor(7n, [[1, 3n]]);
    const nodeJson = {
      hash: tx.hash,
      type: '0x7d',
      gas: '0x0',
      value: '0x0',
      input: tx.input,
      from: '0x0000000000000000000000000000000000000000',
    };
    expect(rawTransaction(nodeJson)).toBe(tx.raw);
    expect(rawTransaction({ ...nodeJson, input: `${tx.input}00` })).toBeNull();
    const blockHash = `0x${'ab'.repeat(32)}`;
    const pending = {
      number: 7n,
      index: 0,
      payloadId: '0x0000000000000007',
      header: { timestamp: '0x10', baseFeePerGas: '0x3b9aca00', hash: blockHash },
      transactions: [{ hash: tx.hash, raw: tx.raw }],
      positionByHash: new Map(),
      receipts: [],
      logs: [],
      logsByAddress: new Map(),
      stateDiff: null,
    } as unknown as Parameters<ReturnType<typeof createTransactionFormatter>['transaction']>[0];
    expect(await createTransactionFormatter().transaction(pending, 0)).toEqual({
      hash: tx.hash,
      type: '0x7d',
      gas: '0x0',
      value: '0x0',
      input: tx.input,
      blockHash,
      blockTimestamp: '0x10',
      blockNumber: '0x7',
      transactionIndex: '0x0',
      from: '0x0000000000000000000000000000000000000000',
      gasPrice: '0x3b9aca00',
    });
  });
});
