import { describe, expect, it } from 'vitest';
import { decodeFunctionData, erc20Abi, keccak256, numberToHex, toHex, type Hex } from 'viem';
import { BASE_TIME_PREDEPLOY } from '../op/basetime.ts';
import { TRANSFER_TOPIC } from '../simulate/transfers.ts';
import { firstTransactionsOf, identityKey, identityOf, relate, statePlan } from './snapshot.ts';

const h = (label: string): Hex => keccak256(toHex(label));
const tx = (label: string) => h(`tx ${label}`);
const zero = `0x${'0'.repeat(64)}`;

describe('identityOf / identityKey', () => {
  it('reads number, hash (null for zero) and transaction hashes of either block form', () => {
    const hashes = identityOf({ number: '0x10', hash: zero, transactions: [tx('a'), tx('b')] });
    const full = identityOf({ number: '0x10', hash: null, transactions: [{ hash: tx('a') }, { hash: tx('b') }] });
    expect(hashes).toEqual({ number: 16n, hash: null, transactions: [tx('a'), tx('b')] });
    expect(identityKey(full)).toBe(identityKey(hashes));
    expect(identityKey(identityOf({ number: '0x10', hash: zero, transactions: [tx('a')] }))).not.toBe(identityKey(hashes));
  });
  it('refuses a block without a number', () => {
    expect(() => identityOf({ hash: zero })).toThrow(/without a number/);
  });
});

describe('relate', () => {
  const sealed = { number: 16n, hash: h('block 16'), transactions: [tx('a'), tx('b'), tx('c')] };
  it('a block being built with the first transactions of the sealed block is compared as partial', () => {
    expect(relate({ number: 16n, hash: null, transactions: [tx('a'), tx('b')] }, sealed)).toEqual({
      kind: 'sealed',
      shape: { building: true, transactions: 2, sealedTransactions: 3 },
    });
  });
  it('the sealed block itself (by hash) is compared whole', () => {
    expect(relate({ number: 16n, hash: sealed.hash, transactions: sealed.transactions }, sealed)).toMatchObject({
      kind: 'sealed',
      shape: { building: false },
    });
  });
  it('another hash, or transactions that are not the first of the sealed ones, is a replaced block, with what was dropped', () => {
    expect(relate({ number: 16n, hash: h('other'), transactions: [tx('a')] }, sealed)).toMatchObject({ kind: 'replaced', dropped: [] });
    expect(relate({ number: 16n, hash: null, transactions: [tx('a'), tx('x')] }, sealed)).toMatchObject({
      kind: 'replaced',
      dropped: [tx('x')],
    });
    // A flashblocks reorg: the sealed block left the last pre-confirmed transaction out.
    expect(relate({ number: 16n, hash: null, transactions: [...sealed.transactions, tx('d')] }, sealed)).toMatchObject({
      kind: 'replaced',
      dropped: [tx('d')],
    });
  });
});

describe('statePlan', () => {
  const a = '0x1111111111111111111111111111111111111111';
  const b = '0x2222222222222222222222222222222222222222';
  const token = '0x3333333333333333333333333333333333333333';
  const pad = (address: string) => `0x${address.slice(2).padStart(64, '0')}`;
  const block = {
    transactions: [
      { hash: tx('1'), from: a, to: token },
      { hash: tx('2'), from: b, to: null },
    ],
  };
  const receipts = [{ logs: [{ address: token, topics: [TRANSFER_TOPIC, pad(a), pad(b)] }] }, { logs: [] }];
  it('reads balance, nonce, code and slot 0 of the touched accounts (newest first), balanceOf of transfer recipients and BaseTime', () => {
    const plan = statePlan(block, receipts, { maxAccounts: 8, maxTokenCalls: 2, baseTime: true });
    const accounts = [...new Set(plan.filter((read) => read.method === 'eth_getBalance').map((read) => read.params[0]))];
    expect(accounts).toEqual([b, a, token]);
    expect(plan.filter((read) => read.params[0] === b).map((read) => read.method)).toEqual([
      'eth_getBalance',
      'eth_getTransactionCount',
      'eth_getCode',
      'eth_getStorageAt',
    ]);
    expect(plan.find((read) => read.method === 'eth_getStorageAt')!.params[1]).toBe(numberToHex(0, { size: 32 }));
    const calls = plan.filter((read) => read.method === 'eth_call');
    expect(calls.map((read) => read.label)).toEqual(['eth_call[balanceOf]', 'eth_call[timestampMs]']);
    const balanceOf = calls[0]!.params[0] as { to: string; data: Hex };
    expect(balanceOf.to).toBe(token);
    expect(decodeFunctionData({ abi: erc20Abi, data: balanceOf.data }).args).toEqual([b.toLowerCase()]);
    expect((calls[1]!.params[0] as { to: string }).to).toBe(BASE_TIME_PREDEPLOY);
    // Only nonces and the clock are monotone.
    expect(plan.filter((read) => read.monotone).map((read) => read.label)).toEqual([
      'eth_getTransactionCount',
      'eth_getTransactionCount',
      'eth_getTransactionCount',
      'eth_call[timestampMs]',
    ]);
  });
  it('keeps to its bounds', () => {
    const plan = statePlan(block, receipts, { maxAccounts: 1, maxTokenCalls: 0, baseTime: false });
    expect(plan.map((read) => read.params[0])).toEqual([b, b, b, b]);
  });
});

describe('firstTransactionsOf', () => {
  const shape = { building: true, transactions: 2, sealedTransactions: 3 };
  it("cuts the node's block, receipts and logs to the partial block's transactions", () => {
    expect(firstTransactionsOf('eth_getBlockByNumber[full]', { result: { number: '0x1', transactions: [1, 2, 3] } }, shape)).toEqual({
      result: { number: '0x1', transactions: [1, 2] },
    });
    expect(firstTransactionsOf('eth_getBlockReceipts', { result: [1, 2, 3] }, shape)).toEqual({ result: [1, 2] });
    const logs = [{ transactionIndex: '0x0' }, { transactionIndex: '0x1' }, { transactionIndex: '0x2' }];
    expect(firstTransactionsOf('eth_getLogs', { result: logs }, shape)).toEqual({ result: logs.slice(0, 2) });
  });
  it('leaves a complete block whole', () => {
    const answer = { result: [1, 2, 3] };
    expect(firstTransactionsOf('eth_getBlockReceipts', answer, { ...shape, transactions: 3 })).toBe(answer);
  });
});
