import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import type { CallRpc } from '../../jsonrpc/protocol.ts';
import { l1OriginOf } from './l1-witness.ts';

/** The agreed block's L1 origin read from its L1-info deposit: the forms derivation cannot start from are refused, named. */
const hash = `0x${'11'.repeat(32)}` as Hex;
const l2 =
  (block: unknown): CallRpc =>
  async (method, params) => {
    expect([method, params]).toEqual(['eth_getBlockByHash', [hash, true]]);
    return block;
  };

describe('l1OriginOf', () => {
  it('refuses a missing block, a block whose first transaction is not a deposit, and the Bedrock form', async () => {
    await expect(l1OriginOf(l2(null), hash)).rejects.toMatchObject({ code: 'WITNESS_MISSING', message: expect.stringContaining(hash) });
    await expect(l1OriginOf(l2({ transactions: [{ type: '0x2', input: '0x' }] }), hash)).rejects.toMatchObject({
      code: 'WITNESS_RPC',
      message: expect.stringContaining('is not the L1-info deposit'),
    });
    await expect(l1OriginOf(l2({ transactions: [] }), hash)).rejects.toMatchObject({
      code: 'WITNESS_RPC',
      message: expect.stringContaining('no transactions'),
    });
    const bedrock = encodeFunctionData({
      abi: parseAbi(['function setL1BlockValues(uint64,uint64,uint256,bytes32,uint64,bytes32,uint256,uint256)']),
      args: [7n, 1n, 1n, hash, 0n, hash, 0n, 0n],
    });
    await expect(l1OriginOf(l2({ transactions: [{ type: '0x7e', input: bedrock }] }), hash)).rejects.toMatchObject({
      code: 'FORK_UNSUPPORTED',
      message: expect.stringContaining('bedrock'),
    });
  });
});
