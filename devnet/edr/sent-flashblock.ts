import type { Hex } from 'viem';

/** One flashblock as the devnet's feed sends it (Base's wire format, Era C metadata). */
export interface SentFlashblock {
  readonly payload_id: Hex;
  readonly index: number;
  readonly base?: {
    readonly parent_beacon_block_root: Hex;
    readonly parent_hash: Hex;
    readonly fee_recipient: Hex;
    readonly prev_randao: Hex;
    readonly block_number: Hex;
    readonly gas_limit: Hex;
    readonly timestamp: Hex;
    readonly extra_data: Hex;
    readonly base_fee_per_gas: Hex;
  };
  readonly diff: {
    readonly state_root: Hex;
    readonly receipts_root: Hex;
    readonly logs_bloom: Hex;
    readonly gas_used: Hex;
    readonly block_hash: Hex;
    readonly transactions: readonly Hex[];
    readonly withdrawals: readonly never[];
    readonly withdrawals_root: Hex;
    readonly blob_gas_used?: Hex;
  };
  readonly metadata: {
    readonly block_number: number;
    readonly access_list?: null;
    readonly receipts?: Record<Hex, SentMetadataReceipt>;
  };
}

export interface SentMetadataReceipt {
  readonly type: Hex;
  readonly status: Hex;
  readonly cumulativeGasUsed: Hex;
  readonly logs: readonly { address: Hex; topics: readonly Hex[]; data: Hex }[];
  readonly depositNonce?: Hex;
  readonly depositReceiptVersion?: Hex;
}

/** A block as EDR answers eth_getBlockByNumber (hashes only). */
export interface MinedBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  transactions: Hex[];
  stateRoot: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  gasUsed: Hex;
  gasLimit: Hex;
  miner: Hex;
  mixHash: Hex;
  extraData: Hex;
  baseFeePerGas: Hex;
  withdrawalsRoot: Hex;
  parentBeaconBlockRoot?: Hex;
  blobGasUsed?: Hex;
}

export interface MinedReceipt {
  type: Hex;
  status: Hex;
  cumulativeGasUsed: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex }[];
  depositNonce?: Hex;
  depositReceiptVersion?: Hex;
}

export const ZERO32: Hex = `0x${'0'.repeat(64)}`;

/** The feed's receipt for one mined receipt: type, status, cumulative gas, logs, OP deposit fields. */
export function metadataReceipt(receipt: MinedReceipt): SentMetadataReceipt {
  return {
    type: receipt.type,
    status: receipt.status,
    cumulativeGasUsed: receipt.cumulativeGasUsed,
    logs: receipt.logs.map((log) => ({ address: log.address, topics: log.topics, data: log.data })),
    ...(receipt.depositNonce !== undefined && receipt.depositNonce !== null ? { depositNonce: receipt.depositNonce } : {}),
    ...(receipt.depositReceiptVersion !== undefined && receipt.depositReceiptVersion !== null
      ? { depositReceiptVersion: receipt.depositReceiptVersion }
      : {}),
  };
}

/**
 * The flashblock at `index` of a block whose state so far is `mined` (a trial or the sealed block):
 * `base` at index 0, the header fields of the block so far in `diff`, and the raw bytes of the
 * transactions `added` since the previous flashblock.
 */
export function toFlashblock(
  at: { readonly payloadId: Hex; readonly index: number; readonly number: bigint },
  mined: MinedBlock,
  added: readonly Hex[],
  receipts: Record<Hex, SentMetadataReceipt> | undefined,
): SentFlashblock {
  return {
    payload_id: at.payloadId,
    index: at.index,
    ...(at.index === 0
      ? {
          base: {
            parent_beacon_block_root: mined.parentBeaconBlockRoot ?? ZERO32,
            parent_hash: mined.parentHash,
            fee_recipient: mined.miner,
            prev_randao: mined.mixHash,
            block_number: mined.number,
            gas_limit: mined.gasLimit,
            timestamp: mined.timestamp,
            extra_data: mined.extraData,
            base_fee_per_gas: mined.baseFeePerGas,
          },
        }
      : {}),
    diff: {
      state_root: mined.stateRoot,
      receipts_root: mined.receiptsRoot,
      logs_bloom: mined.logsBloom,
      gas_used: mined.gasUsed,
      block_hash: mined.hash,
      transactions: added,
      withdrawals: [],
      withdrawals_root: mined.withdrawalsRoot,
      ...(mined.blobGasUsed ? { blob_gas_used: mined.blobGasUsed } : {}),
    },
    metadata: {
      block_number: Number(at.number),
      // Era B (before Azul) also carried new_account_balances; the devnet leaves them out.
      ...(receipts ? { receipts } : {}),
      access_list: null,
    },
  };
}

/**
 * The flashblock in OP's subblocks form: `state_root`, `block_hash` and `withdrawals_root` zeroed
 * and `withdrawals` empty in every frame, everything else as built (ethereum-optimism/specs
 * `specs/protocol/subblocks.md` @43a681ec, "Zero-valued fields"). The producer keeps the real
 * values for itself; only what the feed publishes changes.
 *
 * @example toSubblock(flashblock).diff.block_hash // '0x000…000'
 */
export function toSubblock(flashblock: SentFlashblock): SentFlashblock {
  return { ...flashblock, diff: { ...flashblock.diff, state_root: ZERO32, block_hash: ZERO32, withdrawals_root: ZERO32, withdrawals: [] } };
}
