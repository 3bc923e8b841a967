import { bytesToHex, hexToBytes, pad, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { configLog, configPayload, depositLog, ecotoneScalar, portal, systemConfigAddress } from '../../test/helpers/l1-logs.ts';
import { parseL1Info } from '../op/l1-info.ts';
import { parseRollupConfig } from '../op/rollup-config.ts';
import { attributesFor, l1BlobBaseFee, type L1Epoch } from './attributes.ts';
import type { SystemConfig } from './system-config.ts';

const rollup = parseRollupConfig({
  l2_chain_id: 10,
  block_time: 2,
  regolith_time: 0,
  canyon_time: 0,
  delta_time: 0,
  ecotone_time: 0,
  fjord_time: 0,
  granite_time: 0,
  holocene_time: 1000,
  isthmus_time: 1000,
  jovian_time: 2000,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});
const rules = { rollup, depositContract: portal, systemConfig: systemConfigAddress };
const config: SystemConfig = {
  batcher: '0x1111111111111111111111111111111111111111',
  overhead: pad('0x', { size: 32 }),
  scalar: ecotoneScalar(1, 2),
  gasLimit: 30_000_000n,
  eip1559Params: '0x000000fa00000006',
  operatorFeeParams: pad('0x', { size: 32 }),
  minBaseFee: 7n,
  daFootprintGasScalar: 0,
};
const from: Hex = '0x2222222222222222222222222222222222222222';
const deposit = (value: bigint, logIndex: number) =>
  depositLog({ from, to: from, mint: 0n, value, gas: 21_000n, isCreation: false, data: '0x' }, logIndex);
const epoch = (timestamp: bigint): L1Epoch => ({
  header: {
    hash: `0x${'aa'.repeat(32)}`,
    number: 500n,
    timestamp,
    baseFeePerGas: 9n,
    mixHash: `0x${'bb'.repeat(32)}`,
    parentBeaconBlockRoot: `0x${'cc'.repeat(32)}`,
    blobBaseFee: 1n,
  },
  receipts: [{ status: 'success', logs: [deposit(1n, 0), configLog(2, configPayload.gasLimit(60_000_000n), 1), deposit(2n, 2)] }],
});
const batchTx = hexToBytes('0x02c0ffee');

describe('attributesFor', () => {
  it("opens an epoch with the L1-info deposit, the epoch's user deposits, then the batch's transactions", () => {
    const { attributes, systemConfig } = attributesFor({ timestamp: 2002n, transactions: [batchTx] }, epoch(1990n), 0n, config, rules);
    const [info, first, second, last, ...rest] = attributes.transactions;
    expect(rest).toEqual([]);
    expect(parseL1Info((parseTransaction(info!) as { data: Hex }).data)).toMatchObject({
      form: 'jovian',
      sequenceNumber: 0n,
      l1BlockNumber: 500n,
    });
    expect([first, second].map((tx) => parseTransaction(tx!).value)).toEqual([1n, 2n]);
    expect(last).toBe(bytesToHex(batchTx));
    expect(systemConfig.gasLimit).toBe(60_000_000n);
    expect(attributes).toMatchObject({
      timestamp: 2002n,
      prevRandao: `0x${'bb'.repeat(32)}`,
      suggestedFeeRecipient: '0x4200000000000000000000000000000000000011',
      parentBeaconBlockRoot: `0x${'cc'.repeat(32)}`,
      gasLimit: 60_000_000n,
      eip1559Params: '0x000000fa00000006',
      minBaseFee: 7n,
      withdrawals: [],
      noTxPool: true,
    });
  });

  it("later blocks of the epoch carry no deposits and keep the parent's SystemConfig", () => {
    const { attributes } = attributesFor({ timestamp: 2004n, transactions: [] }, epoch(1990n), 1n, config, rules);
    expect(attributes.transactions).toHaveLength(1);
    expect(parseL1Info((parseTransaction(attributes.transactions[0]!) as { data: Hex }).data).sequenceNumber).toBe(1n);
    expect(attributes.gasLimit).toBe(30_000_000n);
  });

  it('sets the fork-gated fields only where their fork is active', () => {
    const { attributes } = attributesFor({ timestamp: 500n, transactions: [] }, epoch(490n), 1n, config, rules);
    expect(attributes.eip1559Params).toBeUndefined();
    expect(attributes.minBaseFee).toBeUndefined();
    expect(attributes.parentBeaconBlockRoot).toBe(`0x${'cc'.repeat(32)}`);
  });

  it('refuses an upgrade block and a block before its L1 origin, saying why', () => {
    expect(() => attributesFor({ timestamp: 2000n, transactions: [] }, epoch(1990n), 0n, config, rules)).toThrow(
      /L2 block at 2000 .*: the jovian activation block's upgrade deposits are not built/,
    );
    expect(() => attributesFor({ timestamp: 1502n, transactions: [] }, epoch(1600n), 0n, config, rules)).toThrow(
      /before its L1 origin's \(1600\)/,
    );
  });

  it("computes EIP-4844's blob base fee, 1 at no excess and rising with it", () => {
    expect(l1BlobBaseFee(0n, 5_007_716n)).toBe(1n);
    expect(l1BlobBaseFee(5_007_716n * 10n, 5_007_716n)).toBeGreaterThan(22_000n); // e^10 ≈ 22026
    expect(l1BlobBaseFee(5_007_716n * 10n, 5_007_716n)).toBeLessThan(22_027n);
  });
});
