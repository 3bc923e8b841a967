import type { Logger } from 'pino';
import {
  bytesToHex,
  commitmentsToVersionedHashes,
  hexToBigInt,
  hexToBytes,
  slice,
  toBlobSidecars,
  type Address,
  type BlobSidecar,
  type Hex,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { encodeBlob } from '../src/derive/blob-encoder.ts';
import { encodeChannelOut, type BatchBlock, type BatchKind, type BatcherTarget } from '../src/derive/channel-out.ts';
import type { CompressionAlgo } from '../src/derive/channel.ts';
import type { SpanBatchChain } from '../src/derive/span-batch.ts';
import { errorMessage, FlashlogError } from '../src/errors.ts';
import { createKzgThread, type KzgThread } from './kzg-thread.ts';
import { l1InfoCalldata, parseL1Info } from '../src/op/l1-info.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';

/**
 * The devnet's batcher: every `everyBlocks` sealed L2 blocks it encodes them into one channel
 * (src/derive/channel-out.ts) and sends the batcher transactions from its key to the batch inbox
 * on an L1, as op-batcher does: calldata (one frame a transaction) or EIP-4844 blobs (one frame a
 * blob, up to 6 blobs a transaction, with KZG commitments and proofs from micro-eth-signer, on a thread of their own: kzg-thread.ts).
 *
 * It is an invariant that the L1 going away never stops the devnet: a failed post is logged and
 * retried after `retryMs` with a new channel (the frames already on L1 stay an incomplete channel,
 * which derivation times out), and the blocks not yet posted are bounded by `maxPendingBlocks`
 * (the oldest are dropped with an error log: the L1 then misses them for good).
 */
export interface BatcherOptions {
  readonly l1RpcUrl: string;
  readonly key: Hex;
  readonly inbox: Address;
  readonly everyBlocks: number;
  readonly target: BatcherTarget;
  readonly kind: BatchKind;
  readonly compression: CompressionAlgo;
  /** The L2's genesis time, block time and chain id (span batches). */
  readonly chain: SpanBatchChain;
  readonly logger: Logger;
  /** Default 10,000 blocks. */
  readonly maxPendingBlocks?: number;
  /** Default 2,000 ms. */
  readonly retryMs?: number;
  /** Posted transactions kept with their blobs (`posted()`); default 64. */
  readonly keepPosted?: number;
}

/** A sealed L2 block as the batcher reads it: its header fields and all its transactions (deposits too). */
export interface BatcherL2Block {
  readonly number: bigint;
  readonly parentHash: Hex;
  readonly timestamp: bigint;
  readonly transactions: readonly Hex[];
}

/** One batcher transaction the L1 included. */
export interface PostedBatch {
  readonly l1TransactionHash: Hex;
  readonly l1BlockNumber: bigint;
  /** The L1 block's timestamp (the beacon endpoint's slot: beacon-blobs.ts). */
  readonly l1BlockTimestamp: bigint;
  readonly channelId: Hex;
  /** The first and last L2 block of the channel. */
  readonly l2Blocks: readonly [bigint, bigint];
  /** Blob transactions: each blob with its commitment, proof and versioned hash. */
  readonly blobs: readonly (BlobSidecar<Hex> & { readonly versionedHash: Hex })[];
}

export interface Batcher {
  /** Queues a sealed block; a post starts once `everyBlocks` are queued. */
  add(block: BatcherL2Block): void;
  /** The newest posted transactions (at most `keepPosted`), oldest first. */
  posted(): readonly PostedBatch[];
  /** Blocks sealed and not yet posted. */
  pending(): number;
  /** Waits for the post in progress, then stops. */
  stop(): Promise<void>;
}

/** Blobs a transaction may carry: 6, Cancun's max (Prague's is 9; op-batcher's default target is 6). */
const blobsPerTransaction = 6;

/**
 * The batch fields of a sealed block: its L1 origin and sequence number from its L1-info deposit
 * (the Ecotone and later packed forms: l1BlockHash at bytes 100-132), its user transactions.
 */
export function batchBlockOf(block: BatcherL2Block): BatchBlock {
  const calldata = l1InfoCalldata(block.transactions);
  const info = parseL1Info(calldata, `L2 block ${block.number} L1-info deposit`);
  if (info.l1BlockNumber === undefined || info.sequenceNumber === undefined) {
    throw new FlashlogError(
      'FORK_UNSUPPORTED',
      `L2 block ${block.number}: the L1-info deposit is of the ${info.form} form, expected Ecotone or later`,
    );
  }
  return {
    parentHash: block.parentHash,
    timestamp: block.timestamp,
    epochNumber: info.l1BlockNumber,
    epochHash: slice(calldata, 100, 132),
    sequenceNumber: info.sequenceNumber,
    transactions: block.transactions.filter((tx) => !tx.toLowerCase().startsWith('0x7e')).map((tx) => hexToBytes(tx)),
  };
}

/**
 * Starts a batcher; `add` it every sealed block.
 *
 * @example const batcher = createBatcher({ l1RpcUrl, key, inbox, everyBlocks: 10, target: 'blob', kind: 'span', compression: 'brotli', chain, logger })
 */
export function createBatcher(options: BatcherOptions): Batcher {
  const { logger } = options;
  const l1 = createUpstream(options.l1RpcUrl, { timeoutMs: 10_000 });
  const account = privateKeyToAccount(options.key);
  const maxPending = options.maxPendingBlocks ?? 10_000;
  const retryMs = options.retryMs ?? 2000;
  const keepPosted = options.keepPosted ?? 64;
  const queue: { number: bigint; block: BatchBlock }[] = [];
  const posted: PostedBatch[] = [];
  let running: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  let chainId: number | undefined;
  const kzgThread = createKzgThread();

  const call = async <T>(method: string, params: unknown[] = []) => (await l1.call(method, params)) as T;

  /** Sends one signed transaction and waits (polling) until the L1 includes it. */
  const send = async (raw: Hex): Promise<{ hash: Hex; blockNumber: bigint; timestamp: bigint }> => {
    const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
    for (let waited = 0; waited < 120_000 && !stopped; waited += 250) {
      const receipt = await call<{ status: Hex; blockNumber: Hex } | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) {
        if (receipt.status !== '0x1') throw new FlashlogError('DEVNET_L1_FAILED', `L1 transaction ${hash} reverted`);
        const block = await call<{ timestamp: Hex }>('eth_getBlockByNumber', [receipt.blockNumber, false]);
        return { hash, blockNumber: hexToBigInt(receipt.blockNumber), timestamp: hexToBigInt(block.timestamp) };
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new FlashlogError(
      'DEVNET_L1_FAILED',
      `L1 transaction ${hash} not included ${stopped ? 'before the batcher stopped' : 'within 120 s'}`,
    );
  };

  /** Posts the oldest `everyBlocks` queued blocks as one channel. */
  const postOne = async () => {
    const batch = queue.slice(0, options.everyBlocks);
    const channelId = bytesToHex(crypto.getRandomValues(new Uint8Array(16)));
    const out = encodeChannelOut(
      batch.map((entry) => entry.block),
      { kind: options.kind, compression: options.compression, channelId, target: options.target, chain: options.chain },
    );
    chainId ??= Number(hexToBigInt(await call<Hex>('eth_chainId')));
    let nonce = Number(hexToBigInt(await call<Hex>('eth_getTransactionCount', [account.address, 'pending'])));
    const head = await call<{ baseFeePerGas?: Hex }>('eth_getBlockByNumber', ['latest', false]);
    const baseFee = hexToBigInt(head.baseFeePerGas ?? '0x0');
    const fees = { maxFeePerGas: baseFee * 2n + 1_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
    const l2Blocks = [batch[0]!.number, batch.at(-1)!.number] as const;
    const units = options.target === 'blob' ? chunk(out.data, blobsPerTransaction) : out.data.map((data) => [data]);
    for (const unit of units) {
      const blobBaseFee = options.target === 'blob' ? await call<Hex>('eth_blobBaseFee').then(hexToBigInt, () => 1_000_000_000n) : 0n;
      const { raw, blobs } = await signBatcherTransaction(account, kzgThread, unit, {
        chainId,
        nonce: nonce++,
        ...fees,
        maxFeePerBlobGas: blobBaseFee * 2n + 1n,
        to: options.inbox,
        target: options.target,
      });
      const included = await send(raw);
      posted.push({
        l1TransactionHash: included.hash,
        l1BlockNumber: included.blockNumber,
        l1BlockTimestamp: included.timestamp,
        channelId,
        l2Blocks,
        blobs,
      });
      if (posted.length > keepPosted) posted.splice(0, posted.length - keepPosted);
    }
    // The bound may have dropped blocks while this channel was posted: remove up to its last block.
    queue.splice(0, queue.indexOf(batch.at(-1)!) + 1);
    logger.info(
      {
        l2Blocks: l2Blocks.map(String),
        channelId,
        transactions: units.length,
        frames: out.frames.length,
        compressedBytes: out.compressed.length,
      },
      'batcher: channel posted to L1',
    );
  };

  const drain = async () => {
    while (!stopped && queue.length >= options.everyBlocks) {
      try {
        await postOne();
      } catch (error) {
        logger.warn(
          { err: errorMessage(error), pending: queue.length, retryMs },
          'batcher: posting to L1 failed; retrying with a new channel',
        );
        if (!stopped) retry = setTimeout(kick, retryMs);
        return;
      }
    }
  };
  function kick() {
    retry = undefined;
    if (stopped || running) return;
    running = drain().finally(() => {
      running = undefined;
      if (!retry && !stopped && queue.length >= options.everyBlocks) kick();
    });
  }

  return {
    add(block) {
      if (stopped) return;
      try {
        queue.push({ number: block.number, block: batchBlockOf(block) });
      } catch (error) {
        logger.error({ err: errorMessage(error), block: String(block.number) }, 'batcher: block not batched');
        return;
      }
      if (queue.length > maxPending) {
        const dropped = queue.splice(0, queue.length - maxPending);
        logger.error(
          { dropped: dropped.length, first: String(dropped[0]!.number), maxPendingBlocks: maxPending },
          'batcher: too many blocks not posted; the oldest are dropped and will never reach the L1',
        );
      }
      if (!retry) kick();
    },
    posted: () => [...posted],
    pending: () => queue.length,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await running;
      await kzgThread.close();
    },
  };
}

/**
 * One batcher transaction: a blob transaction (gas 21,000; the blobs with their KZG commitments
 * and proofs as its sidecars) or a calldata one (gas at Prague's EIP-7623 floor, 10 a token and 4
 * tokens a byte: always enough).
 */
async function signBatcherTransaction(
  account: PrivateKeyAccount,
  kzg: KzgThread,
  unit: readonly Uint8Array[],
  tx: {
    chainId: number;
    nonce: number;
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
    maxFeePerBlobGas: bigint;
    to: Address;
    target: BatcherTarget;
  },
): Promise<{ raw: Hex; blobs: PostedBatch['blobs'] }> {
  const { target, maxFeePerBlobGas, ...common } = tx;
  if (target === 'calldata') {
    const data = unit[0]!;
    const raw = await account.signTransaction({
      type: 'eip1559',
      ...common,
      gas: 21_000n + 40n * BigInt(data.length),
      data: bytesToHex(data),
    });
    return { raw, blobs: [] };
  }
  const blobs = unit.map((data) => bytesToHex(encodeBlob(data)));
  const { commitments, proofs } = await kzg.prove(blobs);
  const sidecars = toBlobSidecars({ blobs, commitments, proofs });
  const blobVersionedHashes = commitmentsToVersionedHashes({ commitments });
  const raw = await account.signTransaction({ type: 'eip4844', ...common, gas: 21_000n, maxFeePerBlobGas, blobVersionedHashes, sidecars });
  return { raw, blobs: sidecars.map((sidecar, i) => ({ ...sidecar, versionedHash: blobVersionedHashes[i]! })) };
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}
