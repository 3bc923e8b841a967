import { describe, expect, it } from 'vitest';
import type { Answer } from './compare.ts';
import type { Endpoint } from './endpoint.ts';
import { recordPending, type RecordOptions } from './record.ts';

/**
 * One recording against a stand-in gateway (a unit test of this module: the checker against real
 * gateways is test/integration/check-gateway.test.ts and test/e2e/check-gateway-devnets.test.ts).
 * A flashblocks gateway may serve one height two ways a few milliseconds apart: the node's sealed
 * block with its hash while its view is a step behind, then its own block being built (hash zero)
 * once the last flashblock is in. A snapshot that mixes the two is kept as moved, not judged as one
 * version (it once made a right answer count as a mismatch under load).
 */
const tx = `0x${'ab'.repeat(32)}`;
const sealedHash = `0x${'47'.repeat(32)}`;
const zero = `0x${'00'.repeat(32)}`;
const block = (hash: string, full: boolean) => ({
  number: '0xb',
  hash,
  parentHash: `0x${'11'.repeat(32)}`,
  transactions: full ? [{ hash: tx, from: `0x${'01'.repeat(20)}`, to: `0x${'02'.repeat(20)}`, nonce: '0x0' }] : [tx],
});
const receipt = (blockHash: string) => ({
  transactionHash: tx,
  blockHash,
  logs: [{ blockHash, transactionHash: tx, topics: [], data: '0x' }],
});

/**
 * A gateway whose pending block has hash `first` for the first read (its receipts `receipts`),
 * `reads` for the block and logs reads, `after` for the last.
 */
function gateway(first: string, reads: string, after: string, receipts = first): Endpoint {
  let pendingHashesReads = 0;
  return {
    url: 'stand-in',
    async call(method, params): Promise<Answer> {
      const [tag, full] = params as [unknown, unknown];
      if (method === 'eth_getBlockByNumber' && tag === 'latest') return { result: { number: '0xa' } };
      if (method === 'eth_getBlockByNumber' && full === true) return { result: block(first, true) };
      if (method === 'eth_getBlockByNumber') return { result: block(pendingHashesReads++ === 0 ? reads : after, false) };
      if (method === 'eth_getBlockReceipts') return { result: [receipt(receipts)] };
      if (method === 'eth_getLogs') return { result: [{ blockHash: reads, transactionHash: tx }] };
      if (method === 'eth_getTransactionByHash') return { result: { hash: tx, blockHash: reads } };
      if (method === 'eth_getTransactionReceipt') return { result: receipt(reads) };
      return { result: '0x0' };
    },
  };
}

const options = (endpoint: Endpoint): RecordOptions => ({
  gateway: endpoint,
  seenTransactions: () => new Set(),
  recorded: new Set(),
  onOlder: () => {},
  concurrency: 4,
  maxAccounts: 2,
  maxTokenCalls: 0,
  baseTime: false,
});

describe('recordPending', () => {
  it('records one version when every read names the same block', async () => {
    expect((await recordPending(options(gateway(sealedHash, sealedHash, sealedHash)))).kind).toBe('recorded');
    expect((await recordPending(options(gateway(zero, zero, zero)))).kind).toBe('recorded');
  });

  it('keeps as moved a snapshot whose block and logs reads answered the block being built between two reads of the sealed one', async () => {
    const outcome = await recordPending(options(gateway(sealedHash, zero, sealedHash)));
    expect(outcome.kind).toBe('moved');
    // Only the reads of step 1 (they name their block) are kept.
    if (outcome.kind === 'moved')
      expect(outcome.snapshot?.calls.map((call) => call.label)).toEqual(['eth_getBlockByNumber[full]', 'eth_getBlockReceipts']);
  });

  it('and the other way round: reads of the sealed block inside a recording of the block being built', async () => {
    expect((await recordPending(options(gateway(zero, sealedHash, zero)))).kind).toBe('moved');
  });

  it('keeps nothing of a first read whose receipts name the other version of the same transactions', async () => {
    for (const [first, receipts] of [
      [zero, sealedHash],
      [sealedHash, zero],
    ]) {
      const outcome = await recordPending(options(gateway(first!, first!, first!, receipts)));
      expect(outcome).toEqual({ kind: 'moved' });
    }
  });
});
