import { describe, expect, it } from 'vitest';
import { keccak256, numberToHex, toHex, type Hex } from 'viem';
import type { Answer } from './compare.ts';
import type { Endpoint } from './endpoint.ts';
import { judgeHeight } from './judge.ts';
import type { Snapshot } from './snapshot.ts';
import { createTally } from './tally.ts';

/** Endpoints as tables: a call's answer by method, given its params. */
const endpoint = (name: string, answers: Record<string, (params: readonly unknown[]) => unknown>): Endpoint => ({
  url: name,
  async call(method, params): Promise<Answer> {
    const answer = answers[method];
    if (!answer) throw new Error(`${name}: unexpected ${method}`);
    return { result: answer(params) };
  },
});

const h = (label: string): Hex => keccak256(toHex(label));
const sealedHash = h('sealed 9');
const replacedHash = h('replaced 9');
const left = h('tx left out');
const kept = h('tx kept');

/** A Denim-like height 9: the gateway served `replacedHash` with [kept, left]; the node sealed `sealedHash` with [kept]. */
const replacedSnapshot: Snapshot = {
  identity: { number: 9n, hash: replacedHash, transactions: [kept, left] },
  seenAtMs: 0,
  calls: [{ label: 'eth_getBlockByNumber[hashes]', method: 'eth_getBlockByNumber', params: ['pending', false], answer: { result: {} } }],
};
const node = endpoint('node', {
  eth_getBlockByNumber: () => ({ number: '0x9', hash: sealedHash, transactions: [kept] }),
});

describe('judgeHeight: a block the node did not seal', () => {
  it('is counted as replaced when the gateway withdrew it', async () => {
    const tally = createTally();
    const gateway = endpoint('gateway', {
      eth_getBlockByNumber: () => ({ number: '0xa', hash: h('block 10'), transactions: [left] }),
      eth_getTransactionByHash: () => ({ hash: left, blockNumber: '0xa', blockHash: h('block 10') }),
    });
    await judgeHeight(9n, [replacedSnapshot], { gateway, node, tally, concurrency: 4 });
    expect(tally.summary()).toMatchObject({ replaced: 1, mismatches: 0, blocks: 0 });
  });

  it('is a mismatch when the gateway still serves it as pending after the node sealed another', async () => {
    const tally = createTally();
    const gateway = endpoint('gateway', {
      eth_getBlockByNumber: () => ({ number: '0x9', hash: replacedHash, transactions: [kept, left] }),
      eth_getTransactionByHash: () => ({ hash: left, blockNumber: '0x9', blockHash: replacedHash }),
    });
    await judgeHeight(9n, [replacedSnapshot], { gateway, node, tally, concurrency: 4 });
    expect(tally.summary()).toMatchObject({
      replaced: 0,
      mismatchesByField: { 'replaced.eth_getBlockByNumber[pending]': 1, 'replaced.eth_getTransactionByHash': 1 },
    });
  });

  it('is a mismatch when a left-out transaction is still answered as part of that height', async () => {
    const tally = createTally();
    const gateway = endpoint('gateway', {
      eth_getBlockByNumber: () => ({ number: '0xa', hash: h('block 10'), transactions: [] }),
      eth_getTransactionByHash: () => ({ hash: left, blockNumber: numberToHex(9), blockHash: null }),
    });
    await judgeHeight(9n, [replacedSnapshot], { gateway, node, tally, concurrency: 4 });
    expect(tally.summary().mismatchesByField).toEqual({ 'replaced.eth_getTransactionByHash': 1 });
  });
});

describe('judgeHeight: a partial block', () => {
  it("holds a pending nonce between the node's nonce at the parent and at the block", async () => {
    const account = '0x1111111111111111111111111111111111111111';
    const snapshot = (nonce: string): Snapshot => ({
      identity: { number: 9n, hash: null, transactions: [kept] },
      seenAtMs: 0,
      calls: [
        { label: 'eth_getTransactionCount', method: 'eth_getTransactionCount', params: [account, 'pending'], answer: { result: nonce } },
      ],
    });
    const twoTxNode = endpoint('node', {
      eth_getBlockByNumber: () => ({ number: '0x9', hash: sealedHash, transactions: [kept, left] }),
      eth_getTransactionCount: (params) => (params[1] === '0x8' ? '0x5' : '0x7'),
    });
    const gateway = endpoint('gateway', {});
    const tally = createTally();
    await judgeHeight(9n, [snapshot('0x6'), snapshot('0x7'), snapshot('0x4')], { gateway, node: twoTxNode, tally, concurrency: 4 });
    expect(tally.summary()).toMatchObject({
      blocks: 1,
      fieldsCompared: 3,
      mismatchesByField: { 'eth_getTransactionCount(partial block)': 1 },
    });
  });
});

describe('judgeHeight: a pending post-exec (0x7d) transaction', () => {
  const postExec = h('post-exec 9');
  const receiptOf = (hash: Hex, type: string) => ({ transactionHash: hash, type, blockHash: sealedHash, status: '0x1' });
  const lagoonNode = endpoint('node', {
    eth_getBlockByNumber: () => ({ number: '0x9', hash: sealedHash, transactions: [kept, postExec] }),
    eth_getBlockReceipts: () => [receiptOf(kept, '0x2'), receiptOf(postExec, '0x7d')],
    eth_getTransactionReceipt: (params) => receiptOf(params[0] as Hex, params[0] === postExec ? '0x7d' : '0x2'),
  });
  const snapshot = (receipts: unknown[], byHash: Record<string, unknown>): Snapshot => ({
    identity: { number: 9n, hash: null, transactions: [kept, postExec] },
    seenAtMs: 0,
    calls: [
      { label: 'eth_getBlockReceipts', method: 'eth_getBlockReceipts', params: ['pending'], answer: { result: receipts } },
      ...Object.entries(byHash).map(([hash, result]) => ({
        label: 'eth_getTransactionReceipt',
        method: 'eth_getTransactionReceipt',
        params: [hash],
        answer: { result },
      })),
    ],
  });
  const pendingReceipt = { ...receiptOf(kept, '0x2'), blockHash: `0x${'00'.repeat(32)}` };

  it('has no receipt while pending: not compared, listed, and the other receipts still are', async () => {
    const tally = createTally();
    await judgeHeight(9n, [snapshot([pendingReceipt], { [postExec]: null })], {
      gateway: endpoint('gateway', {}),
      node: lagoonNode,
      tally,
      concurrency: 4,
    });
    const summary = tally.summary();
    expect(summary.mismatches).toBe(0);
    expect(summary.fieldsCompared).toBeGreaterThan(0);
    expect(Object.keys(summary.notCompared)).toContain('eth_getTransactionReceipt(post-exec, pending)');
  });

  it('a missing receipt of another transaction is still a mismatch', async () => {
    const tally = createTally();
    await judgeHeight(9n, [snapshot([], { [kept]: null })], { gateway: endpoint('gateway', {}), node: lagoonNode, tally, concurrency: 4 });
    expect(Object.keys(tally.summary().mismatchesByField).sort()).toEqual(['eth_getBlockReceipts.length', 'eth_getTransactionReceipt']);
  });
});

describe('judgeHeight: a node without the height', () => {
  it('is an upstream error naming the height, not a mismatch', async () => {
    const tally = createTally();
    const empty = endpoint('node', { eth_getBlockByNumber: () => null });
    await expect(
      judgeHeight(9n, [replacedSnapshot], { gateway: endpoint('gateway', {}), node: empty, tally, concurrency: 4 }),
    ).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID',
      message: 'the node has no block 9 though its head is past it',
    });
    expect(tally.summary()).toMatchObject({ replaced: 0, mismatchesByField: {} });
  });
});
