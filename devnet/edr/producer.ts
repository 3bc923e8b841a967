import type { Logger } from 'pino';
import { keccak256, numberToHex, parseTransaction, recoverTransactionAddress, type Hex } from 'viem';
import { JsonRpcError, ServerError } from '../../src/errors.ts';
import { transactionHash } from '../../src/wire/tx-hash.ts';
import type { Engine } from './edr-chain.ts';
import { createReorgHold } from './reorg-hold.ts';
import { createTickLoop } from './tick-loop.ts';
import type { L1Attributes } from '../deposit.ts';
import { createBlockBuilding, mineNext, type Call, type OpenBlock, type TxBook } from './block-building.ts';
import { ZERO32, type SentFlashblock, type MinedBlock } from './sent-flashblock.ts';

/**
 * The block producer: Base's sequencer + flashblocks builder in miniature.
 *
 *   block N:  t=0           index 0: base + L1-attributes deposit + queued user deposits
 *             t=k·F         index k: the transactions that reached the mempool since index k-1
 *             t=n·F (=B)    index n: the last flashblock, and the block is sealed from exactly
 *                           the same transactions (one atomic step), then block N+1 starts
 *
 * How each flashblock is computed, executing each transaction once before the seal, is in
 * block-building.ts; the last flashblock's `block_hash` is the sealed block's hash (except on a
 * `--reorg-every` block, which seals without its last pre-confirmed transaction).
 *
 * A `--reorg-every` block takes no new transaction in the second half of its flashblocks
 * (reorg-hold.ts).
 */
export type { SentFlashblock, SentMetadataReceipt } from './sent-flashblock.ts';

/** What the producer tells the world when a block is sealed. */
export interface SealedBlock {
  readonly number: bigint;
  readonly hash: Hex;
  /** Transaction hashes, in order. */
  readonly transactions: readonly Hex[];
  /** The same transactions' EIP-2718 bytes (deposits included), for the batcher. */
  readonly rawTransactions: readonly Hex[];
  readonly parentHash: Hex;
  readonly timestamp: bigint;
  /** The pre-confirmed transaction left out of this block by --reorg-every, if any. */
  readonly dropped: Hex | null;
}

export interface ProducerOptions {
  readonly engine: Engine;
  readonly logger: Logger;
  readonly blockTimeMs: number;
  readonly flashblockMs: number;
  /** Seconds added to the parent timestamp for each block (at least 1). */
  readonly blockTimeSeconds: number;
  /** The engine's block gas limit (what a block may hold). */
  readonly blockGasLimit: bigint;
  readonly metadataReceipts: boolean;
  /** 0 = never. */
  readonly reorgEvery: number;
  /** `buildMs`: from the start of the flashblock's step (mining, reading, receipts) to this call. */
  readonly onFlashblock: (flashblock: SentFlashblock, buildMs: number) => void;
  readonly onSealed?: (block: SealedBlock) => void;
  /**
   * Called after each seal inside the producer's exclusive section, the sealed block the engine's
   * head, no snapshot held and the mempool empty (the bounded history, rollover.ts).
   */
  readonly afterSeal?: (call: Call, block: SealedBlock) => Promise<void>;
  /** Called at the start of every block (inside the producer's exclusive section) for user deposits. */
  readonly takeDeposits?: () => readonly Hex[];
  /**
   * Pre-confirm a submitted transaction at once: its flashblock is built and sent before `submit`
   * resolves (a sequencer whose pre-confirmation can reach a gateway before its RPC answer).
   */
  readonly preconfirmOnSubmit?: boolean;
}

export interface Producer {
  /** Holds a raw transaction until the next flashblock; resolves with its hash or rejects as the engine does. */
  submit(raw: Hex): Promise<Hex>;
  /** Queues a deposit (0x7e) for index 0 of the next block. */
  submitDeposit(raw: Hex): Hex;
  /** Stops after the flashblock in progress. */
  stop(): Promise<void>;
  readonly started: Promise<void>;
  /**
   * The newest sealed block's number, when the engine holds trial blocks beyond it between two
   * ticks (the flashblocks producer); the devnet's JSON-RPC then answers as of it (sealed-view.ts).
   */
  readonly sealedHead?: () => bigint;
}

/** The devnet's L1 origin for an L2 block: a new L1 block every 6 L2 blocks (12 s at 2 s). */
export function l1AttributesFor(l2Number: bigint, l2Timestamp: bigint): L1Attributes {
  const epoch = l2Number / 6n;
  return {
    l1Number: 1000n + epoch,
    l1Timestamp: l2Timestamp - (l2Number % 6n) * 2n,
    l1BaseFee: 1_000_000_000n,
    l1BlobBaseFee: 1n,
    l1Hash: keccak256(numberToHex(1000n + epoch, { size: 32 })),
    sequenceNumber: l2Number % 6n,
    batcherHash: ZERO32,
    baseFeeScalar: 2269,
    blobBaseFeeScalar: 1_055_762,
    // Small but non-zero, so receipts carry an operator fee.
    operatorFeeScalar: 100,
    operatorFeeConstant: 1000n,
  };
}

/** The `sender:nonce` of a raw user transaction, or null when it does not parse. */
async function keyOf(raw: Hex): Promise<string | null> {
  try {
    const tx = parseTransaction(raw);
    const from = await recoverTransactionAddress({ serializedTransaction: raw as never });
    return `${from.toLowerCase()}:${BigInt(tx.nonce ?? 0)}`;
  } catch {
    return null;
  }
}

/**
 * What to answer for a raw transaction the engine refused. A pre-confirmed transaction is already
 * executed (in a trial block), so one with its sender and nonce is refused as a low nonce: say why,
 * in geth's words, which clients match (viem: NonceTooLowError; any other -32000 message is its
 * "Missing or invalid parameters").
 */
async function submitError(error: unknown, raw: Hex, announcedKeys: ReadonlyMap<string, Hex> | undefined): Promise<unknown> {
  const key = await keyOf(raw);
  const preconfirmed = key ? announcedKeys?.get(key) : undefined;
  if (!preconfirmed) return error;
  return new JsonRpcError(
    -32000,
    `nonce too low: replacement transaction refused: ${preconfirmed} has the same sender and nonce and is already pre-confirmed`,
  );
}

export function createProducer(options: ProducerOptions): Producer {
  const { engine, logger } = options;
  const perBlock = Math.max(1, Math.round(options.blockTimeMs / options.flashblockMs));
  const book: TxBook = { rawByHash: new Map(), keyByHash: new Map(), queuedDeposits: [] };
  let stopped = false;
  let current: OpenBlock | undefined;
  const reorgHold = createReorgHold({ flashblocksPerBlock: perBlock, reorgEvery: options.reorgEvery });
  let sealedHead = 0n;
  let stepStarted = 0;
  const building = createBlockBuilding({
    logger,
    book,
    blockTimeSeconds: options.blockTimeSeconds,
    blockGasLimit: options.blockGasLimit,
    metadataReceipts: options.metadataReceipts,
    takeDeposits: options.takeDeposits,
    l1AttributesFor,
    emit: (flashblock) => options.onFlashblock(flashblock, performance.now() - stepStarted),
  });

  async function open(call: Call): Promise<OpenBlock> {
    const parent = await call<MinedBlock>('eth_getBlockByNumber', ['latest', false]);
    sealedHead = BigInt(parent.number);
    return building.open(call, parent);
  }

  /** The last flashblock and the seal, from the same mined block; then the next block opens. */
  async function seal(call: Call, block: OpenBlock): Promise<OpenBlock> {
    const { mined, receipts } = await building.mineWhole(call, block);
    building.send(block, mined, mined.transactions.slice(block.announced.length), receipts.slice(block.announced.length));
    let sealed = mined;
    let dropped: Hex | null = null;
    if (options.reorgEvery > 0 && block.number % BigInt(options.reorgEvery) === 0n) {
      const last = block.announced.filter((hash) => !building.rawOf(hash).startsWith('0x7e')).at(-1);
      if (last) {
        // Seal without the last pre-confirmed transaction; it goes back to the mempool after.
        await call('evm_revert', [block.parentSnapshot]);
        await call('hardhat_dropTransaction', [last]);
        sealed = await mineNext(call, block);
        dropped = last;
        logger.info({ block: block.number, dropped: last }, 'devnet: reorg, sealed without a pre-confirmed transaction');
      } else {
        logger.info({ block: block.number }, 'devnet: --reorg-every block has no user transaction to leave out; sealed as pre-confirmed');
      }
    }
    // The parent's snapshot is needed no more: drop it, or EDR keeps one per block for good.
    // (evm_revert drops every snapshot from the given id on; ids start at 1, so 0 restores nothing.)
    await call('evm_revert', ['0x0']);
    // Transactions still in the mempool (the block was full, or their nonce has a gap) leave it
    // until the next block's deposits are in, so the L1-attributes deposit stays first.
    const requeue: Hex[] = dropped ? [building.rawOf(dropped)] : [];
    for (const { hash } of await call<{ hash: Hex }[]>('eth_pendingTransactions')) {
      const raw = book.rawByHash.get(hash);
      if (!raw) continue;
      await call('hardhat_dropTransaction', [hash]);
      requeue.push(raw);
    }
    const rawTransactions = sealed.transactions.map((hash) => building.rawOf(hash));
    for (const hash of sealed.transactions) {
      book.rawByHash.delete(hash);
      book.keyByHash.delete(hash);
    }
    const sealedBlock = {
      number: block.number,
      hash: sealed.hash,
      transactions: sealed.transactions,
      rawTransactions,
      parentHash: sealed.parentHash,
      timestamp: BigInt(sealed.timestamp),
      dropped,
    };
    options.onSealed?.(sealedBlock);
    await options.afterSeal?.(call, sealedBlock);
    const next = await open(call);
    for (const raw of requeue) {
      try {
        const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
        book.rawByHash.set(hash, raw);
        next.changed = true;
      } catch (error) {
        book.rawByHash.delete(transactionHash(raw));
        logger.warn(
          { tx: transactionHash(raw), err: (error as Error).message },
          'devnet: a transaction could not go back to the mempool after the seal; it is dropped',
        );
      }
    }
    return next;
  }

  /** One flashblock tick; the last one of a block seals it and opens the next. */
  async function tick(): Promise<void> {
    await engine.exclusive(async (call) => {
      stepStarted = performance.now();
      if (!current) current = await open(call);
      else if (current.index < perBlock) {
        await building.trial(call, current);
        reorgHold.afterFlashblock(current.number, current.index);
      } else {
        // From here on the block is sealed whatever fails, so the next tick opens a new one.
        const block = current;
        current = undefined;
        current = await seal(call, block);
        reorgHold.release();
      }
    });
  }

  const loop = createTickLoop(options.flashblockMs, tick, logger, 'flashblock tick');

  return {
    started: loop.started,
    sealedHead: () => sealedHead,
    async submit(raw) {
      if (stopped) throw new ServerError('the devnet is stopping');
      // The tail of a --reorg-every block takes nothing new: sent once the next block has opened.
      return reorgHold.whenTaking(() => submitNow(raw));
    },
    submitDeposit(raw) {
      book.queuedDeposits.push(raw);
      return transactionHash(raw);
    },
    async stop() {
      stopped = true;
      reorgHold.release();
      await loop.stop();
    },
  };

  /** Sends `raw` to the engine now; null when the block's tail is held (checked inside the exclusive section). */
  function submitNow(raw: Hex): Promise<Hex | null> {
    return engine.exclusive(async (call) => {
      if (reorgHold.holding()) return null;
      const hash = await call<Hex>('eth_sendRawTransaction', [raw]).catch(async (error: unknown) => {
        throw await submitError(error, raw, current?.announcedKeys);
      });
      book.rawByHash.set(hash, raw);
      if (current) current.changed = true;
      const tx = await call<{ from: Hex; nonce: Hex } | null>('eth_getTransactionByHash', [hash]);
      if (tx) book.keyByHash.set(hash, `${tx.from.toLowerCase()}:${BigInt(tx.nonce)}`);
      if (options.preconfirmOnSubmit && current && current.index > 0 && current.index < perBlock) {
        stepStarted = performance.now();
        await building.trial(call, current);
      }
      return hash;
    });
  }
}
