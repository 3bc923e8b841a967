import type { Logger } from 'pino';
import { keccak256, numberToHex, toHex, type Hex } from 'viem';
import { JsonRpcError } from '../errors.ts';
import { transactionHash } from '../wire/tx-hash.ts';
import type { Engine } from './edr-chain.ts';
import { createTickLoop } from './tick-loop.ts';
import { l1AttributesDeposit, type L1Attributes } from './deposit.ts';

/**
 * The block producer: Base's sequencer + flashblocks builder in miniature.
 *
 *   block N:  t=0           index 0: base + L1-attributes deposit + queued user deposits
 *             t=k·F         index k: the transactions that reached the mempool since index k-1
 *             t=n·F (=B)    index n: the last flashblock, and the block is sealed from exactly
 *                           the same transactions (one atomic step), then block N+1 starts
 *
 * Each flashblock is computed by mining a trial block from the mempool (FIFO) with the block's
 * environment (timestamp, prevRandao), reading its header, then reverting to the snapshot (EDR
 * restores the mempool with it). The running `diff` fields are therefore the real header fields
 * of the block so far, and the last flashblock's `block_hash` is the sealed block's hash
 * (except on a `--reorg-every` block, which seals without its last pre-confirmed transaction).
 */
export interface Flashblock {
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
    readonly receipts?: Record<Hex, MetadataReceipt>;
  };
}

export interface MetadataReceipt {
  readonly type: Hex;
  readonly status: Hex;
  readonly cumulativeGasUsed: Hex;
  readonly logs: readonly { address: Hex; topics: readonly Hex[]; data: Hex }[];
  readonly depositNonce?: Hex;
  readonly depositReceiptVersion?: Hex;
}

/** What the producer tells the world when a block is sealed. */
export interface SealedBlock {
  readonly number: bigint;
  readonly hash: Hex;
  readonly transactions: readonly Hex[];
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
  readonly metadataReceipts: boolean;
  /** 0 = never. */
  readonly reorgEvery: number;
  /** `buildMs`: from the start of the flashblock's step (mining, reading, receipts) to this call. */
  readonly onFlashblock: (flashblock: Flashblock, buildMs: number) => void;
  readonly onSealed?: (block: SealedBlock) => void;
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
}

interface RpcBlock {
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
interface RpcReceipt {
  type: Hex;
  status: Hex;
  cumulativeGasUsed: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex }[];
  depositNonce?: Hex;
  depositReceiptVersion?: Hex;
}

const ZERO32: Hex = `0x${'0'.repeat(64)}`;

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

export function createProducer(options: ProducerOptions): Producer {
  const { engine, logger } = options;
  const perBlock = Math.max(1, Math.round(options.blockTimeMs / options.flashblockMs));
  /** Raw bytes by hash of every transaction not yet sealed (EDR gives hashes, the feed needs bytes). */
  const rawByHash = new Map<Hex, Hex>();
  const queuedDeposits: Hex[] = [];
  /** `sender:nonce` of every user transaction not yet sealed, by hash. */
  const keyByHash = new Map<Hex, string>();
  let stopped = false;

  interface Current {
    number: bigint;
    timestamp: bigint;
    prevRandao: Hex;
    payloadId: Hex;
    announced: Hex[];
    index: number;
    /** `sender:nonce` -> hash of every pre-confirmed user transaction of the block. */
    announcedKeys: Map<string, Hex>;
    /** The block as last trial-mined, while no transaction has reached the mempool since. */
    unchanged: RpcBlock | null;
  }
  let current: Current | undefined;
  let stepStarted = 0;

  type Call = <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>;

  async function mine(call: Call, block: Current): Promise<RpcBlock> {
    await call('evm_setNextBlockTimestamp', [numberToHex(block.timestamp)]);
    await call('hardhat_setPrevRandao', [block.prevRandao]);
    await call('evm_mine');
    return call<RpcBlock>('eth_getBlockByNumber', ['latest', false]);
  }

  /** Mines a trial block, emits its flashblock (receipts are readable until the revert), reverts. */
  async function trial(call: Call, block: Current): Promise<void> {
    if (block.unchanged) {
      // Nothing new since the last trial: the same block again, a flashblock without transactions.
      // Mining it again would cost CPU and memory (EDR keeps ~3 KB per executed transaction, even
      // reverted) for nothing.
      await emit(call, block, block.unchanged);
      return;
    }
    const snapshot = await call<Hex>('evm_snapshot');
    try {
      const mined = await mine(call, block);
      block.unchanged = mined;
      await emit(call, block, mined);
    } finally {
      const reverted = await call<boolean>('evm_revert', [snapshot]);
      if (!reverted) throw new Error(`evm_revert ${snapshot} failed: the devnet's state is inconsistent`);
    }
  }

  function rawOf(hash: Hex): Hex {
    const raw = rawByHash.get(hash);
    if (!raw) throw new Error(`transaction ${hash} was mined but its raw bytes are unknown`);
    return raw;
  }

  /**
   * Puts the mempool back as it was before `replacement` evicted a pre-confirmed transaction: EDR
   * orders by insertion, so everything is taken out and sent again, the block's pre-confirmed
   * transactions first in their order, then the rest in theirs.
   */
  async function restoreMempool(call: Call, block: Current, replacement: Hex): Promise<void> {
    await call('hardhat_dropTransaction', [replacement]);
    const pending = (await call<{ hash: Hex }[]>('eth_pendingTransactions')).map((tx) => tx.hash);
    for (const hash of pending) await call('hardhat_dropTransaction', [hash]);
    const announced = new Set(block.announced);
    for (const hash of [...block.announced, ...pending.filter((hash) => !announced.has(hash))]) {
      const raw = rawByHash.get(hash);
      if (raw) await call('eth_sendRawTransaction', [raw]);
    }
  }

  async function metadataFor(call: Call, hashes: readonly Hex[]): Promise<Record<Hex, MetadataReceipt>> {
    const receipts: Record<Hex, MetadataReceipt> = {};
    for (const hash of hashes) {
      const receipt = await call<RpcReceipt>('eth_getTransactionReceipt', [hash]);
      receipts[hash] = {
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
    return receipts;
  }

  /** Emits the flashblock for `mined` (a trial or the sealed block): the txs beyond `announced`. */
  async function emit(call: Call, block: Current, mined: RpcBlock): Promise<void> {
    const prefix = mined.transactions.slice(0, block.announced.length);
    if (prefix.some((hash, position) => hash !== block.announced[position])) {
      logger.error(
        { block: block.number, index: block.index },
        'devnet: the mempool reordered pre-confirmed transactions; the feed no longer matches the chain',
      );
    }
    const added = mined.transactions.slice(block.announced.length);
    const flashblock: Flashblock = {
      payload_id: block.payloadId,
      index: block.index,
      ...(block.index === 0
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
        transactions: added.map(rawOf),
        withdrawals: [],
        withdrawals_root: mined.withdrawalsRoot,
        ...(mined.blobGasUsed ? { blob_gas_used: mined.blobGasUsed } : {}),
      },
      metadata: {
        block_number: Number(block.number),
        // Era B (before Azul) also carried new_account_balances; the devnet leaves them out.
        ...(options.metadataReceipts ? { receipts: await metadataFor(call, added) } : {}),
        access_list: null,
      },
    };
    block.announced.push(...added);
    for (const hash of added) {
      const key = keyByHash.get(hash);
      if (key) block.announcedKeys.set(key, hash);
    }
    block.index += 1;
    options.onFlashblock(flashblock, performance.now() - stepStarted);
  }

  /** Opens the next block: L1-attributes deposit and user deposits, then index 0. */
  async function openBlock(call: Call): Promise<Current> {
    const parent = await call<RpcBlock>('eth_getBlockByNumber', ['latest', false]);
    const number = BigInt(parent.number) + 1n;
    const timestamp = BigInt(parent.timestamp) + BigInt(options.blockTimeSeconds);
    const block: Current = {
      number,
      timestamp,
      prevRandao: keccak256(toHex(`devnet prevRandao ${number}`)),
      payloadId: keccak256(`0x${parent.hash.slice(2)}${numberToHex(timestamp, { size: 8 }).slice(2)}`).slice(0, 18) as Hex,
      announced: [],
      announcedKeys: new Map(),
      index: 0,
      unchanged: null,
    };
    const deposits = [
      l1AttributesDeposit(l1AttributesFor(number, timestamp), number),
      ...queuedDeposits.splice(0),
      ...(options.takeDeposits?.() ?? []),
    ];
    for (const raw of deposits) {
      try {
        const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
        rawByHash.set(hash, raw);
      } catch (error) {
        logger.warn(
          { block: number, tx: transactionHash(raw), err: (error as Error).message },
          'devnet: a deposit was refused; it is left out',
        );
      }
    }
    await trial(call, block);
    return block;
  }

  /** One flashblock tick; the last one of a block seals it and opens the next. */
  async function tick(): Promise<void> {
    await engine.exclusive(async (call) => {
      stepStarted = performance.now();
      if (!current) {
        current = await openBlock(call);
        return;
      }
      const block = current;
      if (block.index < perBlock) {
        await trial(call, block);
        return;
      }
      // The last flashblock of the block, and the seal, from the same mined block. From here on the
      // block is sealed whatever fails, so the next tick opens a new one.
      current = undefined;
      const snapshot = await call<Hex>('evm_snapshot');
      const mined = await mine(call, block);
      await emit(call, block, mined);
      let sealed = mined;
      let dropped: Hex | null = null;
      if (options.reorgEvery > 0 && block.number % BigInt(options.reorgEvery) === 0n) {
        const last = block.announced.filter((hash) => !rawOf(hash).startsWith('0x7e')).at(-1);
        if (last) {
          // Seal without the last pre-confirmed transaction; it goes back to the mempool after.
          await call('evm_revert', [snapshot]);
          await call('hardhat_dropTransaction', [last]);
          sealed = await mine(call, block);
          dropped = last;
          logger.info({ block: block.number, dropped: last }, 'devnet: reorg, sealed without a pre-confirmed transaction');
        } else {
          logger.info({ block: block.number }, 'devnet: --reorg-every block has no user transaction to leave out; sealed as pre-confirmed');
        }
      }
      // The seal's snapshot is needed no more: drop it, or EDR keeps one per block for good.
      // (evm_revert drops every snapshot from the given id on; ids start at 1, so 0 restores nothing.)
      await call('evm_revert', ['0x0']);
      // Transactions still in the mempool (the block was full, or their nonce has a gap) leave it
      // until the next block's deposits are in, so the L1-attributes deposit stays first.
      const requeue: Hex[] = dropped ? [rawOf(dropped)] : [];
      for (const { hash } of await call<{ hash: Hex }[]>('eth_pendingTransactions')) {
        const raw = rawByHash.get(hash);
        if (!raw) continue;
        await call('hardhat_dropTransaction', [hash]);
        requeue.push(raw);
      }
      for (const hash of sealed.transactions) {
        rawByHash.delete(hash);
        keyByHash.delete(hash);
      }
      options.onSealed?.({ number: block.number, hash: sealed.hash, transactions: sealed.transactions, dropped });
      current = await openBlock(call);
      if (requeue.length > 0) current.unchanged = null;
      for (const raw of requeue) {
        try {
          const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
          rawByHash.set(hash, raw);
        } catch (error) {
          rawByHash.delete(transactionHash(raw));
          logger.warn(
            { tx: transactionHash(raw), err: (error as Error).message },
            'devnet: a transaction could not go back to the mempool after the seal; it is dropped',
          );
        }
      }
    });
  }

  const loop = createTickLoop(options.flashblockMs, tick, logger, 'flashblock tick');

  return {
    started: loop.started,
    async submit(raw) {
      if (stopped) throw new Error('the devnet is stopping');
      return engine.exclusive(async (call) => {
        const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
        rawByHash.set(hash, raw);
        if (current) current.unchanged = null;
        const tx = await call<{ from: Hex; nonce: Hex } | null>('eth_getTransactionByHash', [hash]);
        if (!tx) return hash;
        const key = `${tx.from.toLowerCase()}:${BigInt(tx.nonce)}`;
        const preconfirmed = current?.announcedKeys.get(key);
        if (current && preconfirmed && preconfirmed !== hash) {
          // The mempool took it as a replacement of a pre-confirmed transaction: undo that.
          await restoreMempool(call, current, hash);
          rawByHash.delete(hash);
          throw new JsonRpcError(
            -32000,
            `replacement transaction refused: ${preconfirmed} has the same sender and nonce and is already pre-confirmed`,
          );
        }
        keyByHash.set(hash, key);
        if (options.preconfirmOnSubmit && current && current.index < perBlock) {
          stepStarted = performance.now();
          await trial(call, current);
        }
        return hash;
      });
    },
    submitDeposit(raw) {
      queuedDeposits.push(raw);
      return transactionHash(raw);
    },
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
