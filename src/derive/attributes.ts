import { bytesToHex, concat, hexToBigInt, numberToHex, slice, type Hex } from 'viem';
import { rulesAt, type OpFork, type RollupConfig } from '../op/rollup-config.ts';
import { FlashlogError } from '../errors.ts';
import { baseTimeDeposit } from '../op/basetime.ts';
import { encodeDeposit } from '../op/deposit-tx.ts';
import { l1BlockInfoOf, l1InfoDeposit, l1InfoFormAt } from './l1-info-deposit.ts';
import { l2ScheduleOf } from './schedule.ts';
import { applySystemConfigUpdates, type SkippedUpdate, type SystemConfig } from './system-config.ts';
import { userDeposits, type L1Receipt } from './user-deposits.ts';
import { sequencerFeeVault } from '../op/predeploys.ts';

/**
 * Payload attributes for one L2 block (specs/protocol/derivation.md "Building Individual Payload
 * Attributes"; op-node `PreparePayloadAttributes` plus the batch's transactions):
 *
 *   transactions = [L1-info deposit, BaseTime deposit (Denim), user deposits (first block of an epoch),
 *                   upgrade deposits, batch transactions]
 *
 * The first block of an epoch (sequence number 0) also applies the L1 origin's SystemConfig
 * updates before the L1-info deposit reads the config. Base's Denim (base/base
 * `StatefulAttributesBuilder`): every block's tx[1] is the BaseTime deposit of its number and
 * scheduled millisecond part (schedule.ts), and Denim's first block divides the gas limit by 10 and
 * multiplies the EIP-1559 denominator by 10, after that block's SystemConfig updates; the blocks
 * after it carry the scaled values on.
 */
export interface L1EpochHeader {
  readonly hash: Hex;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly baseFeePerGas: bigint;
  readonly mixHash: Hex;
  readonly parentBeaconBlockRoot?: Hex | null;
  /** The L1 blob base fee at this header (see `l1BlobBaseFee`); null before L1 had blobs. */
  readonly blobBaseFee: bigint | null;
}

/** An L1 origin: its header and its receipts (the receipts are read on an epoch's first block only). */
export interface L1Epoch {
  readonly header: L1EpochHeader;
  readonly receipts: readonly L1Receipt[];
}

/** What a batch contributes to one L2 block: a singular batch, or one block of a span batch. */
export interface BlockFromBatch {
  readonly timestamp: bigint;
  readonly transactions: readonly Uint8Array[];
  /**
   * The parent L2 block. Needed on a chain with Denim (the BaseTime deposit names the block's
   * number, and blocks share seconds, so a fork's first block is told by its parent's time);
   * without it the parent is taken one block time earlier.
   */
  readonly parent?: { readonly number: bigint; readonly timestamp: bigint };
}

export interface AttributesRules {
  readonly rollup: RollupConfig;
  /** The OptimismPortal (the rollup config's `deposit_contract_address`). */
  readonly depositContract: Hex;
  /** The L1 SystemConfig (the rollup config's `l1_system_config_address`). */
  readonly systemConfig: Hex;
}

export interface DerivedPayloadAttributes {
  readonly timestamp: bigint;
  readonly prevRandao: Hex;
  readonly suggestedFeeRecipient: Hex;
  readonly transactions: readonly Hex[];
  readonly noTxPool: true;
  readonly gasLimit: bigint;
  /** Canyon: an empty list. */
  readonly withdrawals?: readonly never[];
  /** Ecotone: the L1 header's (zero when it has none). */
  readonly parentBeaconBlockRoot?: Hex;
  /** Holocene: the SystemConfig's bytes8. */
  readonly eip1559Params?: Hex;
  /** Jovian. */
  readonly minBaseFee?: bigint;
}

export { sequencerFeeVault };
const zeroHash: Hex = `0x${'00'.repeat(32)}`;
/**
 * Forks whose activation block carries upgrade deposits, which this module does not build. Lagoon:
 * UNCONFIRMED whether its activation block carries upgrade transactions (optimism #22216 reserves
 * "Lagoon upgrade gas"; no Lagoon upgrade-transaction list was found in the specs), so its
 * activation block is refused rather than guessed.
 */
const forksWithUpgradeDeposits: readonly OpFork[] = ['ecotone', 'fjord', 'isthmus', 'jovian', 'karst', 'lagoon'];

/**
 * The payload attributes of the L2 block `batch` fills, on L1 origin `epoch`, `sequenceNumber`
 * blocks into the epoch, with `systemConfig` as of the parent block. Returns the attributes and the
 * SystemConfig the block leaves (updated on an epoch's first block). Throws `DERIVE_DEPOSIT_INVALID`
 * for a bad deposit log and `ATTRIBUTES_INVALID` for an upgrade block (its upgrade deposits are not
 * built here) or an unreadable fee scalar.
 *
 * @example attributesFor(batch, { header, receipts }, 0n, parentConfig, { rollup, depositContract, systemConfig }).attributes
 */
export function attributesFor(
  batch: BlockFromBatch,
  epoch: L1Epoch,
  sequenceNumber: bigint,
  systemConfig: SystemConfig,
  rules: AttributesRules,
): { attributes: DerivedPayloadAttributes; systemConfig: SystemConfig; skippedUpdates: SkippedUpdate[] } {
  const { header } = epoch;
  const l2 = rulesAt(rules.rollup, batch.timestamp, batch.parent?.timestamp);
  const where = `L2 block ${batch.parent ? `${batch.parent.number + 1n} ` : ''}at ${batch.timestamp} (L1 origin ${header.number} ${header.hash})`;
  const upgrade = forksWithUpgradeDeposits.find((fork) => l2.activationBlock(fork));
  if (upgrade) throw new FlashlogError('ATTRIBUTES_INVALID', `${where}: the ${upgrade} activation block's upgrade deposits are not built`);
  if (batch.timestamp < header.timestamp)
    throw new FlashlogError('ATTRIBUTES_INVALID', `${where}: timestamp is before its L1 origin's (${header.timestamp})`);

  const firstOfEpoch = sequenceNumber === 0n;
  const place = { l1BlockHash: header.hash, l1BlockNumber: header.number };
  const deposits = firstOfEpoch ? userDeposits(epoch.receipts, rules.depositContract, place) : [];
  const updated = firstOfEpoch
    ? applySystemConfigUpdates(systemConfig, epoch.receipts, {
        systemConfig: rules.systemConfig,
        ecotone: rulesAt(rules.rollup, header.timestamp).active('ecotone'),
      })
    : { config: systemConfig, skipped: [] };
  const config = l2.activationBlock('denim') ? denimGasParameters(updated.config) : updated.config;
  const baseTime = l2.active('denim') ? [baseTimeOf(batch, rules.rollup, where)] : [];

  const info = l1BlockInfoOf(
    {
      hash: header.hash,
      number: header.number,
      timestamp: header.timestamp,
      baseFeePerGas: header.baseFeePerGas,
      blobBaseFee: header.blobBaseFee,
    },
    sequenceNumber,
    config,
    l1InfoFormAt(l2),
  );
  const transactions = [
    encodeDeposit(l1InfoDeposit(info, l2)),
    ...baseTime,
    ...deposits.map(encodeDeposit),
    ...batch.transactions.map((tx) => bytesToHex(tx)),
  ];
  const attributes: DerivedPayloadAttributes = {
    timestamp: batch.timestamp,
    prevRandao: header.mixHash,
    suggestedFeeRecipient: sequencerFeeVault,
    transactions,
    noTxPool: true,
    gasLimit: config.gasLimit,
    ...(l2.active('canyon') ? { withdrawals: [] } : {}),
    ...(l2.active('ecotone') ? { parentBeaconBlockRoot: header.parentBeaconBlockRoot ?? zeroHash } : {}),
    ...(l2.active('holocene') ? { eip1559Params: config.eip1559Params } : {}),
    ...(l2.active('jovian') ? { minBaseFee: config.minBaseFee } : {}),
  };
  return { attributes, systemConfig: config, skippedUpdates: updated.skipped };
}

/** Denim's scaling factor: ten 200 ms blocks in one legacy 2 s block (base/base `DENIM_GAS_PARAMETER_SCALING_FACTOR`). */
const denimScaling = 10n;

/**
 * Denim's first block: the gas limit ÷ 10 and the EIP-1559 denominator × 10 (the elasticity and
 * the minimum base fee kept), so gas per second and the base fee's response per second stay.
 *
 * @example denimGasParameters(config).gasLimit // config.gasLimit / 10n
 */
export function denimGasParameters<T extends Pick<SystemConfig, 'gasLimit' | 'eip1559Params'>>(config: T): T {
  const denominator = hexToBigInt(slice(config.eip1559Params, 0, 4)) * denimScaling;
  const scaled = denominator > 0xffffffffn ? 0xffffffffn : denominator; // base/base saturates the u32
  return {
    ...config,
    gasLimit: config.gasLimit / denimScaling,
    eip1559Params: concat([numberToHex(scaled, { size: 4 }), slice(config.eip1559Params, 4, 8)]),
  };
}

/** A Denim block's BaseTime deposit: its number and its scheduled millisecond part. */
function baseTimeOf(batch: BlockFromBatch, rollup: RollupConfig, where: string): Hex {
  if (!batch.parent) throw new FlashlogError('ATTRIBUTES_INVALID', `${where}: a Denim block needs its parent's number`);
  const number = batch.parent.number + 1n;
  const schedule = l2ScheduleOf(rollup);
  if (schedule.seconds(number) !== batch.timestamp)
    throw new FlashlogError('ATTRIBUTES_INVALID', `${where}: Denim schedules block ${number} at ${schedule.seconds(number)}`);
  return baseTimeDeposit({ blockNumber: number, millisPart: schedule.millisPart(number) });
}

/**
 * EIP-4844's blob base fee from a header's excess blob gas: fake_exponential(1, excessBlobGas,
 * updateFraction). `updateFraction` is the L1 fork's (Cancun 3338477, Prague 5007716, later blob
 * schedules their own). Written out because it is the spec's integer series, which no library here
 * exposes.
 *
 * @example l1BlobBaseFee(0n, 5_007_716n) // 1n
 */
export function l1BlobBaseFee(excessBlobGas: bigint, updateFraction: bigint): bigint {
  let i = 1n;
  let output = 0n;
  let accumulator = updateFraction; // factor (1) * denominator
  while (accumulator > 0n) {
    output += accumulator;
    accumulator = (accumulator * excessBlobGas) / (updateFraction * i);
    i += 1n;
  }
  return output / updateFraction;
}
