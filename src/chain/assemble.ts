import type { Flashblock } from '../schemas/flashblock.ts';
import type { MetadataReceipt } from '../schemas/flashblock.ts';
import type { BlockRecordSource } from '../records/blocks.ts';
import { transactionHash } from '../wire/tx-hash.ts';

/**
 * A pre-confirmed block after a flashblock: `base` from index 0, every transaction so far, and the
 * running fields (gas used, roots, bloom, partial hash) of the latest diff.
 */
export interface AssembledBlock extends BlockRecordSource {
  /** Era A/B receipts of this flashblock's new transactions, by hash; null in era C. */
  readonly metadataReceipts: Readonly<Record<string, MetadataReceipt>> | null;
  /**
   * Era A/B `new_account_balances`: the balance of every account touched in the block so far; null
   * or absent when the feed sent none (a block from another source has none).
   */
  readonly metadataBalances?: Readonly<Record<string, string>> | null;
}

/**
 * Starts a block from its index-0 flashblock.
 * @example const block = startBlock(flashblocks[0]); const next = extendBlock(block, flashblocks[1]);
 */
export function startBlock(flashblock: Flashblock): AssembledBlock {
  const base = flashblock.base;
  if (!base || flashblock.index !== 0) throw new Error('startBlock needs an index-0 flashblock with base');
  return extendBlock(
    {
      blockNumber: BigInt(base.block_number),
      index: 0,
      payloadId: flashblock.payload_id,
      header: {
        number: base.block_number,
        parentHash: base.parent_hash,
        parentBeaconBlockRoot: base.parent_beacon_block_root,
        miner: base.fee_recipient,
        prevRandao: base.prev_randao,
        gasLimit: base.gas_limit,
        timestamp: base.timestamp,
        extraData: base.extra_data,
        baseFeePerGas: base.base_fee_per_gas,
        gasUsed: '0x0',
        receiptsRoot: flashblock.diff.receipts_root,
        logsBloom: flashblock.diff.logs_bloom,
        stateRoot: flashblock.diff.state_root,
        flashblockHash: flashblock.diff.block_hash,
        withdrawalsRoot: flashblock.diff.withdrawals_root,
        blobGasUsed: null,
        withdrawals: [],
      },
      transactions: [],
      firstNew: 0,
      metadataReceipts: null,
      metadataBalances: null,
    },
    flashblock,
  );
}

/**
 * Adds a flashblock's new transactions and takes its running fields. Pure. The commitment fields
 * (`state_root`, `block_hash`, `withdrawals_root`) are copied as the feed gave them: a zero one is
 * "not given" (OP's subblocks zero them in every frame) and is never read as a value downstream
 * (src/rpc/header-fields.ts `isNotGiven`).
 */
export function extendBlock(block: AssembledBlock, flashblock: Flashblock): AssembledBlock {
  const diff = flashblock.diff;
  const added = diff.transactions.map((raw) => ({ hash: transactionHash(raw as `0x${string}`), raw: raw as `0x${string}` }));
  return {
    blockNumber: block.blockNumber,
    index: flashblock.index,
    payloadId: block.payloadId,
    header: {
      ...block.header,
      gasUsed: diff.gas_used,
      receiptsRoot: diff.receipts_root,
      logsBloom: diff.logs_bloom,
      stateRoot: diff.state_root,
      flashblockHash: diff.block_hash,
      withdrawalsRoot: diff.withdrawals_root,
      blobGasUsed: diff.blob_gas_used ?? block.header.blobGasUsed,
      // Base's assembler flat-maps withdrawals across flashblocks (always empty on Base).
      withdrawals: diff.withdrawals.length ? [...block.header.withdrawals, ...diff.withdrawals] : block.header.withdrawals,
    },
    transactions: added.length ? [...block.transactions, ...added] : block.transactions,
    firstNew: block.transactions.length,
    // Lagoon: the latest subblock's post-exec transaction, never a previous one's (absence is not sticky).
    postExecTx: diff.post_exec_tx
      ? { hash: transactionHash(diff.post_exec_tx as `0x${string}`), raw: diff.post_exec_tx as `0x${string}` }
      : null,
    metadataReceipts: flashblock.metadata.receipts ?? null,
    metadataBalances: flashblock.metadata.new_account_balances ?? null,
  };
}

/**
 * The block so far `later` standing for `earlier` too, when `later` continues it (same block and
 * payload, its new transactions start where `earlier`'s end): `later` with `earlier`'s first new
 * transaction. For flashblocks that queued behind a busy executor (streams/source-ingest.ts). Null
 * when it does not continue it, and for flashblocks that carry their receipts (op-rbuilder's
 * metadata): taking those costs nothing, and each is checked against its own receipts root. Pure.
 */
export function mergeGrowth(earlier: AssembledBlock, later: AssembledBlock): AssembledBlock | null {
  const continues =
    later.blockNumber === earlier.blockNumber &&
    later.payloadId === earlier.payloadId &&
    later.index > earlier.index &&
    later.firstNew === earlier.transactions.length &&
    earlier.metadataReceipts === null &&
    later.metadataReceipts === null;
  return continues ? { ...later, firstNew: earlier.firstNew } : null;
}
