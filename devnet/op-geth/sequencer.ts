import { hexToBytes, numberToHex, type Hex } from 'viem';
import { FlashlogError } from '../../src/errors.ts';
import { attributesFor, type AttributesRules, type DerivedPayloadAttributes } from '../../src/derive/attributes.ts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import type { L1BlockRef, L1Reader } from './l1.ts';
import { engineClient, type OpGethNode, type OpPayloadAttributes } from './node.ts';

/**
 * An op-geth devnet's sequencer (and the derived test chain's, test/helpers/derived-chain.ts), as
 * op-node's: each L2 block
 * picks its L1 origin (the parent's, or the next L1 block once the L2 timestamp reaches it: at
 * most one L1 block a step, never back), gets its payload attributes from flashlog's derivation
 * code (`attributesFor`: the L1-info deposit, the origin's user deposits on an epoch's first block,
 * the batch's user transactions) over the real L1 block, and has op-geth build, import and adopt
 * it through the engine API. With `pool`, op-geth adds transactions from its txpool after the
 * forced ones (noTxPool false), and those are the batch's. It is an invariant that op-geth's block
 * starts with exactly the attributes' transactions (and holds nothing else without `pool`):
 * anything else (a forced transaction dropped, one added) stops the chain. Past the sequencer
 * drift, with no newer L1 block to move to, a block keeps its origin and takes no user
 * transactions, as op-node's.
 */
export interface DerivedL2Block {
  readonly number: bigint;
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly timestamp: bigint;
  readonly l1Origin: L1BlockRef;
  readonly sequenceNumber: bigint;
  /** Every transaction, raw: the L1-info deposit, the user deposits, the user transactions. */
  readonly transactions: readonly Hex[];
  /** The batch's part: the user transactions, raw. */
  readonly userTransactions: readonly Hex[];
  /** How many of `transactions` are user deposits (after the L1-info deposit). */
  readonly userDeposits: number;
  /** The attributes op-geth was given. */
  readonly attributes: DerivedPayloadAttributes;
  /** The SystemConfig as of this block (its L1 origin's updates applied on an epoch's first block). */
  readonly systemConfig: SystemConfig;
}

export interface Sequencer {
  /**
   * Builds the next L2 block at `timestamp` with `userTransactions` (and, with `pool`, op-geth's
   * txpool's); the L1 must already hold its origin.
   */
  build(timestamp: bigint, userTransactions: readonly Hex[], options?: { readonly pool?: boolean }): Promise<DerivedL2Block>;
  /** The newest block (number 0: the genesis). */
  head(): { readonly hash: Hex; readonly number: bigint; readonly timestamp: bigint };
  readonly blocks: readonly DerivedL2Block[];
}

const engineAttributes = (attributes: DerivedPayloadAttributes, pool: boolean): OpPayloadAttributes => ({
  timestamp: numberToHex(attributes.timestamp),
  prevRandao: attributes.prevRandao,
  suggestedFeeRecipient: attributes.suggestedFeeRecipient,
  withdrawals: [],
  parentBeaconBlockRoot: attributes.parentBeaconBlockRoot!,
  transactions: attributes.transactions,
  noTxPool: !pool,
  gasLimit: numberToHex(attributes.gasLimit),
  eip1559Params: attributes.eip1559Params!,
  // op-geth v1.101702.3 reads minBaseFee as a JSON number.
  ...(attributes.minBaseFee === undefined ? {} : { minBaseFee: Number(attributes.minBaseFee) }),
});

export function createSequencer(options: {
  readonly l1: Pick<L1Reader, 'block' | 'epoch'>;
  readonly l2: OpGethNode;
  readonly rules: AttributesRules;
  readonly genesis: { readonly hash: Hex; readonly timestamp: bigint; readonly l1Origin: L1BlockRef };
  readonly systemConfig: SystemConfig;
  /** op-node's max sequencer drift, seconds. */
  readonly maxSequencerDrift: bigint;
  /** Keeps the `blocks` built (default true; a long-running devnet keeps none). */
  readonly keepBlocks?: boolean;
  /** With `pool`: how long op-geth fills the block from its txpool before it is taken (default 200 ms). */
  readonly poolFillMs?: number;
}): Sequencer {
  const engine = engineClient(options.l2);
  const blocks: DerivedL2Block[] = [];
  let head = { hash: options.genesis.hash, number: 0n, timestamp: options.genesis.timestamp };
  let origin = options.genesis.l1Origin;
  let sequenceNumber = 0n;
  let systemConfig = options.systemConfig;

  /** op-node's L1 origin selection: the next L1 block if the L2 timestamp has reached it. */
  const pickOrigin = async (timestamp: bigint) => {
    const next = await options.l1.block(origin.number + 1n);
    if (next && next.timestamp <= timestamp) {
      if (next.parentHash !== origin.hash)
        throw new FlashlogError('DERIVE_L1_REORG', `L1 block ${next.number} does not extend the L1 origin ${origin.hash}`);
      return { origin: next, sequenceNumber: 0n, pastDrift: false };
    }
    return { origin, sequenceNumber: sequenceNumber + 1n, pastDrift: timestamp > origin.timestamp + options.maxSequencerDrift };
  };

  return {
    blocks,
    head: () => head,
    async build(timestamp, userTransactions, buildOptions = {}) {
      const number = head.number + 1n;
      const picked = await pickOrigin(timestamp);
      if (picked.pastDrift && userTransactions.length)
        throw new FlashlogError(
          'ATTRIBUTES_INVALID',
          `L2 block at ${timestamp} is past the sequencer drift of L1 origin ${picked.origin.number} (${picked.origin.timestamp})`,
        );
      const pool = (buildOptions.pool ?? false) && !picked.pastDrift;
      const epoch = await options.l1.epoch(picked.origin.number);
      if (epoch.header.hash !== picked.origin.hash)
        throw new FlashlogError('DERIVE_L1_REORG', `L1 block ${picked.origin.number} changed while read`);
      const built = attributesFor(
        { timestamp, transactions: userTransactions.map((tx) => hexToBytes(tx)) },
        picked.sequenceNumber === 0n ? epoch : { header: epoch.header, receipts: [] },
        picked.sequenceNumber,
        systemConfig,
        options.rules,
      );
      if (built.skippedUpdates.length)
        throw new FlashlogError(
          'ATTRIBUTES_INVALID',
          `L2 block ${number}: SystemConfig updates skipped: ${JSON.stringify(built.skippedUpdates)}`,
        );
      const { attributes } = built;
      const payloadId = await engine.startBuilding(head.hash, engineAttributes(attributes, pool));
      if (pool) await new Promise((resolve) => setTimeout(resolve, options.poolFillMs ?? 200));
      const payload = await engine.getPayload(payloadId);
      const got = payload.transactions.map((tx) => tx.toLowerCase());
      const sent = attributes.transactions.map((tx) => tx.toLowerCase());
      if (JSON.stringify(got.slice(0, sent.length)) !== JSON.stringify(sent) || (!pool && got.length !== sent.length))
        throw new FlashlogError(
          'DEVNET_ENGINE_FAILED',
          `op-geth built L2 block ${number} with ${got.length} transactions, not the ${sent.length} of its attributes`,
        );
      const fromPool = payload.transactions.slice(sent.length);
      const status = await engine.newPayload(payload, attributes.parentBeaconBlockRoot!);
      if (status.status !== 'VALID')
        throw new FlashlogError('DEVNET_ENGINE_FAILED', `engine_newPayloadV4 of L2 block ${number}: ${JSON.stringify(status)}`);
      const adopted = await engine.setHead(payload.blockHash);
      if (adopted.status !== 'VALID')
        throw new FlashlogError('DEVNET_ENGINE_FAILED', `engine_forkchoiceUpdatedV3 to L2 block ${number}: ${JSON.stringify(adopted)}`);
      const block: DerivedL2Block = {
        number,
        hash: payload.blockHash,
        parentHash: head.hash,
        timestamp,
        l1Origin: picked.origin,
        sequenceNumber: picked.sequenceNumber,
        transactions: [...attributes.transactions, ...fromPool],
        userTransactions: [...userTransactions, ...fromPool],
        userDeposits: attributes.transactions.length - 1 - userTransactions.length,
        attributes,
        systemConfig: built.systemConfig,
      };
      if (options.keepBlocks ?? true) blocks.push(block);
      head = { hash: block.hash, number, timestamp };
      origin = picked.origin;
      sequenceNumber = picked.sequenceNumber;
      systemConfig = built.systemConfig;
      return block;
    },
  };
}
