import { LibZip } from 'solady';
import { bytesToHex, hexToBigInt, numberToHex, type Hex } from 'viem';
import type { BlockRules } from './rollup-config.ts';

/**
 * What a non-deposit transaction pays beyond gas on an OP Stack chain, read from the L1Block
 * predeploy's storage as the block's L1-info deposit left it (OP Stack specs,
 * protocol/exec-engine.md "L1-Cost fees", ecotone/fjord/isthmus/jovian exec-engine.md):
 *   - Bedrock/Regolith: (calldataGas + overhead) · l1BaseFee · scalar / 1e6
 *   - Ecotone: calldataGas · (16·l1BaseFee·baseFeeScalar + blobBaseFee·blobBaseFeeScalar) / 16e6
 *     (the Bedrock formula while both scalars are still zero: the Ecotone activation block)
 *   - Fjord: max(100e6, 836_500·fastLzSize − 42_585_600) · (16·l1BaseFee·baseFeeScalar + blobBaseFee·blobBaseFeeScalar) / 1e12
 *   - Isthmus operator fee: gas · operatorFeeScalar / 1e6 + operatorFeeConstant (Jovian: · 100 instead of / 1e6)
 * calldataGas counts 4 per zero byte and 16 per other byte of the signed EIP-2718 transaction.
 */
export { feeVaults, l1BlockAddress } from './predeploys.ts';

/** L1Block storage slots (its Solidity layout). */
const slot = { l1BaseFee: 1n, scalars: 3n, overhead: 5n, scalar: 6n, blobBaseFee: 7n, operatorFee: 8n } as const;

export type ReadL1BlockSlot = (slot: bigint) => Promise<Hex>;

export interface TxFees {
  /** The L1 data fee of a transaction given its signed bytes. */
  l1Cost(signed: Uint8Array): bigint;
  /**
   * The L1 data fee and the L1 gas a receipt reports for the same bytes, in one pass (op-geth's
   * cost functions return both, core/types/rollup_cost.go @9cc4cbc2): the gas is Bedrock
   * calldataGas + overhead, Ecotone calldataGas, Fjord estimatedSizeScaled · 16 / 1e6.
   */
  l1FeeAndGas(signed: Uint8Array): { readonly l1Fee: bigint; readonly l1GasUsed: bigint };
  /** The operator fee for `gas` units (zero before Isthmus). */
  operatorCost(gas: bigint): bigint;
}

/** A storage word as an integer; an unset slot reads as empty bytes (0x), which is zero. */
const wordValue = (word: Hex): bigint => (word === '0x' ? 0n : hexToBigInt(word));

/** Bytes [from, to) of a 32-byte storage word, as an integer. */
const field = (word: Hex, from: number, to: number): bigint => {
  const padded = word.slice(2).padStart(64, '0');
  return hexToBigInt(`0x${padded.slice(from * 2, to * 2) || '0'}`);
};

/** FastLZ-compressed length, as Fjord's estimate takes it (solady's LibZip, which op-geth ports). */
export const fastLzSize = (signed: Uint8Array): number => (LibZip.flzCompress(bytesToHex(signed)).length - 2) / 2;

/** Fjord's estimated batch size of a transaction, scaled by 1e6: max(100e6, 836_500·fastLzSize − 42_585_600). */
const fjordSizeScaled = (signed: Uint8Array): bigint => {
  const estimated = -42_585_600n + 836_500n * BigInt(fastLzSize(signed));
  return estimated < 100_000_000n ? 100_000_000n : estimated;
};

const calldataGas = (signed: Uint8Array): bigint => {
  let gas = 0n;
  for (const byte of signed) gas += byte === 0 ? 4n : 16n;
  return gas;
};

export interface TxFeesOptions {
  /**
   * Whether the block's L1-info deposit has the Bedrock form. When given, it alone marks the Ecotone
   * activation block (Bedrock fee functions under Ecotone rules), as op-geth's receipts decide
   * (core/types/rollup_cost.go `extractL1GasParams` @9cc4cbc2, by the selector); without it, both
   * Ecotone scalars unset in storage do, as op-geth's EVM decides (`NewL1CostFunc`). The two differ
   * only on a chain whose Ecotone scalars are both zero.
   */
  readonly bedrockForm?: boolean;
}

/**
 * The fee functions of one block, from the L1Block storage after its L1-info deposit ran.
 *
 * @example const fees = await txFees(rules, (slot) => readStorage(l1BlockAddress, slot))
 */
export async function txFees(rules: BlockRules, read: ReadL1BlockSlot, options: TxFeesOptions = {}): Promise<TxFees> {
  const l1BaseFee = wordValue(await read(slot.l1BaseFee));
  const operatorCost = async (): Promise<(gas: bigint) => bigint> => {
    if (!rules.active('isthmus')) return () => 0n;
    const word = await read(slot.operatorFee);
    const scalar = field(word, 20, 24);
    const constant = field(word, 24, 32);
    if (rules.active('jovian')) return (gas) => gas * scalar * 100n + constant;
    return (gas) => (gas * scalar) / 1_000_000n + constant;
  };
  type L1Fns = Pick<TxFees, 'l1Cost' | 'l1FeeAndGas'>;
  /** Both functions from one of gas → (fee, gas reported). */
  const fns = (gasOf: (signed: Uint8Array) => bigint, feeOf: (gas: bigint) => bigint): L1Fns => ({
    l1Cost: (signed) => feeOf(gasOf(signed)),
    l1FeeAndGas: (signed) => {
      const gas = gasOf(signed);
      return { l1Fee: feeOf(gas), l1GasUsed: gas };
    },
  });
  const bedrock = async (): Promise<L1Fns> => {
    const overhead = wordValue(await read(slot.overhead));
    const scalar = wordValue(await read(slot.scalar));
    return fns(
      (signed) => calldataGas(signed) + overhead,
      (gas) => (gas * l1BaseFee * scalar) / 1_000_000n,
    );
  };
  let l1: L1Fns;
  if (!rules.active('ecotone')) {
    l1 = await bedrock();
  } else {
    const scalars = await read(slot.scalars);
    const baseFeeScalar = field(scalars, 16, 20);
    const blobBaseFeeScalar = field(scalars, 20, 24);
    if (options.bedrockForm ?? (baseFeeScalar === 0n && blobBaseFeeScalar === 0n)) {
      l1 = await bedrock();
    } else {
      const blobBaseFee = wordValue(await read(slot.blobBaseFee));
      const feeScaled = 16n * l1BaseFee * baseFeeScalar + blobBaseFee * blobBaseFeeScalar;
      if (rules.active('fjord')) {
        const fee = (size: bigint) => (size * feeScaled) / 1_000_000_000_000n;
        l1 = {
          l1Cost: (signed) => fee(fjordSizeScaled(signed)),
          l1FeeAndGas: (signed) => {
            const size = fjordSizeScaled(signed);
            return { l1Fee: fee(size), l1GasUsed: (size * 16n) / 1_000_000n };
          },
        };
      } else {
        l1 = fns(calldataGas, (gas) => (gas * feeScaled) / 16_000_000n);
      }
    }
  }
  return { ...l1, operatorCost: await operatorCost() };
}

export const slotKey = (n: bigint): Hex => numberToHex(n, { size: 32 });
