import { numberToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { JsonRpcError } from '../../src/errors.ts';
import { forkSourceDispatch } from './fork-source.ts';
import { createHistoryRing, type RingBlock } from './history-ring.ts';
import { prunedView } from './pruned-view.ts';
import { createStateMirror, emptyMirrorTouched } from './state-mirror.ts';

const A: Hex = '0x00000000000000000000000000000000000000aa';
const TOPIC: Hex = `0x${'11'.repeat(32)}`;
const hashOf = (n: number): Hex => numberToHex(n, { size: 32 });
const txHash = (n: number): Hex => numberToHex(1000 + n, { size: 32 });

function block(n: number): RingBlock {
  return { number: numberToHex(n), hash: hashOf(n), parentHash: hashOf(n - 1), transactions: [{ hash: txHash(n), from: A }] };
}
const receipt = (n: number) => ({ transactionHash: txHash(n), logs: [{ address: A, topics: [TOPIC], blockNumber: numberToHex(n) }] });

/** A ring of blocks 1..6 keeping 4 (3..6), a mirror whose A balance is the block number from 3 on. */
async function fixture() {
  const ring = createHistoryRing(4);
  const mirror = createStateMirror();
  for (let n = 1; n <= 6; n++) {
    ring.add(block(n), [receipt(n)]);
    const touched = emptyMirrorTouched();
    touched.accounts.add(A);
    await mirror.update(async <R>(method: string) => (method === 'eth_getBalance' ? numberToHex(n) : '0x0') as R, BigInt(n), touched);
    mirror.prune(ring.oldest()!);
  }
  const dispatch = forkSourceDispatch({ chainId: 1337, ring, mirror }, () => 6n);
  const call = (method: string, params: unknown[] = []) => dispatch({ id: 1, method, params });
  return { ring, mirror, call };
}

describe('history ring and fork source', () => {
  it('keeps the newest blocks and forgets the older ones, with their transactions', async () => {
    const { ring } = await fixture();
    expect(ring.size()).toBe(4);
    expect(ring.oldest()).toBe(3n);
    expect(ring.byNumber(2n)).toBeUndefined();
    expect(ring.transaction(txHash(2))).toBeUndefined();
    expect(ring.transaction(txHash(5))?.index).toBe(0);
    expect(ring.byHash(hashOf(4))?.number).toBe('0x4');
  });

  it('answers blocks, transactions, receipts and logs from the ring, null below it', async () => {
    const { call } = await fixture();
    expect(await call('eth_chainId')).toBe('0x539');
    expect(await call('eth_getBlockByNumber', ['0x5', false])).toMatchObject({ hash: hashOf(5), transactions: [txHash(5)] });
    expect(await call('eth_getBlockByNumber', ['0x5', true])).toMatchObject({ transactions: [{ hash: txHash(5), from: A }] });
    expect(await call('eth_getBlockByNumber', ['latest', false])).toMatchObject({ number: '0x6' });
    expect(await call('eth_getBlockByNumber', ['0x2', false])).toBeNull();
    expect(await call('eth_getBlockByHash', [hashOf(3), false])).toMatchObject({ number: '0x3' });
    expect(await call('eth_getTransactionReceipt', [txHash(4)])).toMatchObject({ transactionHash: txHash(4) });
    expect(await call('eth_getTransactionReceipt', [txHash(1)])).toBeNull();
    const logs = (await call('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x5', topics: [TOPIC] }])) as { blockNumber: Hex }[];
    expect(logs.map((log) => log.blockNumber)).toEqual(['0x3', '0x4', '0x5']);
    expect(await call('eth_getLogs', [{ blockHash: hashOf(6) }])).toHaveLength(1);
    await expect(call('eth_sendRawTransaction', ['0x00'])).rejects.toThrow(/not found|eth_sendRawTransaction/);
  });

  it('answers state at every kept block and refuses older state, naming what is kept', async () => {
    const { call } = await fixture();
    expect(await call('eth_getBalance', [A, '0x3'])).toBe('0x3');
    expect(await call('eth_getBalance', [A, '0x5'])).toBe('0x5');
    expect(await call('eth_getBalance', [A, '0x6'])).toBe('0x6');
    await expect(call('eth_getBalance', [A, '0x2'])).rejects.toThrow('missing trie node: state at block 2 is not kept');
    await expect(call('eth_getBalance', [A, 'nonsense'])).rejects.toThrow('eth_getBalance: params[1]: expected hex, got "nonsense"');
  });

  it('the devnet RPC over it: null for blocks below the window, a pruned node error for state there', async () => {
    const failing = async (): Promise<unknown> => {
      throw new JsonRpcError(-32603, `Response '{"jsonrpc":"2.0","id":7,"result":null}' failed to parse with expected type 'L1RpcBlock'`);
    };
    const view = prunedView(() => 3n, failing);
    expect(await view({ id: 1, method: 'eth_getBlockByNumber', params: ['0x2', false] })).toBeNull();
    expect(await view({ id: 1, method: 'eth_getTransactionReceipt', params: [txHash(1)] })).toBeNull();
    await expect(view({ id: 1, method: 'eth_getBalance', params: [A, '0x2'] })).rejects.toThrow(
      'missing trie node: the state at block 2 is not kept (the devnet keeps blocks 3 to its head)',
    );
    // Any other failure goes through as it was.
    await expect(view({ id: 1, method: 'eth_call', params: [{}, '0x4'] })).rejects.toThrow(/failed to parse/);
  });
});
