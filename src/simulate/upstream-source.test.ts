import { describe, expect, it } from 'vitest';
import { createStateReads } from './upstream-source.ts';
import type { CallRpc } from '../jsonrpc/protocol.ts';

/** A node that counts its calls: every account has 1 wei, nonce 0 and `codeBytes` of code. */
function node(codeBytes: number) {
  const calls: string[] = [];
  const blocks: unknown[] = [];
  const call: CallRpc = async (method, params) => {
    calls.push(`${method}:${String(params[0])}`);
    blocks.push(params[params.length - 1]);
    if (method === 'eth_getBalance') return '0x1';
    if (method === 'eth_getTransactionCount') return '0x0';
    if (method === 'eth_getCode') return `0x${'ab'.repeat(codeBytes)}`;
    return `0x${'0'.repeat(64)}`;
  };
  return { call, calls, blocks };
}

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as const;
const block = { hash: `0x${'11'.repeat(32)}` as const };

describe('createStateReads', () => {
  it('answers a warm read from the cache and keys reads by the block hash', async () => {
    const { call, calls, blocks } = node(10);
    const reads = createStateReads();
    const first = await reads.at(block, call).account(address(1));
    const again = await reads.at(block, call).account(address(1));
    expect(again).toEqual(first);
    expect(calls).toHaveLength(3);
    await reads.at({ hash: `0x${'22'.repeat(32)}` }, call).account(address(1));
    expect(calls, 'another block hash (a reorg) reads again').toHaveLength(6);
    expect(blocks[0], 'reads name the block by hash (EIP-1898)').toEqual({ blockHash: block.hash });
  });

  it('keeps the most recently used entries: a hit moves an entry to the back', async () => {
    const { call, calls } = node(100_000);
    const reads = createStateReads(1_000_000);
    for (let i = 1; i <= 4; i++) await reads.at(block, call).account(address(i));
    await reads.at(block, call).account(address(1));
    await reads.at(block, call).account(address(5));
    expect(calls).toHaveLength(15);
    await reads.at(block, call).account(address(1));
    expect(calls, 'the account used again stayed').toHaveLength(15);
    await reads.at(block, call).account(address(2));
    expect(calls, 'the least recently used account left').toHaveLength(18);
  });

  it('is bounded by bytes: large code pushes the oldest entries out', async () => {
    const { call, calls } = node(100_000);
    const reads = createStateReads(1_000_000);
    for (let i = 1; i <= 20; i++) await reads.at(block, call).account(address(i));
    expect(calls).toHaveLength(60);
    await reads.at(block, call).account(address(20));
    expect(calls, 'the newest account is still held').toHaveLength(60);
    await reads.at(block, call).account(address(1));
    expect(calls, 'the oldest account was evicted and is read again').toHaveLength(63);
  });

  it('does not keep a failed read', async () => {
    let fail = true;
    const reads = createStateReads();
    const call: CallRpc = async () => {
      if (fail) throw new Error('upstream down');
      return '0x5';
    };
    await expect(reads.at(block, call).storage(address(1), '0x0')).rejects.toThrow('upstream down');
    fail = false;
    expect(await reads.at(block, call).storage(address(1), '0x0')).toBe(5n);
  });
});
