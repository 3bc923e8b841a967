import { numberToHex, recoverTransactionAddress, type TransactionSerialized } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { maxPendingBlocks, type PendingBlock } from '../view/state.ts';
import { ZERO_HASH } from '../schemas/hex.ts';

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

const hex = (value: bigint | number | undefined): `0x${string}` | undefined => (value === undefined ? undefined : numberToHex(value));

/** Keccak of the empty uncle list: pending blocks have no uncles. */
const emptyUnclesHash = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';

export interface TransactionFormatter {
  /** A pending transaction object: `blockHash: null`, `blockNumber` and `transactionIndex` set. */
  transaction(block: PendingBlock, position: number): Promise<RpcObject>;
}

/**
 * Keeps the transactions it formatted (signature recovery is the expensive part) for the last
 * `keptBlocks` block numbers it was asked about, at most `maxPerBlock` a block: the view holds
 * `maxPendingBlocks` blocks, so older ones are never asked for again (a cache of 20,000
 * transactions of any block grew the heap by ~1.8 MB/min at 30 tx/s before it was cleared, issue 19).
 * The receipt's `from` is used when the executor produced one.
 */
export function createTransactionFormatter(keptBlocks = maxPendingBlocks + 1, maxPerBlock = 20_000): TransactionFormatter {
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
  return {
    async transaction(block, position) {
      const tx = block.transactions[position];
      if (!tx) throw new Error(`no transaction at position ${position} of pending block ${block.number}`);
      const formatted = cacheOf(block.number);
      const key = `${tx.hash}/${position}`;
      const cached = formatted.get(key);
      if (cached) return cached;
      const parsed = parseTransaction(tx.raw as TransactionSerialized) as Record<string, unknown> & { type: string };
      const receipt = block.receipts[position];
      let from = (parsed.from as string | undefined) ?? receipt?.from;
      if (!from) from = (await recoverTransactionAddress({ serializedTransaction: tx.raw as never })).toLowerCase();
      const object: RpcObject = {
        type: typeCodes[parsed.type] ?? '0x0',
        hash: tx.hash,
        // A 200 ms block (blocks source) is complete and has its hash; a flashblocks block has none yet.
        blockHash: denimFields(block).hash ?? null,
        ...(denimFields(block).timestampMs ? { blockTimestampMs: denimFields(block).timestampMs } : {}),
        blockNumber: numberToHex(block.number),
        transactionIndex: numberToHex(position),
        from,
        to: (parsed.to as string | undefined) ?? null,
        value: hex((parsed.value as bigint | undefined) ?? 0n),
        input: (parsed.data as string | undefined) ?? '0x',
        gas: hex(parsed.gas as bigint | undefined),
        nonce: hex((parsed.nonce as number | undefined) ?? (receipt?.depositNonce ? Number(BigInt(receipt.depositNonce)) : 0)),
      };
      if (parsed.chainId !== undefined) object.chainId = hex(parsed.chainId as number);
      if (parsed.type === 'deposit') {
        object.sourceHash = parsed.sourceHash;
        object.mint = hex((parsed.mint as bigint | undefined) ?? 0n);
        object.isSystemTx = parsed.isSystemTx ?? false;
        object.gasPrice = '0x0';
        object.v = '0x0';
        object.r = '0x0';
        object.s = '0x0';
        if (receipt?.depositReceiptVersion) object.depositReceiptVersion = receipt.depositReceiptVersion;
      } else {
        const baseFee = BigInt(block.header.baseFeePerGas);
        if (parsed.maxFeePerGas !== undefined) {
          const maxFee = parsed.maxFeePerGas as bigint;
          const tip = (parsed.maxPriorityFeePerGas as bigint | undefined) ?? 0n;
          object.maxFeePerGas = hex(maxFee);
          object.maxPriorityFeePerGas = hex(tip);
          object.gasPrice = hex(baseFee + tip < maxFee ? baseFee + tip : maxFee);
        } else {
          object.gasPrice = hex((parsed.gasPrice as bigint | undefined) ?? 0n);
        }
        if (parsed.accessList !== undefined) object.accessList = parsed.accessList;
        if (parsed.maxFeePerBlobGas !== undefined) object.maxFeePerBlobGas = hex(parsed.maxFeePerBlobGas as bigint);
        if (parsed.blobVersionedHashes !== undefined) object.blobVersionedHashes = parsed.blobVersionedHashes;
        if (parsed.authorizationList !== undefined) {
          object.authorizationList = (parsed.authorizationList as Record<string, unknown>[]).map((auth) => ({
            chainId: hex(auth.chainId as number),
            address: auth.address,
            nonce: hex(auth.nonce as number),
            yParity: hex(auth.yParity as number),
            r: auth.r,
            s: auth.s,
          }));
        }
        object.r = parsed.r;
        object.s = parsed.s;
        if (parsed.yParity !== undefined) object.yParity = hex(parsed.yParity as number);
        object.v = hex((parsed.v as bigint | undefined) ?? BigInt((parsed.yParity as number | undefined) ?? 0));
      }
      if (formatted.size >= maxPerBlock) formatted.clear();
      formatted.set(key, object);
      return object;
    },
  };
}

/** The real hash and millisecond time of a block from the blocks source (absent on flashblocks blocks). */
function denimFields(block: PendingBlock): { hash?: string; timestampMs?: string } {
  return block.header as { hash?: string; timestampMs?: string };
}

/**
 * The pending block as eth_getBlockByNumber("pending") answers it: hash 0x00..00 as on Base before
 * Denim (the final hash is not known before sealing), the real hash and `timestampMs` for a 200 ms
 * block from the blocks source; header from the assembled block, transactions as hashes
 * or full objects. transactionsRoot is not computed by the assembler and is returned as zero.
 */
export async function formatPendingBlock(block: PendingBlock, full: boolean, formatter: TransactionFormatter): Promise<RpcObject> {
  const header = block.header;
  const transactions = full
    ? await Promise.all(block.transactions.map((_, position) => formatter.transaction(block, position)))
    : block.transactions.map((tx) => tx.hash);
  const denim = denimFields(block);
  return {
    number: header.number,
    hash: denim.hash ?? ZERO_HASH,
    ...(denim.timestampMs ? { timestampMs: denim.timestampMs } : {}),
    parentHash: header.parentHash,
    nonce: '0x0000000000000000',
    sha3Uncles: emptyUnclesHash,
    logsBloom: header.logsBloom,
    transactionsRoot: ZERO_HASH,
    stateRoot: header.stateRoot,
    receiptsRoot: header.receiptsRoot,
    miner: header.miner,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: header.extraData,
    size: '0x0',
    gasLimit: header.gasLimit,
    gasUsed: header.gasUsed,
    timestamp: header.timestamp,
    mixHash: header.prevRandao,
    baseFeePerGas: header.baseFeePerGas,
    withdrawalsRoot: header.withdrawalsRoot,
    withdrawals: header.withdrawals,
    blobGasUsed: header.blobGasUsed ?? '0x0',
    excessBlobGas: '0x0',
    parentBeaconBlockRoot: header.parentBeaconBlockRoot,
    uncles: [],
    transactions,
  };
}
