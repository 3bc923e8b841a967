import { formatTransaction, hexToBytes, keccak256, serializeTransaction, size, type Hex, type RpcTransaction } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../../errors.ts';
import type { CallRpc } from '../../jsonrpc/protocol.ts';
import { encodeReceipt, fromRpcReceipt, orderedTrieNodes, orderedTrieRoot, type RpcConsensusReceipt } from '../../evm/receipts.ts';
import { parseL1Info } from '../../op/l1-info.ts';
import { headerRlpFromRpc } from '../header-preimage.ts';
import { blobKey, digestKey, type Preimage } from '../enclave-protocol.ts';
import { beaconBlobReader } from './beacon-client.ts';

/**
 * The L1 preimages derivation reads in the enclave (src/prover/enclave/l1-preimages.ts has the
 * scheme): every L1 header from `l1Head` back by parentHash to block `fromNumber`, each block's
 * transactions and receipts trie nodes, and the blobs of the type-3 transactions sent to the
 * batch inbox, from the beacon API (beacon-client.ts: blob sidecars, or Fusaka's getBlobs with
 * the commitments and proofs computed here). Nothing here is trusted by the enclave (it checks
 * every preimage), but the host checks what it can so a bad node fails here, named: each header
 * hashes to its block hash, each rebuilt transaction to its hash, each trie to its header's root.
 */
export interface L1WitnessParameters {
  readonly l1: CallRpc;
  /** The L1 beacon API; needed only if a block holds a blob transaction to the inbox. */
  readonly beaconUrl?: string | undefined;
  readonly l1Head: Hex;
  /** The oldest L1 block collected (inclusive). */
  readonly fromNumber: bigint;
  readonly batchInbox: Hex;
  /** Blocks processed at once (receipts, tries, blobs); default 4. */
  readonly concurrency?: number;
  readonly signal?: AbortSignal | undefined;
}

/** The preimages and the set's size, for the host's report. */
export interface L1Witness {
  readonly preimages: Preimage[];
  readonly blocks: number;
  readonly transactions: number;
  readonly receipts: number;
  readonly blobs: number;
  /** Sum of the preimage values' lengths. */
  readonly bytes: number;
}

const hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const hexString = z.string().regex(/^0x[0-9a-fA-F]*$/);
const rpcBlockSchema = z.looseObject({
  hash: hash32,
  stateRoot: hash32,
  parentHash: hash32,
  number: hexString,
  timestamp: hexString,
  transactionsRoot: hash32,
  receiptsRoot: hash32,
  transactions: z.array(z.looseObject({ hash: hash32, type: hexString, to: z.string().nullish() })),
});
type RpcBlock = z.infer<typeof rpcBlockSchema>;
const rpcReceiptSchema = z.looseObject({
  transactionHash: hash32,
  type: hexString,
  status: hexString,
  cumulativeGasUsed: hexString,
  logsBloom: hexString,
  logs: z.array(z.looseObject({ address: z.string(), topics: z.array(z.string()), data: z.string() })),
});

/**
 * Collects the L1 preimages for derivation, walking the L1 RPC by parentHash from `l1Head`.
 *
 * @example const { preimages, bytes } = await collectL1Witness({ l1, beaconUrl, l1Head, fromNumber: origin - 50n, batchInbox })
 */
export async function collectL1Witness(parameters: L1WitnessParameters): Promise<L1Witness> {
  const { l1, l1Head, fromNumber, signal } = parameters;
  const inbox = parameters.batchInbox.toLowerCase();
  const preimages = new Map<string, Preimage>();
  const add = (key: Preimage['key'], value: Uint8Array) => preimages.set(`${key.type}:${key.data.join(',')}`, { key, value });
  const addKeccak = (value: Hex) => add(digestKey('keccak256', keccak256(value)), hexToBytes(value));
  const aborted = () => {
    if (signal?.aborted) throw new FlashlogError('WITNESS_ABORTED', 'L1 witness collection aborted');
  };

  // The walk by parentHash: each block with its full transactions.
  const blocks: RpcBlock[] = [];
  for (let hash = l1Head.toLowerCase() as Hex; ;) {
    aborted();
    const block = await l1Block(l1, hash);
    if (blocks.length === 0 && BigInt(block.number) < fromNumber)
      throw new FlashlogError('WITNESS_RANGE', `L1 head ${l1Head} is block ${BigInt(block.number)}, before the first wanted ${fromNumber}`);
    addKeccak(headerRlpFromRpc(block, `L1 block ${BigInt(block.number)} (${block.hash})`));
    blocks.push(block);
    if (BigInt(block.number) <= fromNumber) break;
    hash = block.parentHash.toLowerCase() as Hex;
  }

  const beacon = parameters.beaconUrl === undefined ? undefined : beaconBlobReader(parameters.beaconUrl, signal);
  let transactions = 0;
  let receipts = 0;
  let blobs = 0;
  let next = 0;
  const processBlock = async (block: RpcBlock) => {
    const where = `L1 block ${BigInt(block.number)} (${block.hash})`;
    const raws = block.transactions.map((tx, index) => rawTransaction(tx, `${where} transaction ${index}`));
    const txRoot = await orderedTrieRoot(raws);
    if (txRoot !== block.transactionsRoot.toLowerCase())
      throw new FlashlogError(
        'WITNESS_INVALID',
        `${where}: its transactions make root ${txRoot}, the header says ${block.transactionsRoot}`,
      );
    for (const node of await orderedTrieNodes(raws)) addKeccak(node);
    const encoded = (await blockReceipts(l1, block, where)).map(encodeReceipt);
    const receiptRoot = await orderedTrieRoot(encoded);
    if (receiptRoot !== block.receiptsRoot.toLowerCase())
      throw new FlashlogError('WITNESS_INVALID', `${where}: its receipts make root ${receiptRoot}, the header says ${block.receiptsRoot}`);
    for (const node of await orderedTrieNodes(encoded)) addKeccak(node);
    transactions += raws.length;
    receipts += encoded.length;
    const wanted = block.transactions.flatMap((tx) =>
      BigInt(tx.type) === 3n && tx.to?.toLowerCase() === inbox ? ((tx as { blobVersionedHashes?: Hex[] }).blobVersionedHashes ?? []) : [],
    );
    if (wanted.length === 0) return;
    if (!beacon)
      throw new FlashlogError('WITNESS_MISSING', `${where}: a blob transaction to the batch inbox, and no beacon URL to read its blobs`);
    const sidecars = await beacon.blobs(BigInt(block.timestamp), wanted, where);
    for (const versionedHash of wanted) {
      const sidecar = sidecars.find((entry) => entry.versionedHash === versionedHash.toLowerCase());
      if (!sidecar) throw new FlashlogError('WITNESS_MISSING', `${where}: the beacon API has no blob sidecar for ${versionedHash}`);
      add(digestKey('sha256', versionedHash), hexToBytes(sidecar.commitment));
      add(blobKey(sidecar.commitment), hexToBytes(`0x${sidecar.blob.slice(2)}${sidecar.proof.slice(2)}`));
      blobs++;
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(parameters.concurrency ?? 4, blocks.length) }, async () => {
      while (next < blocks.length) {
        aborted();
        await processBlock(blocks[next++]!);
      }
    }),
  );
  const values = [...preimages.values()];
  return {
    preimages: values,
    blocks: blocks.length,
    transactions,
    receipts,
    blobs,
    bytes: values.reduce((sum, { value }) => sum + value.length, 0),
  };
}

async function l1Block(l1: CallRpc, hash: Hex): Promise<RpcBlock> {
  const raw = await l1('eth_getBlockByHash', [hash, true]);
  if (raw === null || raw === undefined) throw new FlashlogError('WITNESS_MISSING', `L1 block ${hash} not found on the L1 RPC`);
  const parsed = rpcBlockSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FlashlogError('WITNESS_RPC', `L1 eth_getBlockByHash(${hash}).${issue.path.join('.')}: ${issue.message}`);
  }
  if (parsed.data.hash.toLowerCase() !== hash)
    throw new FlashlogError('WITNESS_RPC', `L1 eth_getBlockByHash(${hash}) answered block ${parsed.data.hash}`);
  return parsed.data;
}

/** The EIP-2718 bytes of an RPC transaction (viem's serializer, signature included), checked against its hash. */
function rawTransaction(tx: RpcBlock['transactions'][number], where: string): Hex {
  let raw: Hex;
  try {
    const formatted = formatTransaction(tx as unknown as RpcTransaction);
    const signature = { r: formatted.r, s: formatted.s, v: formatted.v, yParity: formatted.yParity };
    // viem's Transaction names the calldata `input`, its serializer `data`.
    raw = serializeTransaction({ ...formatted, data: formatted.input } as never, signature as never);
  } catch (error) {
    throw new FlashlogError('WITNESS_RPC', `${where} (${tx.hash}): cannot serialise it (${(error as Error).message})`);
  }
  if (keccak256(raw) !== tx.hash.toLowerCase())
    throw new FlashlogError(
      'WITNESS_INVALID',
      `${where}: its fields serialise to a transaction with hash ${keccak256(raw)}, the RPC says ${tx.hash}`,
    );
  return raw;
}

/** The block's receipts: eth_getBlockReceipts, or one eth_getTransactionReceipt a transaction where that is not served. */
async function blockReceipts(l1: CallRpc, block: RpcBlock, where: string) {
  let raw: unknown;
  try {
    raw = await l1('eth_getBlockReceipts', [block.hash]);
  } catch {
    raw = await Promise.all(block.transactions.map((tx) => l1('eth_getTransactionReceipt', [tx.hash])));
  }
  const parsed = z.array(rpcReceiptSchema).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FlashlogError('WITNESS_RPC', `${where} receipts[${issue.path.join('.')}]: ${issue.message}`);
  }
  if (parsed.data.length !== block.transactions.length)
    throw new FlashlogError('WITNESS_RPC', `${where}: ${parsed.data.length} receipts for ${block.transactions.length} transactions`);
  return parsed.data.map((receipt, index) => {
    if (receipt.transactionHash.toLowerCase() !== block.transactions[index]!.hash.toLowerCase())
      throw new FlashlogError(
        'WITNESS_RPC',
        `${where} receipt ${index} is for ${receipt.transactionHash}, not ${block.transactions[index]!.hash}`,
      );
    return fromRpcReceipt(receipt as RpcConsensusReceipt);
  });
}

/** What the host needs to collect derivation's L1 (the rollup config's derivation fields). */
export interface DerivationSources {
  readonly beaconUrl?: string | undefined;
  readonly batchInbox: Hex;
  /** L1 blocks a channel may stay open (the rollup config's channel_timeout). */
  readonly channelTimeout: number;
  /** The rollup's genesis L1 block number: nothing before it is read. */
  readonly genesisL1Number: bigint;
  /**
   * How many L2 blocks before the agreed one (`agreedNumber`) derivation can need, when fewer than
   * every block since the first L1 block it reads: on Base's Denim only the blocks of one second (a
   * stale same-second batch is told by them), as no span batch derives.
   */
  readonly priorBlocksLimit?: (agreedNumber: bigint) => number | undefined;
}

const l2BlockSchema = z.looseObject({
  transactions: z.array(z.looseObject({ type: hexString, input: hexString })).min(1, 'the block has no transactions'),
});

/**
 * The L1 origin of an L2 block: the L1 block number its L1-info deposit (its first transaction)
 * carries, Ecotone form or later.
 *
 * @example await l1OriginOf(l2, request.agreedL2HeadHash) // 21_000_123n
 */
export async function l1OriginOf(l2: CallRpc, l2BlockHash: Hex): Promise<bigint> {
  const where = `L2 block ${l2BlockHash}`;
  const raw = await l2('eth_getBlockByHash', [l2BlockHash, true]);
  if (raw === null || raw === undefined) throw new FlashlogError('WITNESS_MISSING', `${where} not found on the L2 RPC`);
  const parsed = l2BlockSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FlashlogError('WITNESS_RPC', `${where}.${issue.path.join('.')}: ${issue.message}`);
  }
  const first = parsed.data.transactions[0]!;
  if (BigInt(first.type) !== 0x7en)
    throw new FlashlogError('WITNESS_RPC', `${where}: its first transaction (type ${first.type}) is not the L1-info deposit`);
  const info = parseL1Info(first.input as Hex, `${where} L1-info deposit`);
  // The Bedrock form is parsed (receipts' fee fields need it) but derivation starts at Ecotone.
  if (info.form === 'bedrock' || info.l1BlockNumber === undefined)
    throw new FlashlogError(
      'FORK_UNSUPPORTED',
      `${where}: the L1-info deposit is of the ${info.form} form, derivation needs Ecotone or later`,
    );
  return info.l1BlockNumber;
}

/**
 * The L1 preimages derivation needs for a request: from `l1Head` back to the agreed L2 block's L1
 * origin less the channel timeout (a channel that ends in the range may have opened that early),
 * not before the rollup's genesis L1 block.
 *
 * @example await derivationL1Witness({ l1, l2, l1Head: request.l1Head, agreedL2HeadHash: request.agreedL2HeadHash, derivation })
 */
export async function derivationL1Witness(parameters: {
  readonly l1: CallRpc;
  readonly l2: CallRpc;
  readonly l1Head: Hex;
  readonly agreedL2HeadHash: Hex;
  readonly derivation: DerivationSources;
  /** The first L1 block, when the caller has it (`derivationL1From`). */
  readonly fromNumber?: bigint | undefined;
  readonly signal?: AbortSignal | undefined;
}): Promise<L1Witness> {
  const { derivation } = parameters;
  return collectL1Witness({
    l1: parameters.l1,
    beaconUrl: derivation.beaconUrl,
    l1Head: parameters.l1Head,
    fromNumber: parameters.fromNumber ?? (await derivationL1From(parameters.l2, parameters.agreedL2HeadHash, derivation)),
    batchInbox: derivation.batchInbox,
    signal: parameters.signal,
  });
}

/**
 * The first L1 block derivation can read for a range after `agreedL2HeadHash`: its L1 origin less
 * the channel timeout, never before the rollup's genesis L1 block.
 */
export async function derivationL1From(l2: CallRpc, agreedL2HeadHash: Hex, derivation: DerivationSources): Promise<bigint> {
  const back = (await l1OriginOf(l2, agreedL2HeadHash)) - BigInt(derivation.channelTimeout);
  return back > derivation.genesisL1Number ? back : derivation.genesisL1Number;
}
