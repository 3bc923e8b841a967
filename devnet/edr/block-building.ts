import type { Logger } from 'pino';
import { keccak256, numberToHex, toHex, type Hex } from 'viem';
import { FlashlogError } from '../../src/errors.ts';
import { fromRpcReceipt, logsBloom, orderedTrieRoot, receiptsRoot } from '../../src/evm/receipts.ts';
import { transactionHash } from '../../src/wire/tx-hash.ts';
import { l1AttributesDeposit, type L1Attributes } from '../deposit.ts';
import {
  metadataReceipt,
  toFlashblock,
  ZERO32,
  type SentFlashblock,
  type SentMetadataReceipt,
  type MinedBlock,
  type MinedReceipt,
} from './sent-flashblock.ts';
import { headerFromRpc, headerHash, type HeaderField } from '../../src/op/header.ts';

/** The header fields of an Isthmus (Prague) block, as EDR answers eth_getBlockByNumber (hex strings). */
export type HeaderFields = Readonly<Record<HeaderField, Hex>>;

/**
 * The hash of a flashblock's header between the first and the last of a block: that block so far
 * is never mined as such, so no engine gives its hash. The header codec is the stateless
 * executor's (src/op/header.ts); devnet.test.ts checks it against EDR's hashes.
 */
export const rpcHeaderHash = (header: HeaderFields): Hex => headerHash(headerFromRpc(header, 'devnet header'));

/**
 * How the devnet builds one block, flashblock by flashblock, executing each transaction once
 * before the seal (and once in it), not once per flashblock:
 *
 *   open (index 0)   deposits into the mempool, snapshot at the parent, mine block N: a real block
 *                    so far, so flashblock 0 carries its real state root and hash
 *   trial (1..n-1)   mine the transactions that arrived since as one more trial block on top
 *                    (same timestamp, prevRandao and base fee), read their receipts, and add them
 *                    to the block so far: receipts_root, logs_bloom and gas_used are computed from
 *                    every receipt of the block so far (they match the sealed block's, and a
 *                    consumer checks them); state_root is zero, as Base's builder sends it between
 *                    the first and the last flashblock, and block_hash the hash of that header
 *   seal (index n)   revert to the parent, send every transaction again in its order, mine
 *                    block N for good: the last flashblock carries its real state root and hash
 *
 * Trial blocks stay in the EVM between flashblocks; the devnet's JSON-RPC answers as of the sealed
 * head (sealed-view.ts). When the new transactions might not fit in the room left in the block
 * (their gas limits add up to more), the block so far is mined again in full instead: a full
 * block is exactly what the seal will fill, and the next trials build on it.
 *
 * Why: every block EDR mines, a trial block too, costs a state in EDR's state cache (bounded by
 * the engine, edr-chain.ts) and CPU; mining the whole block so far at every flashblock executed a
 * transaction about 5.5 times before its seal. What EDR keeps for good is the sealed chain: its
 * blocks, receipts and state diffs (bench and soak figures in docs/memory.md).
 */
export type Call = <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>;

/** What the producer holds for every transaction not yet sealed. */
export interface TxBook {
  /** Raw bytes by hash (EDR gives hashes, the feed needs bytes). */
  readonly rawByHash: Map<Hex, Hex>;
  /** `sender:nonce` of every user transaction, by hash. */
  readonly keyByHash: Map<Hex, string>;
  /** Deposits for index 0 of the next block. */
  readonly queuedDeposits: Hex[];
}

export interface BuildOptions {
  readonly logger: Logger;
  readonly book: TxBook;
  readonly blockTimeSeconds: number;
  readonly blockGasLimit: bigint;
  readonly metadataReceipts: boolean;
  readonly takeDeposits?: (() => readonly Hex[]) | undefined;
  readonly l1AttributesFor: (l2Number: bigint, l2Timestamp: bigint) => L1Attributes;
  /** Called with each flashblock as it is built. */
  readonly emit: (flashblock: SentFlashblock) => void;
}

type Header = MinedBlock & HeaderFields;
type BlockReceipt = MinedReceipt & { logsBloom: Hex };

export interface OpenBlock {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly prevRandao: Hex;
  readonly payloadId: Hex;
  /** Hashes pre-confirmed so far, in order. */
  readonly announced: Hex[];
  /** `sender:nonce` -> hash of every pre-confirmed user transaction of the block. */
  readonly announcedKeys: Map<string, Hex>;
  index: number;
  /** Snapshot at the parent; the mempool then held `inSnapshot`. */
  parentSnapshot: Hex;
  inSnapshot: Set<Hex>;
  /** The block as last mined in full: its environment and the fields no trial changes. */
  header: Header;
  /** Receipts of the block so far, cumulative gas as in the block. */
  readonly receipts: BlockReceipt[];
  gasUsed: bigint;
  /** The last flashblock's diff (sent again, without transactions, when nothing new arrived). */
  last: SentFlashblock['diff'] | null;
  /** A transaction reached the mempool since the last trial. */
  changed: boolean;
}

export async function mineNext(call: Call, block: Pick<OpenBlock, 'timestamp' | 'prevRandao'>, baseFee?: Hex): Promise<Header> {
  await call('evm_setNextBlockTimestamp', [numberToHex(block.timestamp)]);
  await call('hardhat_setPrevRandao', [block.prevRandao]);
  if (baseFee) await call('hardhat_setNextBlockBaseFeePerGas', [baseFee]);
  await call('evm_mine');
  return call<Header>('eth_getBlockByNumber', ['latest', false]);
}

async function receiptsOf(call: Call, hashes: readonly Hex[], gasBefore: bigint): Promise<BlockReceipt[]> {
  const receipts: BlockReceipt[] = [];
  for (const hash of hashes) {
    const receipt = await call<BlockReceipt>('eth_getTransactionReceipt', [hash]);
    receipts.push({ ...receipt, cumulativeGasUsed: numberToHex(BigInt(receipt.cumulativeGasUsed) + gasBefore) });
  }
  return receipts;
}

export function createBlockBuilding(options: BuildOptions) {
  const { logger, book } = options;

  function rawOf(hash: Hex): Hex {
    const raw = book.rawByHash.get(hash);
    if (!raw) throw new FlashlogError('DEVNET_ENGINE_FAILED', `transaction ${hash} was mined but its raw bytes are unknown`);
    return raw;
  }

  /** Sends the flashblock of `block` at its index: `added` since the last one, the block so far in `diff`. */
  function send(block: OpenBlock, fields: MinedBlock, added: readonly Hex[], receipts: readonly BlockReceipt[]): void {
    const metadata: Record<Hex, SentMetadataReceipt> | undefined = options.metadataReceipts
      ? Object.fromEntries(added.map((hash, i) => [hash, metadataReceipt(receipts[i]!)]))
      : undefined;
    const flashblock = toFlashblock(block, fields, added.map(rawOf), metadata);
    block.announced.push(...added);
    for (const hash of added) {
      const key = book.keyByHash.get(hash);
      if (key) block.announcedKeys.set(key, hash);
    }
    block.last = flashblock.diff;
    block.index += 1;
    options.emit(flashblock);
  }

  function sendUnchanged(block: OpenBlock): void {
    const last = block.last!;
    const fields = { ...block.header, stateRoot: last.state_root, receiptsRoot: last.receipts_root, logsBloom: last.logs_bloom };
    send(block, { ...fields, gasUsed: last.gas_used, hash: last.block_hash }, [], []);
  }

  /**
   * Block N from the parent with every transaction held for it: reverts to the parent (dropping
   * the trial blocks), sends again what the snapshot's mempool lacked (pre-confirmed ones first, in
   * their order, then the rest), snapshots, mines. Returns the mined block and its receipts.
   */
  async function mineWhole(call: Call, block: OpenBlock): Promise<{ mined: Header; receipts: BlockReceipt[] }> {
    const waiting = (await call<{ hash: Hex }[]>('eth_pendingTransactions')).map((tx) => tx.hash);
    await call('evm_revert', [block.parentSnapshot]);
    const again = [...block.announced, ...waiting].filter((hash, i, all) => !block.inSnapshot.has(hash) && all.indexOf(hash) === i);
    for (const hash of again) await call('eth_sendRawTransaction', [rawOf(hash)]);
    block.inSnapshot = new Set([...block.inSnapshot, ...again]);
    block.parentSnapshot = await call<Hex>('evm_snapshot');
    const mined = await mineNext(call, block);
    const prefix = mined.transactions.slice(0, block.announced.length);
    if (prefix.some((hash, position) => hash !== block.announced[position])) {
      logger.error(
        { block: block.number, index: block.index },
        'devnet: the mempool reordered pre-confirmed transactions; the feed no longer matches the chain',
      );
    }
    return { mined, receipts: await receiptsOf(call, mined.transactions, 0n) };
  }

  /** The block so far, mined in full: its flashblock carries the real state root and hash. */
  async function sendWhole(call: Call, block: OpenBlock, mined: Header, receipts: BlockReceipt[]): Promise<void> {
    block.header = mined;
    block.receipts.splice(0, block.receipts.length, ...receipts);
    block.gasUsed = BigInt(mined.gasUsed);
    const added = mined.transactions.slice(block.announced.length);
    send(block, mined, added, receipts.slice(block.announced.length));
  }

  /** Opens block `number` on top of the sealed `parent`: deposits, then index 0. */
  async function open(call: Call, parent: MinedBlock): Promise<OpenBlock> {
    const number = BigInt(parent.number) + 1n;
    const timestamp = BigInt(parent.timestamp) + BigInt(options.blockTimeSeconds);
    const deposits = [
      l1AttributesDeposit(options.l1AttributesFor(number, timestamp), number),
      ...book.queuedDeposits.splice(0),
      ...(options.takeDeposits?.() ?? []),
    ];
    const inSnapshot = new Set<Hex>();
    for (const raw of deposits) {
      try {
        const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
        book.rawByHash.set(hash, raw);
        inSnapshot.add(hash);
      } catch (error) {
        logger.warn(
          { block: number, tx: transactionHash(raw), err: (error as Error).message },
          'devnet: a deposit was refused; it is left out',
        );
      }
    }
    const block: OpenBlock = {
      number,
      timestamp,
      prevRandao: keccak256(toHex(`devnet prevRandao ${number}`)),
      payloadId: keccak256(`0x${parent.hash.slice(2)}${numberToHex(timestamp, { size: 8 }).slice(2)}`).slice(0, 18) as Hex,
      announced: [],
      announcedKeys: new Map(),
      index: 0,
      parentSnapshot: await call<Hex>('evm_snapshot'),
      inSnapshot,
      header: parent as Header,
      receipts: [],
      gasUsed: 0n,
      last: null,
      changed: false,
    };
    const mined = await mineNext(call, block);
    await sendWhole(call, block, mined, await receiptsOf(call, mined.transactions, 0n));
    return block;
  }

  /** A flashblock between the first and the last: the new transactions, executed once. */
  async function trial(call: Call, block: OpenBlock): Promise<void> {
    if (!block.changed) return sendUnchanged(block);
    block.changed = false;
    const waiting = await call<{ hash: Hex; gas: Hex }[]>('eth_pendingTransactions');
    if (waiting.length === 0) return sendUnchanged(block);
    const room = options.blockGasLimit - block.gasUsed;
    // A full block (no room for even a transfer) takes nothing more: the rest waits for the next one.
    if (room < 21_000n) return sendUnchanged(block);
    const wanted = waiting.reduce((sum, tx) => sum + BigInt(tx.gas), 0n);
    if (wanted > room) {
      const { mined, receipts } = await mineWhole(call, block);
      return sendWhole(call, block, mined, receipts);
    }
    const mined = await mineNext(call, block, block.header.baseFeePerGas);
    if (mined.transactions.length === 0) return sendUnchanged(block);
    const fresh = await receiptsOf(call, mined.transactions, block.gasUsed);
    block.receipts.push(...fresh);
    block.gasUsed += BigInt(mined.gasUsed);
    const all = [...block.announced, ...mined.transactions];
    const fields = {
      ...block.header,
      stateRoot: ZERO32,
      transactionsRoot: await orderedTrieRoot(all.map(rawOf)),
      // EDR receipts carry every field the consensus encoding reads (status, cumulative gas, bloom, logs, deposit fields).
      receiptsRoot: await receiptsRoot(block.receipts.map(fromRpcReceipt)),
      logsBloom: logsBloom(block.receipts.flatMap((receipt) => receipt.logs)),
      gasUsed: numberToHex(block.gasUsed),
    };
    send(block, { ...fields, hash: rpcHeaderHash(fields), transactions: all }, mined.transactions, fresh);
  }

  return { open, trial, mineWhole, send, rawOf };
}

export type BlockBuilding = ReturnType<typeof createBlockBuilding>;
