import { LibZip } from 'solady';
import { concat, hexToBytes, numberToHex, toFunctionSelector, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { chainId, l1InfoCalldata, l1InfoDeposit, userTx } from '../../test/helpers/synthetic-op-block.ts';
import { attributesFromExtraData, blockExtraData, nextBaseFee } from './base-fee.ts';
import { blockDaFootprint, daFootprintGasScalarOf, estimatedDaSize, txDaFootprint } from './da-footprint.ts';
import type { BlockHeader } from './header.ts';
import { txFees } from './l1-cost.ts';
import { l1InfoSelectors, parseL1Info } from './l1-info.ts';
import { parseRollupConfig, rulesAt } from './rollup-config.ts';
import { emptyTrieRoot } from '../evm/op/witness-state.ts';

/**
 * Jovian's execution rules, each against op-geth v1.101702.3's own test vectors where it has them
 * (the values re-typed here as our cases; the files are cited per test).
 */

// op-geth consensus/misc/eip1559/eip1559_test.go opConfig(): Canyon at 10, Holocene at 12, Jovian at 14,
// elasticity 6, denominator 50 (Canyon 250).
const opConfig = parseRollupConfig({
  l2_chain_id: chainId,
  block_time: 2,
  regolith_time: 0,
  canyon_time: 10,
  holocene_time: 12,
  jovian_time: 14,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});
const params = (denominator: number, elasticity: number) =>
  concat([numberToHex(denominator, { size: 4 }), numberToHex(elasticity, { size: 4 })]);
const header = (over: Partial<BlockHeader>): BlockHeader => ({
  parentHash: emptyTrieRoot,
  sha3Uncles: emptyTrieRoot,
  miner: '0x4200000000000000000000000000000000000011',
  stateRoot: emptyTrieRoot,
  transactionsRoot: emptyTrieRoot,
  receiptsRoot: emptyTrieRoot,
  logsBloom: `0x${'00'.repeat(256)}`,
  difficulty: 0n,
  number: 32n,
  gasLimit: 30_000_000n,
  gasUsed: 0n,
  timestamp: 0n,
  extraData: '0x',
  mixHash: emptyTrieRoot,
  nonce: '0x0000000000000000',
  baseFeePerGas: 1n,
  ...over,
});

describe('Jovian base fee (op-geth consensus/misc/eip1559/eip1559_test.go TestCalcBaseFeeJovian)', () => {
  // gas limit 30M, denominator 50, elasticity 3 (target 10M) in the parent's extraData; the parent at 13
  // is Holocene (9-byte extraData: no minimum, no DA metering), at 14 Jovian (17 bytes).
  const target = 10_000_000n;
  const cases: [parentBaseFee: bigint, gasUsed: bigint, blobGasUsed: bigint, parentTime: bigint, minBaseFee: bigint, expected: bigint][] = [
    [1n, target - 1_000_000n, 0n, 13n, 1_000_000_000n, 1n],
    [1n, target, 0n, 14n, 1_000_000_000n, 1_000_000_000n],
    [1n, target + 1_000_000n, 0n, 14n, 1_000_000_000n, 1_000_000_000n],
    [2_000_000_000n, target + 10_000_000n, 0n, 14n, 1_000_000_000n, 2_040_000_000n],
    [1n, target - 1_000_000n, 0n, 14n, 1_000_000_000n, 1_000_000_000n],
    [2_097_152n, target - 1_000_000n, 0n, 14n, 2_000_000n, 2_092_958n],
    [10_000n, target - 1n, 0n, 14n, 10_000n, 10_000n],
    [10_000n, target + 1n, 0n, 14n, 10_000n, 10_001n],
    [10_000n, target, 30_000_000n, 13n, 1_000_000n, 10_000n],
    [10_000n, target, target + 1n, 14n, 10_000n, 10_001n],
    [2_000_000_000n, target, target + 10_000_000n, 14n, 1_000_000_000n, 2_040_000_000n],
  ];
  it.each(cases.map((c, i) => [i, ...c] as const))(
    'test %i: parent base fee %s, gasUsed %s, blobGasUsed %s at %s, minBaseFee %s → %s',
    (_, parentBaseFee, gasUsed, blobGasUsed, parentTime, minBaseFee, expected) => {
      const jovian = rulesAt(opConfig, parentTime).active('jovian');
      const extraData = jovian ? concat(['0x01', params(50, 3), numberToHex(minBaseFee, { size: 8 })]) : concat(['0x00', params(50, 3)]);
      const parent = header({ gasUsed, blobGasUsed, baseFeePerGas: parentBaseFee, timestamp: parentTime, extraData });
      expect(nextBaseFee(parent, opConfig, rulesAt(opConfig, parentTime + 2n))).toBe(expected);
    },
  );

  it('refuses a Jovian parent without version-1 extraData or without blobGasUsed, naming the field', () => {
    // op-geth eth/catalyst/api_optimism_test.go: "Jovian extraData should be 17 bytes, got 9".
    const holoceneForm = header({ timestamp: 14n, blobGasUsed: 0n, extraData: concat(['0x00', params(50, 3)]) });
    expect(() => nextBaseFee(holoceneForm, opConfig, rulesAt(opConfig, 16n))).toThrow(
      'parent header.extraData: Jovian extraData must be 17 bytes, version 1',
    );
    const zeroDenominator = header({
      timestamp: 14n,
      blobGasUsed: 0n,
      extraData: concat(['0x01', params(0, 3), numberToHex(0, { size: 8 })]),
    });
    expect(() => nextBaseFee(zeroDenominator, opConfig, rulesAt(opConfig, 16n))).toThrow('zero EIP-1559 denominator');
    const noBlobGas = header({ timestamp: 14n, extraData: concat(['0x01', params(50, 3), numberToHex(0, { size: 8 })]) });
    expect(() => nextBaseFee(noBlobGas, opConfig, rulesAt(opConfig, 16n))).toThrow('parent header.blobGasUsed');
  });
});

describe('Jovian extraData (version 1) from the payload attributes', () => {
  const jovian = rulesAt(opConfig, 14n);
  it('is 0x01 ‖ denominator ‖ elasticity ‖ minBaseFee, the config values for zero params', () => {
    expect(blockExtraData(jovian, params(250, 6), 1_000_000_000n)).toBe(
      concat(['0x01', params(250, 6), numberToHex(1_000_000_000n, { size: 8 })]),
    );
    expect(blockExtraData(jovian, params(0, 0), 0n)).toBe(concat(['0x01', params(250, 6), numberToHex(0, { size: 8 })]));
    expect(blockExtraData(rulesAt(opConfig, 12n), params(8, 2), 5n)).toBe(concat(['0x00', params(8, 2)]));
  });

  it('refuses what op-geth refuses, naming the field', () => {
    expect(() => blockExtraData(jovian, params(250, 6), undefined)).toThrow(
      'payload.minBaseFee: a Jovian block needs the minimum base fee',
    );
    expect(() => blockExtraData(jovian, params(250, 6), 2n ** 64n)).toThrow('payload.minBaseFee: expected a uint64');
    // op-geth consensus/misc/eip1559/eip1559_optimism_test.go TestValidateHolocene1559Params
    expect(() => blockExtraData(jovian, params(0, 1), 0n)).toThrow(
      'payload.eip1559Params: denominator and elasticity must both be zero or both non-zero',
    );
    expect(() => blockExtraData(jovian, params(1, 0), 0n)).toThrow('payload.eip1559Params');
  });

  it('reads back from a header: eip1559Params and minBaseFee (null before Jovian)', () => {
    const extraData = blockExtraData(jovian, params(250, 6), 123_456n);
    expect(attributesFromExtraData(extraData)).toEqual({ eip1559Params: params(250, 6), minBaseFee: numberToHex(123_456n) });
    expect(attributesFromExtraData(concat(['0x00', params(8, 2)]))).toEqual({ eip1559Params: params(8, 2), minBaseFee: null });
  });
});

describe('DA footprint (op-geth core/types/rollup_cost.go CalcDAFootprint, rollup_cost_test.go)', () => {
  // rollup_cost_test.go TestFlzCompressLen: an OP Mainnet contract call (tx 0x8eb9dd4e…b594), FastLZ size 202.
  const contractCall = hexToBytes(
    '0x02f901550a758302df1483be21b88304743f94f80e51afb613d764fa61751affd3313c190a86bb870151bd62fd12adb8e41ef24f3f000000000000000000000000000000000000000000000000000000000000006e000000000000000000000000af88d065e77c8cc2239327c5edb3a432268e5831000000000000000000000000000000000000000000000000000000000003c1e5000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000a00000000000000000000000000000000000000000000000000000000000000000148c89ed219d02f1a5be012c689b4f5b731827bebe000000000000000000000000c001a033fd89cb37c31b2cba46b6466e040c61fc9b2a3675a7f5f493ebd5ad77c497f8a07cdf65680e238392693019b4092f610222e71b7cec06449cb922b93b6a12744e',
  );

  it('per transaction: max(100, (836,500·fastLz − 42,585,600) / 1e6) · scalar, zero for deposits', () => {
    // (836_500·202 − 42_585_600) / 1e6 = 126.3874 → 126 bytes.
    expect(estimatedDaSize(contractCall)).toBe(126n);
    expect(txDaFootprint(contractCall, 400)).toBe(126n * 400n);
    // rollup_cost_test.go TestFjordL1CostFuncMinimumBounds: a FastLZ size up to 170 is below the 100-byte floor.
    expect(estimatedDaSize(new Uint8Array(1000))).toBe(100n); // FastLZ size 21
    expect(txDaFootprint(hexToBytes(l1InfoDeposit(l1InfoCalldata(400))), 400)).toBe(0n);
  });

  it('the block: Σ over its user transactions with the L1-info deposit scalar; over the gas limit is invalid', async () => {
    const txs = [l1InfoDeposit(l1InfoCalldata(800)), await userTx(0), await userTx(1, `0x${'ab'.repeat(300)}`)];
    const expected = txs
      .slice(1)
      .map((raw) => {
        const fastLz = BigInt((LibZip.flzCompress(raw).length - 2) / 2);
        const scaled = 836_500n * fastLz - 42_585_600n;
        return ((scaled < 100_000_000n ? 100_000_000n : scaled) / 1_000_000n) * 800n;
      })
      .reduce((a, b) => a + b);
    expect(blockDaFootprint(txs, 30_000_000n)).toBe(expected);
    expect(() => blockDaFootprint(txs, expected - 1n)).toThrow(`DA footprint ${expected} exceeds the block gas limit ${expected - 1n}`);
  });

  it('the scalar as op-geth v1.101702.3 reads it: the Jovian L1-info calldata, zero kept; the activation block has none', async () => {
    const user = await userTx(0);
    expect(daFootprintGasScalarOf([l1InfoDeposit(l1InfoCalldata(1234)), user])).toBe(1234);
    expect(daFootprintGasScalarOf([l1InfoDeposit(l1InfoCalldata(0)), user])).toBe(0);
    expect(daFootprintGasScalarOf([l1InfoDeposit(l1InfoCalldata()), l1InfoDeposit('0x')])).toBeUndefined();
    expect(blockDaFootprint([l1InfoDeposit(l1InfoCalldata())], 1n)).toBe(0n);
    expect(() => daFootprintGasScalarOf([l1InfoDeposit(l1InfoCalldata()), user])).toThrow('must hold only deposits');
    expect(() => daFootprintGasScalarOf([l1InfoDeposit(l1InfoCalldata(1234).slice(0, -2) as Hex), user])).toThrow('too short');
    const ecotoneSelector = concat([toFunctionSelector('setL1BlockValuesEcotone()'), l1InfoCalldata(5).slice(10) as Hex]);
    expect(() => daFootprintGasScalarOf([l1InfoDeposit(ecotoneSelector), user])).toThrow('is not setL1BlockValuesJovian');
    expect(() => daFootprintGasScalarOf([user])).toThrow('payload.transactions[0]: the L1-info deposit is missing');
  });
});

describe('L1-info deposit forms', () => {
  it('selectors are the keccak of the setters (op-geth rollup_cost.go: Isthmus 0x098999be, Jovian 0x3db6be2b)', () => {
    expect(l1InfoSelectors.isthmus).toBe(numberToHex(0x098999be, { size: 4 }));
    expect(l1InfoSelectors.jovian).toBe(numberToHex(0x3db6be2b, { size: 4 }));
  });

  it('parses the Jovian form: the Isthmus fields and daFootprintGasScalar at bytes 176–178', () => {
    const info = parseL1Info(l1InfoCalldata(400, { operatorFeeScalar: 7, operatorFeeConstant: 9n }));
    expect(info).toMatchObject({ form: 'jovian', baseFeeScalar: 1_368, blobBaseFeeScalar: 810_949, sequenceNumber: 3n });
    expect(info).toMatchObject({ l1BlockNumber: 20_000_000n, operatorFeeScalar: 7, operatorFeeConstant: 9n, daFootprintGasScalar: 400 });
    expect(parseL1Info(l1InfoCalldata()).form).toBe('isthmus');
    expect(parseL1Info(l1InfoCalldata()).daFootprintGasScalar).toBeUndefined();
    expect(() => parseL1Info(l1InfoCalldata(400).slice(0, -4) as Hex)).toThrow('jovian calldata must be at least 178 bytes, got 176');
  });
});

describe('operator fee (op-geth core/types/rollup_cost_test.go TestNewOperatorCostFunc)', () => {
  it('Isthmus: gas · scalar / 1e6 + constant; Jovian: gas · scalar · 100 + constant', async () => {
    // scalar 1,439,103,868 and constant 1,256,417,826,609,331,460 in L1Block slot 8; 1,618 gas.
    const word = concat([
      numberToHex(0, { size: 20 }),
      numberToHex(1_439_103_868, { size: 4 }),
      numberToHex(1_256_417_826_609_331_460n, { size: 8 }),
    ]);
    const read = async (slot: bigint): Promise<Hex> => (slot === 8n ? word : numberToHex(0, { size: 32 }));
    const withIsthmus = parseRollupConfig({ ...opConfig, isthmus_time: 12 });
    expect((await txFees(rulesAt(withIsthmus, 12n), read)).operatorCost(1_618n)).toBe(1_256_417_826_611_659_930n);
    expect((await txFees(rulesAt(withIsthmus, 14n), read)).operatorCost(1_618n)).toBe(1_256_650_673_615_173_860n);
  });
});
