import { concat, hexToBigInt, hexToNumber, numberToHex, pad, slice, type Hex } from 'viem';
import type { BlockRules } from '../op/rollup-config.ts';
import { l1InfoSelectors, type L1InfoForm } from '../op/l1-info.ts';
import { FlashlogError } from '../errors.ts';
import { sourceDomain, sourceHash, type Deposit } from '../op/deposit-tx.ts';
import { ecotoneScalarError, type SystemConfig } from './system-config.ts';
import { depositorAccount, l1BlockAddress } from '../op/predeploys.ts';

/**
 * The L1-info deposit that opens every L2 block (specs/protocol/deposits.md "L1 Attributes
 * Deposited Transaction"; ecotone/isthmus/jovian `l1-attributes.md`). One builder for derivation
 * and for the devnet. The calldata layouts are documented beside their parser,
 * src/op/l1-info.ts; Bedrock's is the ABI call
 * `setL1BlockValues(number, timestamp, basefee, hash, sequenceNumber, batcherHash, l1FeeOverhead, l1FeeScalar)`.
 *
 * A fork's first block still carries the previous fork's form: the L1Block code that takes the new
 * one arrives with that block's upgrade deposits.
 */
export interface L1BlockInfo {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly baseFee: bigint;
  /** The L1 blob base fee (Ecotone forms); 1 (EIP-4844's minimum) when L1 has no blobs yet. */
  readonly blobBaseFee: bigint;
  readonly hash: Hex;
  readonly sequenceNumber: bigint;
  /** The batcher address as a bytes32 (left-padded). */
  readonly batcherHash: Hex;
  /** Bedrock form only. */
  readonly l1FeeOverhead: Hex;
  readonly l1FeeScalar: Hex;
  /** Ecotone forms. */
  readonly baseFeeScalar: number;
  readonly blobBaseFeeScalar: number;
  /** Isthmus forms. */
  readonly operatorFeeScalar: number;
  readonly operatorFeeConstant: bigint;
  /** Jovian form. */
  readonly daFootprintGasScalar: number;
}

export const l1InfoDepositor: Hex = depositorAccount;
export const l1BlockPredeploy: Hex = l1BlockAddress;
/** Jovian: a DA footprint gas scalar of zero in the SystemConfig means this default. */
export const daFootprintGasScalarDefault = 400;
const regolithSystemTxGas = 1_000_000n;
const bedrockSystemTxGas = 150_000_000n;

const uint = (value: bigint | number, bytes: number): Hex => pad(numberToHex(value), { size: bytes });

/**
 * The calldata of an L1-info deposit in `form`.
 *
 * @example l1InfoCalldataOf(info, 'isthmus') // 176 bytes
 */
export function l1InfoCalldataOf(info: L1BlockInfo, form: L1InfoForm): Hex {
  if (form === 'bedrock')
    return concat([
      l1InfoSelectors.bedrock,
      uint(info.number, 32),
      uint(info.timestamp, 32),
      uint(info.baseFee, 32),
      info.hash,
      uint(info.sequenceNumber, 32),
      info.batcherHash,
      info.l1FeeOverhead,
      info.l1FeeScalar,
    ]);
  return concat([
    l1InfoSelectors[form],
    uint(info.baseFeeScalar, 4),
    uint(info.blobBaseFeeScalar, 4),
    uint(info.sequenceNumber, 8),
    uint(info.timestamp, 8),
    uint(info.number, 8),
    uint(info.baseFee, 32),
    uint(info.blobBaseFee, 32),
    info.hash,
    info.batcherHash,
    ...(form === 'ecotone' ? [] : [uint(info.operatorFeeScalar, 4), uint(info.operatorFeeConstant, 8)]),
    ...(form === 'jovian' ? [uint(info.daFootprintGasScalar, 2)] : []),
  ]);
}

/** The form an L2 block's L1-info deposit takes: the newest fork active before this block. */
export function l1InfoFormAt(rules: Pick<BlockRules, 'active' | 'activationBlock'>): L1InfoForm {
  const settled = (fork: 'ecotone' | 'isthmus' | 'jovian') => rules.active(fork) && !rules.activationBlock(fork);
  return settled('jovian') ? 'jovian' : settled('isthmus') ? 'isthmus' : settled('ecotone') ? 'ecotone' : 'bedrock';
}

/** The L1 origin as derivation reads it from the L1 header. */
export interface L1Origin {
  readonly hash: Hex;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly baseFeePerGas: bigint;
  /** null when L1 has no blobs yet (the deposit then carries 1). */
  readonly blobBaseFee: bigint | null;
}

/**
 * The L1-info values for an L2 block whose L1 origin is `origin`, from the SystemConfig after the
 * origin's updates. Throws `ATTRIBUTES_INVALID` for a scalar op-node cannot read in Ecotone forms.
 */
export function l1BlockInfoOf(origin: L1Origin, sequenceNumber: bigint, config: SystemConfig, form: L1InfoForm): L1BlockInfo {
  let baseFeeScalar = 0;
  let blobBaseFeeScalar = 0;
  if (form !== 'bedrock') {
    const problem = ecotoneScalarError(config.scalar);
    const version = hexToNumber(slice(config.scalar, 0, 1));
    if (problem && version === 0)
      baseFeeScalar = 0xffff_ffff; // the spec's answer to a dirty Bedrock scalar
    else if (problem) throw new FlashlogError('ATTRIBUTES_INVALID', `systemConfig.scalar ${config.scalar}: ${problem}`);
    else {
      baseFeeScalar = hexToNumber(slice(config.scalar, 28, 32));
      blobBaseFeeScalar = version === 1 ? hexToNumber(slice(config.scalar, 24, 28)) : 0;
    }
  }
  return {
    number: origin.number,
    timestamp: origin.timestamp,
    baseFee: origin.baseFeePerGas,
    blobBaseFee: origin.blobBaseFee ?? 1n,
    hash: origin.hash,
    sequenceNumber,
    batcherHash: pad(config.batcher, { size: 32 }),
    l1FeeOverhead: form === 'bedrock' ? config.overhead : `0x${'00'.repeat(32)}`,
    l1FeeScalar: form === 'bedrock' ? config.scalar : `0x${'00'.repeat(32)}`,
    baseFeeScalar,
    blobBaseFeeScalar,
    operatorFeeScalar: form === 'isthmus' || form === 'jovian' ? hexToNumber(slice(config.operatorFeeParams, 20, 24)) : 0,
    operatorFeeConstant: form === 'isthmus' || form === 'jovian' ? hexToBigInt(slice(config.operatorFeeParams, 24, 32)) : 0n,
    daFootprintGasScalar: form === 'jovian' ? config.daFootprintGasScalar || daFootprintGasScalarDefault : 0,
  };
}

/**
 * The L1-info deposit for `info` under an L2 block's rules: from the depositor account to the
 * L1Block predeploy, source hash domain 1 (L1 block hash, sequence number); since Regolith 1M gas
 * and not a system transaction (before: 150M gas, a system transaction).
 *
 * @example encodeDeposit(l1InfoDeposit(l1BlockInfoOf(origin, 0n, config, l1InfoFormAt(rules)), rules))
 */
export function l1InfoDeposit(info: L1BlockInfo, rules: Pick<BlockRules, 'active' | 'activationBlock'>): Deposit {
  const regolith = rules.active('regolith');
  return {
    sourceHash: sourceHash(sourceDomain.l1Info, info.hash, info.sequenceNumber),
    from: l1InfoDepositor,
    to: l1BlockPredeploy,
    mint: 0n,
    value: 0n,
    gas: regolith ? regolithSystemTxGas : bedrockSystemTxGas,
    isSystemTx: !regolith,
    data: l1InfoCalldataOf(info, l1InfoFormAt(rules)),
  };
}
