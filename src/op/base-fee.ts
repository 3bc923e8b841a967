import { concat, hexToBigInt, maxUint64, numberToHex, size, slice, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import type { BlockHeader } from './header.ts';
import { rulesAt, type BlockRules, type RollupConfig } from './rollup-config.ts';

/**
 * EIP-1559 on an OP Stack chain (OP Stack specs, exec-engine.md, holocene/exec-engine.md and
 * jovian/exec-engine.md; op-geth consensus/misc/eip1559):
 *   - the change denominator is the config's, Canyon's from Canyon on; the elasticity is the config's;
 *   - from Holocene on, the parent's extraData (0x00 ‖ denominator u32 ‖ elasticity u32) gives both,
 *     and the block's own extraData carries the payload attributes' eip1559Params (the config's
 *     Canyon values when those are zero);
 *   - from Jovian on, extraData is version 1, 17 bytes: 0x01 ‖ denominator u32 ‖ elasticity u32 ‖
 *     minBaseFee u64, the last from the payload attributes' minBaseFee. The fork of the *parent*
 *     decides how its extraData reads: a Jovian parent's gas is metered as
 *     max(gasUsed, blobGasUsed) (blobGasUsed holds its DA footprint) and the result is clamped up
 *     to the parent's minBaseFee. The Jovian activation block's parent is a Holocene/Isthmus block,
 *     so that block has neither the clamp nor the DA metering.
 */
export function holoceneParams(extraData: Hex, where: string): { denominator: bigint; elasticity: bigint } {
  if (size(extraData) !== 9 || slice(extraData, 0, 1) !== '0x00') {
    throw new FlashlogError('HEADER_INVALID', `${where}: Holocene extraData must be 9 bytes, version 0, got ${extraData}`);
  }
  return { denominator: hexToBigInt(slice(extraData, 1, 5)), elasticity: hexToBigInt(slice(extraData, 5, 9)) };
}

/** A Jovian header's extraData (version 1): both EIP-1559 parameters non-zero, any minBaseFee. */
export function jovianParams(extraData: Hex, where: string): { denominator: bigint; elasticity: bigint; minBaseFee: bigint } {
  if (size(extraData) !== 17 || slice(extraData, 0, 1) !== '0x01') {
    throw new FlashlogError('HEADER_INVALID', `${where}: Jovian extraData must be 17 bytes, version 1, got ${extraData}`);
  }
  const denominator = hexToBigInt(slice(extraData, 1, 5));
  const elasticity = hexToBigInt(slice(extraData, 5, 9));
  if (denominator === 0n || elasticity === 0n)
    throw new FlashlogError(
      'HEADER_INVALID',
      `${where}: zero EIP-1559 ${denominator === 0n ? 'denominator' : 'elasticity'} in ${extraData}`,
    );
  return { denominator, elasticity, minBaseFee: hexToBigInt(slice(extraData, 9, 17)) };
}

/**
 * The block's extraData: empty before Holocene, 0x00 ‖ eip1559Params from it on, 0x01 ‖
 * eip1559Params ‖ minBaseFee from Jovian on. Zero eip1559Params stand for the config's values;
 * one zero and one non-zero parameter are refused (op-geth ValidateHolocene1559Params).
 */
export function blockExtraData(rules: BlockRules, eip1559Params: Hex | undefined, minBaseFee?: bigint): Hex {
  if (!rules.active('holocene')) return '0x';
  if (eip1559Params === undefined || size(eip1559Params) !== 8) {
    throw new FlashlogError(
      'ATTRIBUTES_INVALID',
      `payload.eip1559Params: a Holocene block needs 8 bytes, got ${eip1559Params ?? 'nothing'}`,
    );
  }
  const denominator = hexToBigInt(slice(eip1559Params, 0, 4));
  const elasticity = hexToBigInt(slice(eip1559Params, 4, 8));
  if ((denominator === 0n) !== (elasticity === 0n))
    throw new FlashlogError(
      'ATTRIBUTES_INVALID',
      `payload.eip1559Params: denominator and elasticity must both be zero or both non-zero, got ${eip1559Params}`,
    );
  const params =
    denominator === 0n ? concat([numberToHex(rules.denominator, { size: 4 }), numberToHex(rules.elasticity, { size: 4 })]) : eip1559Params;
  if (!rules.active('jovian')) return concat(['0x00', params]);
  if (minBaseFee === undefined)
    throw new FlashlogError('ATTRIBUTES_INVALID', 'payload.minBaseFee: a Jovian block needs the minimum base fee, got nothing');
  if (minBaseFee < 0n || minBaseFee > maxUint64)
    throw new FlashlogError('ATTRIBUTES_INVALID', `payload.minBaseFee: expected a uint64, got ${minBaseFee}`);
  return concat(['0x01', params, numberToHex(minBaseFee, { size: 8 })]);
}

/**
 * The payload attributes a header's own extraData gives back: eip1559Params (Holocene, 9 bytes
 * or more) and minBaseFee (Jovian, 17 bytes) as the fixture format writes them.
 *
 * @example attributesFromExtraData('0x00000000fa00000006') // { eip1559Params: '0x000000fa00000006', minBaseFee: null }
 */
export function attributesFromExtraData(extraData: Hex): { eip1559Params: Hex | undefined; minBaseFee: Hex | null } {
  return {
    eip1559Params: size(extraData) >= 9 ? slice(extraData, 1, 9) : undefined,
    minBaseFee: size(extraData) === 17 ? numberToHex(hexToBigInt(slice(extraData, 9, 17))) : null,
  };
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
  const parentRules = rulesAt(config, parent.timestamp);
  let minBaseFee = 0n;
  let gasMetered = parent.gasUsed;
  if (parentRules.active('jovian')) {
    ({ denominator, elasticity, minBaseFee } = jovianParams(parent.extraData, 'parent header.extraData'));
    if (parent.blobGasUsed === undefined)
      throw new FlashlogError('HEADER_INVALID', 'parent header.blobGasUsed: a Jovian header carries its DA footprint there, got nothing');
    if (parent.blobGasUsed > gasMetered) gasMetered = parent.blobGasUsed;
  } else if (parentRules.active('holocene')) {
    const fromParent = holoceneParams(parent.extraData, 'parent header.extraData');
    if (fromParent.denominator !== 0n || fromParent.elasticity !== 0n) ({ denominator, elasticity } = fromParent);
    if (denominator === 0n || elasticity === 0n)
      throw new FlashlogError('HEADER_INVALID', `parent header.extraData: zero EIP-1559 parameter in ${parent.extraData}`);
  }
  const baseFee = eip1559BaseFee(parentBaseFee, parent.gasLimit, gasMetered, denominator, elasticity);
  return baseFee < minBaseFee ? minBaseFee : baseFee;
}

/** EIP-1559's update from the parent's base fee, gas limit and metered gas. */
function eip1559BaseFee(parentBaseFee: bigint, gasLimit: bigint, gasMetered: bigint, denominator: bigint, elasticity: bigint): bigint {
  const target = gasLimit / elasticity;
  if (gasMetered === target) return parentBaseFee;
  if (gasMetered > target) {
    const delta = (parentBaseFee * (gasMetered - target)) / target / denominator;
    return parentBaseFee + (delta > 1n ? delta : 1n);
  }
  const delta = (parentBaseFee * (target - gasMetered)) / target / denominator;
  return parentBaseFee > delta ? parentBaseFee - delta : 0n;
}
