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

export function encodeEnclaveRequest(request: EnclaveRequest): Uint8Array {
  const w = bincodeWriter();
  switch (request.type) {
    case 'prove':
      w.varint(0).varint(request.preimages.length);
      for (const { key, value } of request.preimages) {
        if (key.data.length !== 31) throw new FlashlogError('PREIMAGE_KEY', `preimage key data: expected 31 bytes, got ${key.data.length}`);
        w.raw(key.data).varint(preimageKeyTypes.indexOf(key.type)).bytes(value);
      }
      break;
    case 'signerPublicKey':
      w.varint(1);
      break;
    case 'signerAttestation':
      w.varint(2)
        .option(request.userData, (v) => w.bytes(v))
        .option(request.nonce, (v) => w.bytes(v));
      break;
  }
  return w.finish();
}

export function decodeEnclaveRequest(payload: Uint8Array): EnclaveRequest {
  const r = bincodeReader(payload);
  const variant = r.varintNumber('EnclaveRequest variant');
  let request: EnclaveRequest;
  if (variant === 0) {
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
    request = { type: 'prove', preimages };
  } else if (variant === 1) {
    request = { type: 'signerPublicKey' };
  } else if (variant === 2) {
    const userData = r.option(() => r.bytes('user_data'));
    const nonce = r.option(() => r.bytes('nonce'));
    request = { type: 'signerAttestation', userData, nonce };
  } else {
    throw new FlashlogError('BINCODE_INVALID', `EnclaveRequest: unknown variant ${variant}`);
  }
  r.end('EnclaveRequest');
  return request;
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
  const variant = r.varintNumber('ProofResult variant');
  if (variant === 0) {
    const aggregateProposal = readProposal(r);
    const count = r.varintNumber('proposals length');
    const proposals: Proposal[] = [];
    for (let i = 0; i < count; i++) proposals.push(readProposal(r));
    return { type: 'tee', aggregateProposal, proposals, teeSigner: getAddress(readHash(r, 'tee_signer', 20)) };
  }
  if (variant === 1) return { type: 'zk', proofBytes: r.bytes('proof_bytes') };
  throw new FlashlogError('BINCODE_INVALID', `ProofResult: unknown variant ${variant}`);
}

export function encodeEnclaveResponse(response: EnclaveResponse): Uint8Array {
  const w = bincodeWriter();
  switch (response.type) {
    case 'prove':
      w.varint(0);
      encodeProofResult(w, response.result);
      break;
    case 'signerPublicKey':
      w.varint(1).bytes(response.publicKey);
      break;
    case 'signerAttestation':
      w.varint(2).bytes(response.document);
      break;
    case 'error':
      w.varint(3).string(response.message);
      break;
  }
  return w.finish();
}

export function decodeEnclaveResponse(payload: Uint8Array): EnclaveResponse {
  const r = bincodeReader(payload);
  const variant = r.varintNumber('EnclaveResponse variant');
  let response: EnclaveResponse;
  if (variant === 0) response = { type: 'prove', result: decodeProofResult(r) };
  else if (variant === 1) response = { type: 'signerPublicKey', publicKey: r.bytes('public key') };
  else if (variant === 2) response = { type: 'signerAttestation', document: r.bytes('attestation') };
  else if (variant === 3) response = { type: 'error', message: r.string('error message') };
  else throw new FlashlogError('BINCODE_INVALID', `EnclaveResponse: unknown variant ${variant}`);
  r.end('EnclaveResponse');
  return response;
}
