import { describe, expect, it } from 'vitest';
import {
  compareAnswers,
  compareKeyedLists,
  compareValues,
  emptyComparison,
  leafEqual,
  ONLY_GATEWAY,
  type Answer,
  type BlockShape,
} from './compare.ts';
import { logKey } from './snapshot.ts';

const complete: BlockShape = { building: false, transactions: 3, sealedTransactions: 3 };
const partial: BlockShape = { building: true, transactions: 2, sealedTransactions: 5 };
const builtComplete: BlockShape = { building: true, transactions: 5, sealedTransactions: 5 };
const zero = `0x${'0'.repeat(64)}`;
const root = `0x${'ab'.repeat(32)}`;
/** compareValues / compareAnswers into a fresh comparison. */
const values = (field: string, gateway: unknown, node: unknown, shape: BlockShape | undefined) =>
  compareValues(field, gateway, node, shape, emptyComparison());
const answers = (method: string, gateway: Answer, node: Answer, shape: BlockShape | undefined) =>
  compareAnswers(method, gateway, node, shape, emptyComparison());

describe('leafEqual', () => {
  it('compares hex case-insensitively but digit for digit', () => {
    expect(leafEqual('0xAbC', '0xabc')).toBe(true);
    expect(leafEqual('0x0ae3', '0xae3')).toBe(false);
    expect(leafEqual('0x1b', '0x1')).toBe(false);
    expect(leafEqual(false, false)).toBe(true);
    expect(leafEqual(null, '0x0')).toBe(false);
  });
});

describe('compareValues', () => {
  it('names each differing leaf by method and path, folding array positions', () => {
    const gateway = {
      number: '0x5',
      transactions: [
        { s: '0x0ae3', v: '0x1' },
        { s: '0x1', v: '0x1b' },
      ],
    };
    const node = {
      number: '0x5',
      transactions: [
        { s: '0xae3', v: '0x1' },
        { s: '0x1', v: '0x1' },
      ],
    };
    const out = values('eth_getBlockByNumber[full]', gateway, node, complete);
    expect(out.mismatches).toEqual([
      { field: 'eth_getBlockByNumber[full].transactions[].s', gateway: '0x0ae3', node: '0xae3' },
      { field: 'eth_getBlockByNumber[full].transactions[].v', gateway: '0x1b', node: '0x1' },
    ]);
    // number, the list, and four leaves
    expect(out.compared).toBe(6);
  });

  it('a field the node has and the gateway lacks is a mismatch; one only the gateway has is listed, not counted', () => {
    const out = values('eth_getBlockByNumber[hashes]', { a: '0x1', yParity: '0x0' }, { a: '0x1', requestsHash: root }, complete);
    expect(out.mismatches).toEqual([{ field: 'eth_getBlockByNumber[hashes].requestsHash', gateway: undefined, node: root }]);
    expect(out.notCompared).toEqual([{ field: 'eth_getBlockByNumber[hashes].yParity', reason: ONLY_GATEWAY }]);
  });

  it('a list of another length is a mismatch of its length', () => {
    const out = values('eth_getBlockReceipts', [{ a: 1 }, { a: 2 }], [{ a: 1 }], complete);
    expect(out.mismatches).toEqual([{ field: 'eth_getBlockReceipts.length', gateway: 2, node: 1 }]);
  });

  it('a complete block with its hash compares every header field, zeros included', () => {
    const out = values(
      'eth_getBlockByNumber[hashes]',
      { hash: root, transactionsRoot: zero, size: '0x0' },
      { hash: root, transactionsRoot: root, size: '0x635' },
      complete,
    );
    expect(out.mismatches.map((m) => m.field)).toEqual([
      'eth_getBlockByNumber[hashes].transactionsRoot',
      'eth_getBlockByNumber[hashes].size',
    ]);
  });

  it('a partial block being built leaves the sealing fields and its hash out, with the reason, and compares the rest', () => {
    const gateway = { hash: zero, stateRoot: root, gasUsed: '0x10', gasLimit: '0x2', transactions: [{ blockHash: null, value: '0x1' }] };
    const node = { hash: root, stateRoot: zero, gasUsed: '0x99', gasLimit: '0x3', transactions: [{ blockHash: root, value: '0x1' }] };
    const out = values('eth_getBlockByNumber[full]', gateway, node, partial);
    expect(out.mismatches).toEqual([{ field: 'eth_getBlockByNumber[full].gasLimit', gateway: '0x2', node: '0x3' }]);
    expect(out.notCompared.map((entry) => entry.field).sort()).toEqual([
      'eth_getBlockByNumber[full].gasUsed',
      'eth_getBlockByNumber[full].hash',
      'eth_getBlockByNumber[full].stateRoot',
      'eth_getBlockByNumber[full].transactions[].blockHash',
    ]);
  });

  it("a transaction of a block being built may lack blockTimestamp (no block hash yet), but not a sealed block's, nor a log", () => {
    const gatewayTx = { blockHash: null, value: '0x1' };
    const nodeTx = { blockHash: root, blockTimestamp: '0x6b08', value: '0x1' };
    const building = values('eth_getTransactionByHash', gatewayTx, nodeTx, partial);
    expect(building.mismatches).toEqual([]);
    expect(building.notCompared.map((entry) => entry.field)).toContain('eth_getTransactionByHash.blockTimestamp');
    const inBlock = values('eth_getBlockByNumber[full]', { transactions: [gatewayTx] }, { transactions: [nodeTx] }, partial);
    expect(inBlock.mismatches).toEqual([]);
    const sealed = values('eth_getTransactionByHash', { ...gatewayTx, blockHash: root }, nodeTx, complete);
    expect(sealed.mismatches).toEqual([{ field: 'eth_getTransactionByHash.blockTimestamp', gateway: undefined, node: '0x6b08' }]);
    const log = values('eth_getLogs', [{ blockHash: null }], [{ blockHash: root, blockTimestamp: '0x6b08' }], partial);
    expect(log.mismatches.map((m) => m.field)).toEqual(['eth_getLogs[].blockTimestamp']);
  });

  it('a complete block being built may leave a placeholder, but a value it gives must be right', () => {
    const out = values(
      'eth_getBlockByNumber[hashes]',
      { hash: zero, stateRoot: root, transactionsRoot: zero },
      { hash: root, stateRoot: zero, transactionsRoot: root },
      builtComplete,
    );
    expect(out.mismatches).toEqual([{ field: 'eth_getBlockByNumber[hashes].stateRoot', gateway: root, node: zero }]);
    expect(out.notCompared.map((entry) => entry.field).sort()).toEqual([
      'eth_getBlockByNumber[hashes].hash',
      'eth_getBlockByNumber[hashes].transactionsRoot',
    ]);
  });

  it('a receipt of a block being built: its own gasUsed and logsBloom are compared (they are not the header)', () => {
    const out = values(
      'eth_getTransactionReceipt',
      { gasUsed: '0x5', logsBloom: zero, blockHash: null },
      { gasUsed: '0x6', logsBloom: zero, blockHash: root },
      partial,
    );
    expect(out.mismatches).toEqual([{ field: 'eth_getTransactionReceipt.gasUsed', gateway: '0x5', node: '0x6' }]);
  });

  it('a wrong block hash is a mismatch even in a block being built', () => {
    const out = values('eth_getTransactionByHash', { blockHash: `0x${'cd'.repeat(32)}` }, { blockHash: root }, partial);
    expect(out.mismatches).toHaveLength(1);
  });
});

describe('compareAnswers', () => {
  it('an error where the node has a result is a mismatch of <method>.error', () => {
    const out = answers('eth_getBalance', { error: { code: -32000, message: 'header not found' } }, { result: '0x1' }, undefined);
    expect(out.mismatches).toEqual([{ field: 'eth_getBalance.error', gateway: 'error -32000: header not found', node: '0x1' }]);
  });
  it('the same error code on both sides is equal', () => {
    const out = answers(
      'eth_call',
      { error: { code: 3, message: 'execution reverted' } },
      { error: { code: 3, message: 'reverted' } },
      undefined,
    );
    expect(out.mismatches).toEqual([]);
    expect(out.compared).toBe(1);
  });
});

describe('compareKeyedLists (eth_getLogs)', () => {
  const log = (tx: string, index: string, data = '0x') => ({ transactionHash: tx, logIndex: index, data });
  it('logs of other blocks are extra entries and a length mismatch, not a shifted list; a changed log is named by its field', () => {
    const node = [log('0xa', '0x0'), log('0xa', '0x1'), log('0xb', '0x2', '0x01')];
    const gateway = [log('0x9', '0x0'), log('0x9', '0x1'), log('0xa', '0x0'), log('0xa', '0x1'), log('0xb', '0x2', '0x02')];
    const out = compareKeyedLists('eth_getLogs', gateway, node, logKey, complete, emptyComparison());
    expect(out.mismatches).toEqual([
      { field: 'eth_getLogs.length', gateway: 5, node: 3 },
      { field: 'eth_getLogs[]', gateway: 'entry 0x9#0', node: undefined },
      { field: 'eth_getLogs[]', gateway: 'entry 0x9#1', node: undefined },
      { field: 'eth_getLogs[].data', gateway: '0x02', node: '0x01' },
    ]);
  });
  it('a log the gateway left out is a missing entry', () => {
    const out = compareKeyedLists(
      'eth_getLogs',
      [log('0xa', '0x0')],
      [log('0xa', '0x0'), log('0xa', '0x1')],
      logKey,
      complete,
      emptyComparison(),
    );
    expect(out.mismatches).toContainEqual({ field: 'eth_getLogs[]', gateway: undefined, node: 'entry 0xa#1' });
  });
});
