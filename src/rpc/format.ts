import { hexToBigInt, numberToHex, recoverTransactionAddress, type TransactionSerialized } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import type { RpcReceipt } from '../records/blocks.ts';
import { maxPendingBlocks, type PendingBlock } from '../view/state.ts';
import { ZERO_HASH } from '../schemas/hex.ts';
import { createGrowingRoots, emptyUnclesHash, isNotGiven, rebuildHeaderFields, type RebuiltHeaderFields } from './header-fields.ts';
import { formatPostExecTransaction, servedTransactions } from './post-exec.ts';
import { isPostExecTx } from '../op/post-exec.ts';
import { unknownTxType } from '../op/tx-types.ts';

/**
 * Wire formatting of the view's pending data into JSON-RPC objects: the one place where the
 * domain (raw EIP-2718 transactions, bigint numbers) becomes 0x-hex JSON.
 */
export type RpcObject = Record<string, unknown>;

const typeCodes: Record<string, `0x${string}`> = {
  legacy: '0x0',
  eip2930: '0x1',
  eip1559: '0x2',
  eip4844: '0x3',
  eip7702: '0x4',
  deposit: '0x7e',
};

const hex = (value: bigint | number): `0x${string}` => numberToHex(value);

/** viem's parse of a raw EIP-2718 transaction (OP deposits included), as read here. */
export type ParsedTransaction = ReturnType<typeof parseTransaction> & {
  type: string;
  to?: string | null;
  value?: bigint;
  data?: string;
  gas?: bigint;
  nonce?: number;
  chainId?: number;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  maxFeePerBlobGas?: bigint;
  accessList?: unknown;
  blobVersionedHashes?: readonly string[];
  authorizationList?: readonly { chainId: number; address: string; nonce: number; yParity?: number; r: string; s: string }[];
  v?: bigint;
  yParity?: number;
  r?: string;
  s?: string;
  from?: string;
  sourceHash?: string;
  mint?: bigint;
  isSystemTx?: boolean;
};

export interface TransactionFormatterOptions {
  /**
   * Whether the chain's fork schedule has Isthmus at a block (so its header has `requestsHash`);
   * undefined when the chain is not known. Asked only when the feed gives no builder hash to
   * check the rebuilt header against (a subblocks feed zeroes it).
   */
  readonly isthmusAt?: ((block: PendingBlock) => Promise<boolean | undefined>) | undefined;
}

export interface TransactionFormatter {
  /** A pending transaction object: `blockHash: null`, `blockNumber` and `transactionIndex` set. */
  transaction(block: PendingBlock, position: number): Promise<RpcObject>;
  /** `rebuildHeaderFields` of a flashblocks block, kept for the block's latest step. */
  headerFields(block: PendingBlock): Promise<RebuiltHeaderFields>;
}

/**
 * Keeps the transactions it formatted (signature recovery is the expensive part) for the last
 * `keptBlocks` block numbers it was asked about, at most `maxPerBlock` a block: the view holds
 * `maxPendingBlocks` blocks, so older ones are never asked for again (a cache of 20,000
 * transactions of any block grew the heap by ~1.8 MB/min at 30 tx/s before it was cleared, issue 19).
 * The receipt's `from` is used when the executor produced one.
 */
export function createTransactionFormatter(
  keptBlocks = maxPendingBlocks + 1,
  maxPerBlock = 20_000,
  options: TransactionFormatterOptions = {},
): TransactionFormatter {
  const byBlock = new Map<bigint, Map<string, RpcObject>>();
  let newest = -1n;
  /** The cache of `number`'s transactions; blocks `keptBlocks` or more below the newest are dropped. */
  const cacheOf = (number: bigint): Map<string, RpcObject> => {
    let cache = byBlock.get(number);
    if (cache) return cache;
    cache = new Map();
    byBlock.set(number, cache);
    if (number > newest) {
      newest = number;
      for (const held of byBlock.keys()) if (held <= newest - BigInt(keptBlocks)) byBlock.delete(held);
    }
    return cache;
  };
  /** Rebuilt header fields by block number, for the step (payload, index, count) they were built at. */
  const headers = new Map<bigint, { readonly step: string; readonly fields: Promise<RebuiltHeaderFields> }>();
  const roots = createGrowingRoots();
  /** The lowest block whose rebuilt header was exact with a `requestsHash` (Isthmus is on from there). */
  let requestsFrom: bigint | undefined;
  return {
    headerFields(block) {
      const step = `${block.payloadId}/${block.index}/${block.transactions.length}`;
      const kept = headers.get(block.number);
      if (kept?.step === step) return kept.fields;
      // Lagoon: a post-exec transaction changes from subblock to subblock, so it is not grown into the
      // kept root; the block with it (src/rpc/post-exec.ts) gets its root and size computed whole.
      const withPostExec = block.postExecTx ? { ...block, transactions: servedTransactions(block) } : undefined;
      const fields = (withPostExec ? Promise.resolve(undefined) : roots.rootOf(block)).then(async (root) => {
        const byRule =
          isNotGiven(block.header.flashblockHash) && options.isthmusAt ? await options.isthmusAt(block).catch(() => undefined) : undefined;
        const rebuilt = await rebuildHeaderFields(withPostExec ?? block, root, requestsFrom, byRule);
        if (rebuilt.exact && rebuilt.requestsHash !== undefined && (requestsFrom === undefined || block.number < requestsFrom))
          requestsFrom = block.number;
        return rebuilt;
      });
      headers.set(block.number, { step, fields });
      for (const held of headers.keys()) if (held <= block.number - BigInt(keptBlocks)) headers.delete(held);
      roots.dropBelow(block.number - BigInt(keptBlocks) + 1n);
      return fields;
    },
    async transaction(block, position) {
      // Lagoon: the post-exec transaction follows the streamed ones (a subblocks feed), or is the
      // last of a node's block (a blocks source) (src/rpc/post-exec.ts).
      const postExec = position === block.transactions.length ? block.postExecTx : block.transactions[position];
      if (postExec && isPostExecTx(postExec.raw)) {
        const place = {
          blockHash: denimFields(block).hash ?? null,
          blockTimestamp: block.header.timestamp,
          blockNumber: block.number,
          position,
        };
        return formatPostExecTransaction(postExec, { ...place, baseFeePerGas: BigInt(block.header.baseFeePerGas) });
      }
      const tx = block.transactions[position];
      if (!tx) throw new Error(`no transaction at position ${position} of pending block ${block.number}`);
      const formatted = cacheOf(block.number);
      // A blocks source's block replaced at the same height holds the same transaction under another hash.
      const key = `${tx.hash}/${position}/${denimFields(block).hash ?? ''}`;
      const cached = formatted.get(key);
      if (cached) return cached;
      const receipt = block.receipts[position];
      const unknown = unknownTxType(tx.raw);
      if (unknown !== undefined) {
        const object = formatUnknownTransaction(tx, unknown, {
          blockHash: denimFields(block).hash ?? null,
          blockTimestamp: block.header.timestamp,
          blockNumber: block.number,
          position,
          receipt,
          nodeJson: tx.rpc,
        });
        formatted.set(key, object);
        return object;
      }
      const parsed = parseTransaction(tx.raw as TransactionSerialized) as ParsedTransaction;
      let from = (parsed.from as string | undefined) ?? receipt?.from;
      if (!from) from = (await recoverTransactionAddress({ serializedTransaction: tx.raw as never })).toLowerCase();
      const object = formatTransaction(parsed, {
        hash: tx.hash,
        from,
        blockHash: denimFields(block).hash ?? null,
        blockTimestamp: block.header.timestamp,
        blockTimestampMs: denimFields(block).timestampMs,
        blockNumber: block.number,
        position,
        baseFeePerGas: BigInt(block.header.baseFeePerGas),
        receipt,
      });
      if (formatted.size >= maxPerBlock) formatted.clear();
      formatted.set(key, object);
      return object;
    },
  };
}

/** Where a transaction sits: the block around it, and its receipt when the executor produced one. */
export interface TransactionPlace {
  readonly hash: string;
  readonly from: string;
  /** The block's hash (blocks source); null while the block is being built (flashblocks source). */
  readonly blockHash: string | null;
  readonly blockTimestamp: string;
  readonly blockTimestampMs?: string | undefined;
  readonly blockNumber: bigint;
  readonly position: number;
  readonly baseFeePerGas: bigint;
  readonly receipt?: RpcReceipt | undefined;
}

/** A minimal hex quantity (`0x0`, no leading zeros) of a number, bigint or 0x-hex string. */
const quantityOf = (value: bigint | number | string): `0x${string}` =>
  numberToHex(typeof value === 'string' ? (value === '0x' ? 0n : hexToBigInt(value as `0x${string}`)) : value);

/**
 * One transaction as JSON-RPC answers it, field for field as op-geth's `newRPCTransaction`
 * (internal/ethapi/api.go) builds it, checked against the execution-apis `TransactionInfo`:
 * - `r`, `s` are QUANTITY (minimal hex, no leading zeros), whatever width the signature had;
 * - typed transactions (1, 2, 3, 4) carry `yParity` and `v` equal to it; legacy ones carry `v` as
 *   signed (27/28, or `chainId * 2 + 35/36` under EIP-155) and no `yParity`, plus `chainId` when
 *   EIP-155 protected;
 * - deposits (0x7e) have `v`, `r`, `s` and `gasPrice` 0x0, `sourceHash`, `mint` only when not
 *   zero (an empty RLP field, as op-geth decodes it to nil), `isSystemTx` only when true, the
 *   nonce and `depositReceiptVersion` from the receipt;
 * - `blockTimestamp` (and flashlog's `blockTimestampMs`) once the block has a hash; a
 *   transaction of a block being built has `blockHash: null` as go-ethereum's pending ones.
 * - `gasPrice` of a fee-market transaction is the effective price under the block's base fee;
 * - every field of the type's schema, zero or empty ones too (`accessList: []`, `maxFeePerGas: 0x0`).
 *
 * @example formatTransaction(parseTransaction(raw), place) // { type: '0x2', …, yParity: '0x1', v: '0x1', r: '0x9f…', s: '0xae3…' }
 */
export function formatTransaction(parsed: ParsedTransaction, place: TransactionPlace): RpcObject {
  const { receipt } = place;
  const object: RpcObject = {
    type: typeCodes[parsed.type] ?? '0x0',
    hash: place.hash,
    blockHash: place.blockHash,
    ...(place.blockHash !== null ? { blockTimestamp: quantityOf(place.blockTimestamp) } : {}),
    ...(place.blockHash !== null && place.blockTimestampMs !== undefined ? { blockTimestampMs: place.blockTimestampMs } : {}),
    blockNumber: numberToHex(place.blockNumber),
    transactionIndex: numberToHex(place.position),
    from: place.from,
    to: parsed.to ?? null,
    value: hex(parsed.value ?? 0n),
    input: parsed.data ?? '0x',
    gas: hex(parsed.gas ?? 0n),
    nonce: hex(parsed.nonce ?? (receipt?.depositNonce ? BigInt(receipt.depositNonce) : 0)),
  };
  if (parsed.type === 'deposit') {
    object.gasPrice = '0x0';
    object.sourceHash = parsed.sourceHash;
    if (parsed.mint !== undefined && parsed.mint !== 0n) object.mint = hex(parsed.mint);
    if (parsed.isSystemTx === true) object.isSystemTx = true;
    if (receipt?.depositReceiptVersion) object.depositReceiptVersion = quantityOf(receipt.depositReceiptVersion);
    object.v = '0x0';
    object.r = '0x0';
    object.s = '0x0';
    return object;
  }
  // viem's parse leaves out fields whose RLP is empty (a zero fee, an empty list); the answer has them all.
  const typed = parsed.type !== 'legacy';
  if (parsed.chainId !== undefined || typed) object.chainId = hex(parsed.chainId ?? 0);
  if (parsed.type === 'eip1559' || parsed.type === 'eip4844' || parsed.type === 'eip7702') {
    const maxFee = parsed.maxFeePerGas ?? 0n;
    const tip = parsed.maxPriorityFeePerGas ?? 0n;
    object.maxFeePerGas = hex(maxFee);
    object.maxPriorityFeePerGas = hex(tip);
    object.gasPrice = hex(place.baseFeePerGas + tip < maxFee ? place.baseFeePerGas + tip : maxFee);
  } else {
    object.gasPrice = hex(parsed.gasPrice ?? 0n);
  }
  if (typed) object.accessList = parsed.accessList ?? [];
  if (parsed.type === 'eip4844') {
    object.maxFeePerBlobGas = hex(parsed.maxFeePerBlobGas ?? 0n);
    object.blobVersionedHashes = parsed.blobVersionedHashes ?? [];
  }
  if (parsed.type === 'eip7702') {
    object.authorizationList = (parsed.authorizationList ?? []).map((auth) => ({
      chainId: hex(auth.chainId),
      address: auth.address,
      nonce: hex(auth.nonce),
      yParity: hex(auth.yParity ?? 0),
      r: quantityOf(auth.r),
      s: quantityOf(auth.s),
    }));
  }
  if (parsed.type === 'legacy') {
    // v as signed; a legacy transaction without a signature (pre-Bedrock relays) has none.
    object.v = hex(parsed.v ?? 0n);
  } else {
    object.yParity = hex(parsed.yParity ?? 0);
    object.v = object.yParity;
  }
  object.r = quantityOf(parsed.r ?? '0x0');
  object.s = quantityOf(parsed.s ?? '0x0');
  return object;
}

/** The real hash and millisecond time of a block from the blocks source (absent on flashblocks blocks). */
function denimFields(block: PendingBlock): { hash?: string; timestampMs?: string } {
  return block.header as { hash?: string; timestampMs?: string };
}

/**
 * The pending block as eth_getBlockByNumber("pending") answers it, header from the record:
 * - blocks source (200 ms blocks): the node's block, its real hash and header fields
 *   (`transactionsRoot`, `size`, `requestsHash`, `excessBlobGas`...) and `timestampMs`;
 * - flashblocks source: hash 0x00..00 as on Base before Denim (the final hash is not known before
 *   sealing), the fields the feed does not send rebuilt by `rebuildHeaderFields`. A subblocks feed
 *   gives no state root or withdrawals root (zero: not given); they are answered zero, as op-reth's
 *   flashblocks RPC answers a pending block whose state root it did not compute
 *   (ethereum-optimism/optimism `rust/op-reth/crates/flashblocks/src/worker.rs` @017b9d3f finishes
 *   such a build with a `NoopProvider`, whose state and storage roots are `B256::default()`;
 *   `src/cache.rs` @0e7bbb88 computes the real one only near the last index). op-reth's `hash` is
 *   its own provisional header's; flashlog keeps 0x00..00, which no client takes for the sealed
 *   hash. Once the block is sealed the gateway answers the node's block, real roots and hash.
 * Transactions as hashes or full objects. No `totalDifficulty`: op-geth (as go-ethereum since the
 * merge) gives none.
 */
export async function formatPendingBlock(block: PendingBlock, full: boolean, formatter: TransactionFormatter): Promise<RpcObject> {
  const header = block.header;
  const served = servedTransactions(block);
  const transactions = full
    ? await Promise.all(served.map((_, position) => formatter.transaction(block, position)))
    : served.map((tx) => tx.hash);
  const denim = denimFields(block);
  const fromNode = header.transactionsRoot !== undefined && header.size !== undefined;
  const rebuilt = fromNode ? undefined : await formatter.headerFields(block);
  const requestsHash = header.requestsHash ?? rebuilt?.requestsHash;
  return {
    number: header.number,
    hash: denim.hash ?? ZERO_HASH,
    ...(denim.timestampMs ? { timestampMs: denim.timestampMs } : {}),
    parentHash: header.parentHash,
    nonce: '0x0000000000000000',
    sha3Uncles: emptyUnclesHash,
    logsBloom: header.logsBloom,
    transactionsRoot: header.transactionsRoot ?? rebuilt!.transactionsRoot,
    stateRoot: header.stateRoot,
    receiptsRoot: header.receiptsRoot,
    miner: header.miner,
    difficulty: '0x0',
    extraData: header.extraData,
    size: header.size ?? rebuilt!.size,
    gasLimit: header.gasLimit,
    gasUsed: header.gasUsed,
    timestamp: header.timestamp,
    mixHash: header.prevRandao,
    baseFeePerGas: header.baseFeePerGas,
    withdrawalsRoot: header.withdrawalsRoot,
    withdrawals: header.withdrawals,
    blobGasUsed: header.blobGasUsed ?? '0x0',
    excessBlobGas: header.excessBlobGas ?? '0x0',
    parentBeaconBlockRoot: header.parentBeaconBlockRoot,
    ...(requestsHash !== undefined ? { requestsHash } : {}),
    uncles: [],
    transactions,
  };
}

/** Where a transaction of an unknown type sits, and what the source gave beside its bytes. */
export interface UnknownTransactionPlace {
  readonly blockHash: string | null;
  readonly blockTimestamp: string;
  readonly blockNumber: bigint;
  readonly position: number;
  readonly receipt?: RpcReceipt | undefined;
  /** A blocks source: the node's own JSON of the transaction, kept in the log beside its bytes. */
  readonly nodeJson?: RpcObject | undefined;
}

/**
 * A transaction of a type flashlog does not know, never dropped and never a crash:
 * - on a blocks source, the node's own JSON as the log kept it, its place as the block gives it;
 * - on a flashblocks source, every field that can be read without knowing the type: `type` (the
 *   EIP-2718 type byte), `hash` (keccak of the bytes), the block fields, `from` and `to` when the
 *   executor's receipt names them, and `raw`, the EIP-2718 bytes as eth_getRawTransactionByHash
 *   gives them. Nothing is guessed from the payload.
 *
 * @example formatUnknownTransaction({ hash, raw: '0x79…' }, 0x79, place) // { type: '0x79', hash, …, raw: '0x79…' }
 */
export function formatUnknownTransaction(
  tx: { readonly hash: string; readonly raw: string },
  type: number,
  place: UnknownTransactionPlace,
): RpcObject {
  const where = {
    blockHash: place.blockHash,
    blockNumber: numberToHex(place.blockNumber),
    transactionIndex: numberToHex(place.position),
  };
  if (place.nodeJson) return { ...place.nodeJson, ...where };
  return {
    type: numberToHex(type),
    hash: tx.hash,
    ...where,
    ...(place.blockHash !== null ? { blockTimestamp: quantityOf(place.blockTimestamp) } : {}),
    ...(place.receipt ? { from: place.receipt.from, to: place.receipt.to } : {}),
    raw: tx.raw,
  };
}
