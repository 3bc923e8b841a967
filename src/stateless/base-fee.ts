import { concat, hexToBigInt, numberToHex, size, slice, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import type { BlockHeader } from './header.ts';
import { rulesAt, type BlockRules, type RollupConfig } from './rollup-config.ts';

/**
 * EIP-1559 on an OP Stack chain (OP Stack specs, exec-engine.md and holocene/exec-engine.md):
 *   - the change denominator is the config's, Canyon's from Canyon on; the elasticity is the config's;
 *   - from Holocene on, the parent's extraData (0x00 ‖ denominator u32 ‖ elasticity u32) gives both,
 *     and the block's own extraData carries the payload attributes' eip1559Params (the config's
 *     Canyon values when those are zero).
 */
export function holoceneParams(extraData: Hex, where: string): { denominator: bigint; elasticity: bigint } {
  if (size(extraData) !== 9 || slice(extraData, 0, 1) !== '0x00') {
    throw new FlashlogError('HEADER_INVALID', `${where}: Holocene extraData must be 9 bytes, version 0, got ${extraData}`);
  }
  return { denominator: hexToBigInt(slice(extraData, 1, 5)), elasticity: hexToBigInt(slice(extraData, 5, 9)) };
}

/** The block's extraData: empty before Holocene, 0x00 ‖ eip1559Params from it on. */
export function blockExtraData(rules: BlockRules, eip1559Params: Hex | undefined): Hex {
  if (!rules.active('holocene')) return '0x';
  if (eip1559Params === undefined || size(eip1559Params) !== 8) {
    throw new FlashlogError(
      'ATTRIBUTES_INVALID',
      `payload.eip1559Params: a Holocene block needs 8 bytes, got ${eip1559Params ?? 'nothing'}`,
    );
  }
  if (hexToBigInt(eip1559Params) === 0n) {
    return concat(['0x00', numberToHex(rules.denominator, { size: 4 }), numberToHex(rules.elasticity, { size: 4 })]);
  }
  return concat(['0x00', eip1559Params]);
}

/**
 * The base fee of the block after `parent`, at `rules` (the child's timestamp).
 *
 * @example nextBaseFee(parent, config, rulesAt(config, parent.timestamp + 2n))
 */
export function nextBaseFee(parent: BlockHeader, config: RollupConfig, rules: BlockRules): bigint {
  const parentBaseFee = parent.baseFeePerGas;
  if (parentBaseFee === undefined)
    throw new FlashlogError('HEADER_INVALID', 'parent header: no baseFeePerGas (pre-London parents are not supported)');
  let { denominator, elasticity } = rules;
  if (rulesAt(config, parent.timestamp).active('holocene')) {
    const fromParent = holoceneParams(parent.extraData, 'parent header.extraData');
    if (fromParent.denominator !== 0n || fromParent.elasticity !== 0n) ({ denominator, elasticity } = fromParent);
    if (denominator === 0n || elasticity === 0n)
      throw new FlashlogError('HEADER_INVALID', `parent header.extraData: zero EIP-1559 parameter in ${parent.extraData}`);
  }
  const target = parent.gasLimit / elasticity;
  if (parent.gasUsed === target) return parentBaseFee;
  if (parent.gasUsed > target) {
    const delta = (parentBaseFee * (parent.gasUsed - target)) / target / denominator;
    return parentBaseFee + (delta > 1n ? delta : 1n);
  }
  const delta = (parentBaseFee * (target - parent.gasUsed)) / target / denominator;
  return parentBaseFee > delta ? parentBaseFee - delta : 0n;
}
