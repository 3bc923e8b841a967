import { bytesToHex, getAddress, hexToBytes, keccak256, type Address, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { bincodeReader, bincodeWriter, type BincodeReader, type BincodeWriter } from '../wire/bincode.ts';

/**
 * The host <-> enclave protocol of Base's Nitro prover (u32 frame length, three request
 * variants). Payloads are bincode 2 standard (see ../wire/bincode.ts). Serde variant indices:
 *
 *   EnclaveRequest  = 0 Prove(Vec<(PreimageKey, Vec<u8>)>) | 1 SignerPublicKey
 *                   | 2 SignerAttestation { user_data: Option<Vec<u8>>, nonce: Option<Vec<u8>> }
 *   EnclaveResponse = 0 Prove(Box<ProofResult>) | 1 SignerPublicKey(Vec<u8>)
 *                   | 2 SignerAttestation(Vec<u8>) | 3 Error(String)
 *   ProofResult     = 0 Tee { aggregate_proposal: Proposal, proposals: Vec<Proposal>, tee_signer: Address }
 *                   | 1 Zk { proof_bytes: Vec<u8> }
 *   Proposal        = { output_root: B256, signature: Bytes, l1_origin_hash: B256, l1_origin_number: u64,
 *                       l2_block_number: u64, prev_output_root: B256, config_hash: B256, schedule_id: B256 }
 *
 * `tee_signer` (20 raw bytes, alloy's `Address` under bincode serde) and `schedule_id` are the
 * fields Base's enclave gained with the scheduleId journal (base/base
 * `crates/proof/primitives/src/proof.rs` `ProofResult::Tee { …, tee_signer }`; `schedule_id` last
 * in `Proposal` as `nitro-enclave/src/server.rs` builds it — the struct definition carrying it was
 * not among the stored copies, so its position is read from the constructor: UNCONFIRMED).
 *   PreimageKey     = { data: [u8; 31], key_type: PreimageKeyType }
 *   PreimageKeyType = 0 Local | 1 Keccak256 | 2 GlobalGeneric | 3 Sha256 | 4 Blob | 5 Precompile
 *
 * (The 32-byte on-the-wire form of a preimage key puts type 1..6 in its first byte; that form is
 * not used here: serde writes the variant index.)
 */
export const preimageKeyTypes = ['local', 'keccak256', 'globalGeneric', 'sha256', 'blob', 'precompile'] as const;
export type PreimageKeyType = (typeof preimageKeyTypes)[number];

export interface PreimageKey {
  readonly type: PreimageKeyType;
  /** 31 bytes: the low 31 bytes of the digest, or the local id as u64 BE in bytes 23..31. */
  readonly data: Uint8Array;
}
export interface Preimage {
  readonly key: PreimageKey;
  readonly value: Uint8Array;
}

export interface Proposal {
  readonly outputRoot: Hex;
  /** 65 bytes r‖s‖v, v in {0,1}. */
  readonly signature: Hex;
  readonly l1OriginHash: Hex;
  readonly l1OriginNumber: number;
  readonly l2BlockNumber: number;
  readonly prevOutputRoot: Hex;
  readonly configHash: Hex;
  /** The scheduleId the journal was signed with; absent in a result from before it (JSON only). */
  readonly scheduleId?: Hex | undefined;
}

export type ProofResult =
  | {
      readonly type: 'tee';
      readonly aggregateProposal: Proposal;
      readonly proposals: readonly Proposal[];
      /** The enclave's signer, stamped at signing time; absent in a result from before it (JSON only). */
      readonly teeSigner?: Address | undefined;
    }
  | { readonly type: 'zk'; readonly proofBytes: Uint8Array };

export type EnclaveRequest =
  | { readonly type: 'prove'; readonly preimages: readonly Preimage[] }
  | { readonly type: 'signerPublicKey' }
  | { readonly type: 'signerAttestation'; readonly userData?: Uint8Array | undefined; readonly nonce?: Uint8Array | undefined };

export type EnclaveResponse =
  | { readonly type: 'prove'; readonly result: ProofResult }
  | { readonly type: 'signerPublicKey'; readonly publicKey: Uint8Array }
  | { readonly type: 'signerAttestation'; readonly document: Uint8Array }
  | { readonly type: 'error'; readonly message: string };

/** PreimageKey::new_local(id): 31 bytes with the id as u64 BE in the last 8. */
export function localKey(id: number): PreimageKey {
  const data = new Uint8Array(31);
  new DataView(data.buffer).setBigUint64(23, BigInt(id), false);
  return { type: 'local', data };
}

/** A digest-keyed preimage key: the low 31 bytes of the 32-byte digest. */
export function digestKey(type: 'keccak256' | 'sha256', digest: Hex | Uint8Array): PreimageKey {
  const bytes = typeof digest === 'string' ? hexToBytes(digest) : digest;
  if (bytes.length !== 32) throw new FlashlogError('PREIMAGE_KEY', `${type} key: expected a 32-byte digest, got ${bytes.length} bytes`);
  return { type, data: bytes.slice(1) };
}

/**
 * flashlog's blob key (src/prover/enclave/l1-preimages.ts): the low 31 bytes of
 * keccak256(commitment) for a 48-byte KZG commitment; its value is blob ‖ KZG proof.
 */
export function blobKey(commitment: Hex | Uint8Array): PreimageKey {
  const bytes = typeof commitment === 'string' ? hexToBytes(commitment) : commitment;
  if (bytes.length !== 48)
    throw new FlashlogError('PREIMAGE_KEY', `blob key: expected a 48-byte KZG commitment, got ${bytes.length} bytes`);
  return { type: 'blob', data: hexToBytes(keccak256(bytes)).slice(1) };
}

const writeHash = (w: BincodeWriter, hex: Hex, what: string, length = 32) => {
  const bytes = hexToBytes(hex);
  if (bytes.length !== length) throw new FlashlogError('BINCODE_RANGE', `${what}: expected ${length} bytes, got ${bytes.length}`);
  w.bytes(bytes);
};
const readHash = (r: BincodeReader, what: string, length = 32): Hex => {
  const bytes = r.bytes(what, length);
  if (bytes.length !== length) throw new FlashlogError('BINCODE_INVALID', `${what}: expected ${length} bytes, got ${bytes.length}`);
  return bytesToHex(bytes);
};

function writeProposal(w: BincodeWriter, proposal: Proposal): void {
  writeHash(w, proposal.outputRoot, 'output_root');
  w.bytes(hexToBytes(proposal.signature));
  writeHash(w, proposal.l1OriginHash, 'l1_origin_hash');
  w.varint(proposal.l1OriginNumber);
  w.varint(proposal.l2BlockNumber);
  writeHash(w, proposal.prevOutputRoot, 'prev_output_root');
  writeHash(w, proposal.configHash, 'config_hash');
  if (proposal.scheduleId === undefined)
    throw new FlashlogError('BINCODE_RANGE', `schedule_id: the proposal for L2 block ${proposal.l2BlockNumber} has none`);
  writeHash(w, proposal.scheduleId, 'schedule_id');
}

function readProposal(r: BincodeReader): Proposal {
  return {
    outputRoot: readHash(r, 'output_root'),
    signature: bytesToHex(r.bytes('signature', 1024)),
    l1OriginHash: readHash(r, 'l1_origin_hash'),
    l1OriginNumber: r.varintNumber('l1_origin_number'),
    l2BlockNumber: r.varintNumber('l2_block_number'),
    prevOutputRoot: readHash(r, 'prev_output_root'),
    configHash: readHash(r, 'config_hash'),
    scheduleId: readHash(r, 'schedule_id'),
  };
}

/** The serde variant indices (the position in each list), one table for encoder and decoder. */
const requestVariants = ['prove', 'signerPublicKey', 'signerAttestation'] as const satisfies readonly EnclaveRequest['type'][];
const responseVariants = ['prove', 'signerPublicKey', 'signerAttestation', 'error'] as const satisfies readonly EnclaveResponse['type'][];

export function encodeEnclaveRequest(request: EnclaveRequest): Uint8Array {
  const w = bincodeWriter().varint(requestVariants.indexOf(request.type));
  if (request.type === 'prove') {
    w.varint(request.preimages.length);
    for (const { key, value } of request.preimages) {
      if (key.data.length !== 31) throw new FlashlogError('PREIMAGE_KEY', `preimage key data: expected 31 bytes, got ${key.data.length}`);
      w.raw(key.data).varint(preimageKeyTypes.indexOf(key.type)).bytes(value);
    }
  } else if (request.type === 'signerAttestation') {
    w.option(request.userData, (v) => w.bytes(v)).option(request.nonce, (v) => w.bytes(v));
  }
  return w.finish();
}

/** Reads a serde variant index and names it from `variants` (an index past the list is BINCODE_INVALID). */
function readVariant<T extends string>(r: BincodeReader, variants: readonly T[], what: string): T {
  const variant = r.varintNumber(`${what} variant`);
  const type = variants[variant];
  if (type === undefined) throw new FlashlogError('BINCODE_INVALID', `${what}: unknown variant ${variant}`);
  return type;
}

function readPreimages(r: BincodeReader): Preimage[] {
  const count = r.varintNumber('Prove preimage count');
  // Each preimage takes at least 33 bytes: a cheap bound before allocating.
  if (count * 33 > r.remaining())
    throw new FlashlogError('BINCODE_INVALID', `Prove: ${count} preimages cannot fit in ${r.remaining()} bytes`);
  const preimages: Preimage[] = [];
  for (let i = 0; i < count; i++) {
    const data = r.raw(31);
    const typeIndex = r.varintNumber(`preimage[${i}].key_type`);
    const type = preimageKeyTypes[typeIndex];
    if (type === undefined) throw new FlashlogError('BINCODE_INVALID', `preimage[${i}].key_type: unknown variant ${typeIndex}`);
    preimages.push({ key: { type, data }, value: r.bytes(`preimage[${i}].value`) });
  }
  return preimages;
}

/** A whole payload: its variant, what `read` makes of it, and nothing left over. */
function decodePayload<T extends string, V>(
  payload: Uint8Array,
  variants: readonly T[],
  what: string,
  read: (type: T, r: BincodeReader) => V,
): V {
  const r = bincodeReader(payload);
  const value = read(readVariant(r, variants, what), r);
  r.end(what);
  return value;
}

export function decodeEnclaveRequest(payload: Uint8Array): EnclaveRequest {
  return decodePayload(payload, requestVariants, 'EnclaveRequest', (type, r): EnclaveRequest => {
    if (type === 'prove') return { type, preimages: readPreimages(r) };
    if (type === 'signerPublicKey') return { type };
    return { type, userData: r.option(() => r.bytes('user_data')), nonce: r.option(() => r.bytes('nonce')) };
  });
}

export function encodeProofResult(w: BincodeWriter, result: ProofResult): void {
  if (result.type === 'tee') {
    w.varint(0);
    writeProposal(w, result.aggregateProposal);
    w.varint(result.proposals.length);
    for (const proposal of result.proposals) writeProposal(w, proposal);
    if (result.teeSigner === undefined) throw new FlashlogError('BINCODE_RANGE', 'tee_signer: the Tee result has none');
    writeHash(w, result.teeSigner, 'tee_signer', 20);
  } else {
    w.varint(1).bytes(result.proofBytes);
  }
}

function decodeProofResult(r: BincodeReader): ProofResult {
  if (readVariant(r, ['tee', 'zk'], 'ProofResult') === 'zk') return { type: 'zk', proofBytes: r.bytes('proof_bytes') };
  const aggregateProposal = readProposal(r);
  const count = r.varintNumber('proposals length');
  const proposals: Proposal[] = [];
  for (let i = 0; i < count; i++) proposals.push(readProposal(r));
  return { type: 'tee', aggregateProposal, proposals, teeSigner: getAddress(readHash(r, 'tee_signer', 20)) };
}

export function encodeEnclaveResponse(response: EnclaveResponse): Uint8Array {
  const w = bincodeWriter().varint(responseVariants.indexOf(response.type));
  if (response.type === 'prove') encodeProofResult(w, response.result);
  else if (response.type === 'signerPublicKey') w.bytes(response.publicKey);
  else if (response.type === 'signerAttestation') w.bytes(response.document);
  else w.string(response.message);
  return w.finish();
}

export function decodeEnclaveResponse(payload: Uint8Array): EnclaveResponse {
  return decodePayload(payload, responseVariants, 'EnclaveResponse', (type, r): EnclaveResponse => {
    if (type === 'prove') return { type, result: decodeProofResult(r) };
    if (type === 'signerPublicKey') return { type, publicKey: r.bytes('public key') };
    if (type === 'signerAttestation') return { type, document: r.bytes('attestation') };
    return { type, message: r.string('error message') };
  });
}
