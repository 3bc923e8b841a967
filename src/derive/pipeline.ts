import { hexToBytes, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { rulesAt, type RollupConfig } from '../op/rollup-config.ts';
import { attributesFor, l1BlobBaseFee, type DerivedPayloadAttributes } from './attributes.ts';
import { batcherFramesOf } from './batcher-txs.ts';
import { createChannelBank, type ChannelBank, type ChannelEvent } from './channel-bank.ts';
import { decompressChannel, readChannelBatches, type ChannelBatch } from './channel.ts';
import { derivationConfigOf, type DerivationConfig } from './derivation-config.ts';
import type { L1BlockHeader, L1Source } from './l1-source.ts';
import { decodingForkAt, derivationRules, type DerivationRules } from './rules.ts';
import { nextBatch, type DeriveSafeHead, type QueuedBatch, type SafeState } from './batch-stage.ts';

export type { DeriveSafeHead };
import type { SafeBlock, SafeBlocks } from './span-batch-validity.ts';
import { applySystemConfigUpdates, type SystemConfig } from './system-config.ts';

/**
 * Derivation of a range of L2 blocks from L1 (specs/protocol/derivation.md, the Holocene pipeline):
 * from the agreed L2 block (the safe head) it walks L1 back from `l1Head` far enough to see every
 * channel that can still hold a batch for the next block, then forward: L1 traversal (the batcher
 * address from SystemConfig updates), retrieval (batcher transactions' calldata and blobs,
 * batcher-txs.ts), the channel bank, channel reading, the batch stage (batch-stage.ts: validity,
 * past and dropped batches, the empty batches of an expired sequencing window) and payload
 * attributes (attributes.ts). Each derived block is handed to `build`, which executes it and
 * returns its hash: the next batch's parent check needs it.
 *
 * Base's Denim: block times come from the schedule by block number (schedule.ts), about five
 * blocks share a second, each carries the BaseTime deposit, only singular batches derive, and a
 * same-second batch built on an already safe block is skipped (batch-stage.ts, attributes.ts).
 *
 * What it does not do: upgrade deposits of a fork's activation block (attributesFor refuses
 * them), pre-Ecotone safe heads, and a span batch that overlaps blocks before the agreed one
 * without those blocks (its overlap check needs their transactions; it waits, undecided).
 */
export interface DerivedBlock {
  readonly number: bigint;
  readonly attributes: DerivedPayloadAttributes;
  readonly l1Origin: L1BlockHeader;
  readonly sequenceNumber: bigint;
  readonly systemConfig: SystemConfig;
  /** The L1 block whose data held the batch; undefined for an empty batch of an expired sequencing window. */
  readonly inclusion?: L1BlockHeader;
}

export interface DeriveInput {
  readonly rollup: RollupConfig;
  readonly l1: L1Source;
  readonly l1Head: Hex;
  readonly safeHead: DeriveSafeHead;
  /** The last L2 block to derive. */
  readonly until: bigint;
  /** Executes a derived block and returns its hash (the enclave: re-execution; tests: a node). */
  readonly build: (block: DerivedBlock) => Promise<Hex>;
  /**
   * Safe L2 blocks before the agreed one, by number (their references and transactions): a span
   * batch that starts before the agreed block is checked against them. Without them such a batch
   * waits, undecided, and the range does not derive.
   */
  readonly priorBlocks?: SafeBlocks;
  /** What derivation dropped or ignored, for logs and reports. */
  readonly onEvent?: (event: string) => void;
}

/**
 * The L1 chain from `l1Head` back to `stop` (inclusive), oldest first, linked by parent hash.
 */
function l1ChainBack(l1: L1Source, l1Head: Hex, stop: (header: L1BlockHeader) => boolean): L1BlockHeader[] {
  const chain: L1BlockHeader[] = [];
  let header = l1.header(l1Head);
  for (;;) {
    chain.push(header);
    if (stop(header) || header.number === 0n) break;
    header = l1.header(header.parentHash);
  }
  return chain.reverse();
}

/**
 * Derives the L2 blocks after `safeHead` up to `until`. Throws `DERIVE_L1_REORG` when the safe
 * head's L1 origin is not on the L1 chain of `l1Head`, and `DERIVE_INCOMPLETE` when the L1 data up
 * to `l1Head` does not derive `until`.
 *
 * @example const blocks = await deriveBlocks({ rollup, l1, l1Head, safeHead, until: 120n, build: execute });
 */
export async function deriveBlocks(input: DeriveInput): Promise<DerivedBlock[]> {
  const { rollup, l1, safeHead } = input;
  const config = derivationConfigOf(rollup);
  const originNumber = safeHead.l1Origin.number;
  let timeout: bigint | undefined;
  const chain = l1ChainBack(l1, input.l1Head, (header) => {
    if (header.number === originNumber) timeout = BigInt(rulesFor(config, header).channelTimeout);
    // An L1 head before the origin: nothing further back can hold it.
    if (timeout === undefined && header.number < originNumber) return true;
    return timeout !== undefined && header.number <= max(config.genesisL1Number, originNumber - timeout);
  });
  const origin = chain.find((header) => header.number === originNumber);
  if (!origin || origin.hash.toLowerCase() !== safeHead.l1Origin.hash.toLowerCase()) {
    throw new FlashlogError(
      'DERIVE_L1_REORG',
      `the agreed L2 block ${safeHead.number}'s L1 origin ${originNumber} ${safeHead.l1Origin.hash} is not on the L1 chain of ${input.l1Head}` +
        (origin ? ` (which has ${origin.hash} there)` : ` (the L1 head is block ${chain.at(-1)!.number})`),
    );
  }

  const derived: DerivedBlock[] = [];
  let safe: SafeState = { ...safeHead, epochNumber: originNumber };
  let batcher = safeHead.systemConfig.batcher;
  let bank: ChannelBank | undefined;
  const queue: QueuedBatch[] = [];
  const byNumber = new Map(chain.map((header) => [header.number, header]));
  const safeBlocks = new Map<bigint, SafeBlock>();
  const remember = (state: DeriveSafeHead) =>
    safeBlocks.set(state.number, {
      ref: { hash: state.hash, number: state.number, timestamp: state.timestamp, l1OriginNumber: state.l1Origin.number },
      transactions: state.transactions,
    });
  remember(safeHead);
  const event = input.onEvent ?? (() => {});

  for (const block of chain) {
    const rules = rulesFor(config, block);
    bank ??= createChannelBank(rules);
    // L1 traversal: the batcher as the SystemConfig names it after each L1 block past the origin.
    if (block.number > originNumber) {
      const receipts = await l1.receipts(block);
      batcher = applySystemConfigUpdates({ ...safe.systemConfig, batcher }, receipts, {
        systemConfig: config.systemConfigAddress,
        ecotone: rulesAt(rollup, block.timestamp).active('ecotone'),
      }).config.batcher;
    }
    const take = async (events: readonly ChannelEvent[]) => {
      for (const happened of events) {
        if (happened.type !== 'ready') {
          event(describe(happened));
          continue;
        }
        const batches = await channelBatches(happened.channel.data, rules, config, happened.channel.id, event);
        for (const batch of batches) queue.push({ batch, inclusion: block, channelId: happened.channel.id });
      }
    };
    await take(bank.advance(Number(block.number)));
    const retrieved = await batcherFramesOf(l1, block, config.batchInbox, batcher);
    for (const ignored of retrieved.ignored) event(`L1 block ${block.number} tx ${ignored.transactionIndex}: ${ignored.reason}`);
    for (const { frames } of retrieved.accepted) await take(bank.ingest(frames, Number(block.number)));
    // The batch stage: as many blocks as this L1 block's data (and the sequencing window) allow.
    for (;;) {
      if (safe.number >= input.until) return derived;
      const l1Blocks = chain.filter((header) => header.number >= safe.epochNumber && header.number <= block.number);
      const next = nextBatch(queue, {
        safe,
        l1Blocks,
        current: block,
        rollup,
        config,
        event,
        safeBlocks: (n) => safeBlocks.get(n) ?? input.priorBlocks?.(n),
      });
      if (!next) break;
      if (next.type === 'advance') {
        safe = { ...safe, epochNumber: safe.epochNumber + 1n };
        continue;
      }
      for (const batchBlock of next.blocks) {
        if (safe.number >= input.until) break;
        const epoch = byNumber.get(batchBlock.epochNumber);
        if (!epoch)
          throw new FlashlogError('DERIVE_INCOMPLETE', `L1 block ${batchBlock.epochNumber} (an epoch) is not in the walked L1 chain`);
        const built = await buildNext(input, safe, batchBlock, epoch, next.inclusion);
        derived.push(built.block);
        safe = built.safe;
        remember(safe);
      }
    }
  }
  if (safe.number < input.until) {
    throw new FlashlogError(
      'DERIVE_INCOMPLETE',
      `L1 up to ${input.l1Head} derives L2 blocks up to ${safe.number}, not ${input.until}` +
        (queue.length ? ` (${queue.length} batches wait: ${queue[0]!.reason ?? 'undecided'})` : ''),
    );
  }
  return derived;
}

/** One derived block: its attributes, built by the caller, and the safe head it leaves. */
async function buildNext(
  input: DeriveInput,
  safe: SafeState,
  batch: { timestamp: bigint; transactions: readonly Uint8Array[] },
  epoch: L1BlockHeader,
  inclusion: L1BlockHeader | undefined,
): Promise<{ block: DerivedBlock; safe: SafeState }> {
  const config = derivationConfigOf(input.rollup);
  const sequenceNumber = epoch.number === safe.l1Origin.number ? safe.sequenceNumber + 1n : 0n;
  const receipts = sequenceNumber === 0n ? await input.l1.receipts(epoch) : [];
  const { attributes, systemConfig } = attributesFor(
    { ...batch, parent: { number: safe.number, timestamp: safe.timestamp } },
    {
      header: {
        hash: epoch.hash,
        number: epoch.number,
        timestamp: epoch.timestamp,
        baseFeePerGas: epoch.baseFeePerGas,
        mixHash: epoch.mixHash,
        parentBeaconBlockRoot: epoch.parentBeaconBlockRoot,
        blobBaseFee: epoch.excessBlobGas === null ? null : l1BlobBaseFee(epoch.excessBlobGas, config.blobUpdateFraction(epoch)),
      },
      receipts,
    },
    sequenceNumber,
    safe.systemConfig,
    { rollup: input.rollup, depositContract: config.depositContract, systemConfig: config.systemConfigAddress },
  );
  const block: DerivedBlock = {
    number: safe.number + 1n,
    attributes,
    l1Origin: epoch,
    sequenceNumber,
    systemConfig,
    ...(inclusion ? { inclusion } : {}),
  };
  const hash = await input.build(block);
  return {
    block,
    safe: {
      hash,
      number: block.number,
      timestamp: attributes.timestamp,
      l1Origin: { hash: epoch.hash, number: epoch.number },
      sequenceNumber,
      systemConfig,
      transactions: attributes.transactions.map((tx) => hexToBytes(tx)),
      epochNumber: epoch.number > safe.epochNumber ? epoch.number : safe.epochNumber,
    },
  };
}

/** A ready channel's batches (a channel that does not decompress or read to its end gives what it read before). */
async function channelBatches(
  data: Uint8Array,
  rules: DerivationRules,
  config: DerivationConfig,
  id: Hex,
  event: (text: string) => void,
): Promise<ChannelBatch[]> {
  try {
    const decompressed = await decompressChannel(data, rules);
    const read = readChannelBatches(decompressed, rules, config.spanBatchChain, `channel ${id}`);
    if (read.end.reason !== 'end') event(`channel ${id}: ${read.end.error}`);
    return [...read.batches];
  } catch (error) {
    event(`channel ${id}: ${(error as Error).message}`);
    return [];
  }
}

const rulesFor = (config: DerivationConfig, header: L1BlockHeader): DerivationRules =>
  derivationRules(decodingForkAt(config.rollup, header.timestamp), config.channelTimeoutBedrock);

const max = (a: bigint, b: bigint) => (a > b ? a : b);

const describe = (event: { type: string; channelId: Hex; reason: string; frameNumber?: number }) =>
  event.type === 'frameDropped'
    ? `channel ${event.channelId} frame ${event.frameNumber} dropped: ${event.reason}`
    : `channel ${event.channelId} dropped: ${event.reason}`;
