import { readFileSync } from 'node:fs';
import { bytesToHex, hexToBytes, keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../test/helpers/shared.ts';
import { bincodeReader, bincodeWriter, encodeFrame, frameAccumulator } from '../wire/bincode.ts';
import { configHashes, marshalPerChainConfig, perChainConfigHash } from './config-hash.ts';
import { encodeJournal, encodePreScheduleJournal, journalDigest, preScheduleJournalDigest, type Journal } from './journal.ts';
import { outputRootV0 } from './output-root.ts';
import {
  decodeEnclaveRequest,
  decodeEnclaveResponse,
  encodeEnclaveRequest,
  encodeEnclaveResponse,
  localKey,
  type EnclaveRequest,
  type EnclaveResponse,
  type Proposal,
} from './enclave-protocol.ts';
import { l1ProofBytes, recoverSigner, signDigest } from './signature.ts';

/**
 * Golden values for wire compatibility with Base's Rust prover (see notes/tee-prover.md). They
 * predate the scheduleId journal (base/contracts PR #359): the journals and the Prove frame are the
 * pre-scheduleId forms; the signature, key, config hash, output root and the other frames did not
 * change. The current forms are checked below as those bytes plus the appended fields, and in
 * test/integration/journal-harness.test.ts against a Solidity copy of AggregateVerifier's hashing.
 */
const vectors = JSON.parse(readFileSync(sharedPath('fixtures/tee-prover/vectors.json'), 'utf8')) as {
  keys: { anvil0: { private_key: Hex; address: Address; public_key_uncompressed_65: Hex } };
  config_hash: {
    golden_sample: { input: Record<string, string | number>; marshal_binary: Hex; hash: Hex };
    chains: Record<string, string>;
  };
  journal: Record<string, { journal: Hex; journal_len: number; digest: Hex; signature_anvil0: Hex } & Record<string, unknown>>;
  output_root_v0: { state_root: string; message_passer_storage_root: string; block_hash: string; output_root: Hex };
  tee_image_hash: { pcr0_all_zero_48: Hex };
  vsock_frames: Record<string, Hex>;
};

/** "0x22..22" in the vectors means 32 bytes of 0x22. */
const fill = (short: string): Hex => {
  const match = /^0x([0-9a-f]{2})\.\.\1$/i.exec(short);
  return match ? `0x${match[1]!.repeat(32)}` : (short as Hex);
};
const key = vectors.keys.anvil0;
const j = (name: string) => vectors.journal[name]!;
const j1 = j('j1_per_block_style');
/** A scheduleId for the tests that append one: 32 bytes of 0x66. */
const scheduleId: Hex = fill('0x66..66');
const journal1: Journal = {
  proposer: j1.proposer as Address,
  l1OriginHash: fill(j1.l1_origin_hash as string),
  prevOutputRoot: fill(j1.prev_output_root as string),
  startingL2Block: j1.starting_l2_block as number,
  outputRoot: fill(j1.output_root as string),
  endingL2Block: j1.ending_l2_block as number,
  intermediateRoots: [],
  configHash: fill(j1.config_hash as string),
  teeImageHash: fill(j1.tee_image_hash as string),
  scheduleId,
};

/** Splits a golden journal back into fields, so re-encoding it proves the field layout. */
function parseJournal(hex: Hex): Journal {
  const b = hexToBytes(hex);
  const n = (b.length - 196) / 32;
  const view = new DataView(b.buffer);
  const at = (from: number, len: number) => bytesToHex(b.slice(from, from + len));
  return {
    proposer: at(0, 20) as Address,
    l1OriginHash: at(20, 32),
    prevOutputRoot: at(52, 32),
    startingL2Block: view.getBigUint64(84, false),
    outputRoot: at(92, 32),
    endingL2Block: view.getBigUint64(124, false),
    intermediateRoots: Array.from({ length: n }, (_, i) => at(132 + 32 * i, 32)),
    configHash: at(132 + 32 * n, 32),
    teeImageHash: at(164 + 32 * n, 32),
    scheduleId,
  };
}

describe('journal', () => {
  it('encodes the upstream test_journal() byte for byte as the pre-scheduleId journal, 196 bytes', () => {
    const encoded = encodePreScheduleJournal(journal1);
    expect(encoded).toBe(j1.journal.toLowerCase());
    expect(hexToBytes(encoded).length).toBe(196);
    expect(preScheduleJournalDigest(journal1)).toBe(j1.digest);
  });

  it('appends scheduleId after teeImageHash: 228 bytes, a different digest', () => {
    const encoded = encodeJournal(journal1);
    expect(hexToBytes(encoded).length).toBe(228);
    expect(encoded).toBe(`${j1.journal.toLowerCase()}${'66'.repeat(32)}`);
    expect(journalDigest(journal1)).toBe(keccak256(encoded));
    expect(journalDigest(journal1)).not.toBe(j1.digest);
  });

  it.each(['j2_two_intermediates', 'j3_local_mode_aggregate'])('re-encodes %s with its intermediate roots and digest', (name) => {
    const golden = j(name);
    const fields = parseJournal(golden.journal);
    expect(fields.intermediateRoots.length).toBe((golden.journal_len - 196) / 32);
    expect(fields.intermediateRoots.length).toBe(2);
    expect(encodePreScheduleJournal(fields)).toBe(golden.journal.toLowerCase());
    expect(keccak256(golden.journal)).toBe(golden.digest);
    expect(preScheduleJournalDigest(fields)).toBe(golden.digest);
    expect(hexToBytes(encodeJournal(fields)).length).toBe(golden.journal_len + 32);
  });

  it('j3 is a local-mode aggregate: blocks 100 -> 104, zero teeImageHash, mainnet config hash', () => {
    const fields = parseJournal(j('j3_local_mode_aggregate').journal);
    expect(fields.startingL2Block).toBe(100n);
    expect(fields.endingL2Block).toBe(104n);
    expect(fields.teeImageHash).toBe(`0x${'00'.repeat(32)}`);
    expect(fields.configHash).toBe(configHashes.get(8453));
  });
});

describe('signatures', () => {
  it.each(['j1_per_block_style', 'j2_two_intermediates', 'j3_local_mode_aggregate'])(
    'signs %s as the golden r‖s‖v with v in {0,1}, and recovers anvil #0',
    async (name) => {
      const golden = j(name);
      const signature = await signDigest(golden.digest, key.private_key);
      expect(signature).toBe(golden.signature_anvil0);
      expect([0, 1]).toContain(hexToBytes(signature)[64]);
      expect(await recoverSigner(golden.digest, signature)).toBe(key.address);
    },
  );

  it('derives the golden 65-byte uncompressed public key', () => {
    expect(privateKeyToAccount(key.private_key).publicKey).toBe(key.public_key_uncompressed_65);
  });

  it('builds the 130-byte L1 proof with v moved to 27/28', () => {
    const proof = hexToBytes(l1ProofBytes(journal1.l1OriginHash, 100, j1.signature_anvil0));
    expect(proof.length).toBe(130);
    expect(proof[0]).toBe(0);
    expect(bytesToHex(proof.slice(1, 33))).toBe(journal1.l1OriginHash);
    expect(proof[64]).toBe(100);
    expect(proof[129]).toBe(hexToBytes(j1.signature_anvil0)[64]! + 27);
    expect(() => l1ProofBytes(journal1.l1OriginHash, 1, `${j1.signature_anvil0.slice(0, -2)}05` as Hex)).toThrow(/v must be/);
  });
});

describe('config hashes', () => {
  it('marshals the upstream golden sample to 212 bytes and hashes it', () => {
    const input = vectors.config_hash.golden_sample.input;
    const config = {
      chainId: input.chain_id as number,
      l1GenesisHash: input.l1_hash as Hex,
      l2GenesisHash: input.l2_hash as Hex,
      l2GenesisTime: input.l2_time as number,
      batcher: input.batcher as Address,
      scalar: input.scalar as Hex,
      gasLimit: input.gas_limit as number,
      depositContract: input.deposit_contract as Address,
      l1SystemConfig: input.l1_system_config as Address,
    };
    expect(marshalPerChainConfig(config)).toBe(vectors.config_hash.golden_sample.marshal_binary);
    expect(hexToBytes(marshalPerChainConfig(config)).length).toBe(212);
    expect(perChainConfigHash(config)).toBe(vectors.config_hash.golden_sample.hash);
  });

  it('has every chain of the vectors with its hash', () => {
    const chains = Object.entries(vectors.config_hash.chains).filter(([id]) => /^\d+$/.test(id));
    expect(chains.length).toBe(5);
    for (const [id, hash] of chains) expect(configHashes.get(Number(id))).toBe(hash);
  });
});

describe('output root and image hash', () => {
  it('computes output root v0', () => {
    const v = vectors.output_root_v0;
    expect(outputRootV0(fill(v.state_root), fill(v.message_passer_storage_root), fill(v.block_hash))).toBe(v.output_root);
  });
  it('teeImageHash of an all-zero PCR0 is keccak256 of 48 zero bytes', () => {
    expect(keccak256(new Uint8Array(48))).toBe(vectors.tee_image_hash.pcr0_all_zero_48);
  });
});

describe('enclave frames', () => {
  const frames = vectors.vsock_frames;
  const frame = (payload: Uint8Array) => bytesToHex(encodeFrame(payload));
  const unframe = (hex: Hex) => {
    const payload = frameAccumulator().push(hexToBytes(hex));
    if (!payload) throw new Error('incomplete frame');
    return payload;
  };
  const requests: [string, EnclaveRequest][] = [
    ['req_SignerPublicKey', { type: 'signerPublicKey' }],
    ['req_SignerAttestation_none_none', { type: 'signerAttestation' }],
    [
      'req_SignerAttestation_userdata_deadbeef_nonce_01020304',
      { type: 'signerAttestation', userData: hexToBytes('0xdeadbeef'), nonce: Uint8Array.of(1, 2, 3, 4) },
    ],
    ['req_Prove_one_local_preimage_l1head_0x22', { type: 'prove', preimages: [{ key: localKey(1), value: hexToBytes(fill('0x22..22')) }] }],
  ];
  it.each(requests)('%s encodes and decodes byte for byte', (name, request) => {
    expect(frame(encodeEnclaveRequest(request))).toBe(frames[name]);
    expect(bytesToHex(encodeEnclaveRequest(decodeEnclaveRequest(unframe(frames[name]!))))).toBe(`0x${frames[name]!.slice(10)}`);
  });

  const proposal: Proposal = {
    outputRoot: fill('0x44..44'),
    signature: j1.signature_anvil0,
    l1OriginHash: fill('0x22..22'),
    l1OriginNumber: 100,
    l2BlockNumber: 1000,
    prevOutputRoot: fill('0x33..33'),
    configHash: fill('0x11..11'),
  };
  const responses: [string, EnclaveResponse][] = [
    ['resp_SignerPublicKey_anvil0', { type: 'signerPublicKey', publicKey: hexToBytes(key.public_key_uncompressed_65) }],
    ['resp_Error_boom', { type: 'error', message: 'boom' }],
  ];
  it.each(responses)('%s encodes and decodes byte for byte', (name, response) => {
    expect(frame(encodeEnclaveResponse(response))).toBe(frames[name]);
    expect(decodeEnclaveResponse(unframe(frames[name]!))).toEqual(response);
  });

  it('a Tee result is the pre-scheduleId frame with schedule_id after each proposal and tee_signer at the end', () => {
    const old = unframe(frames.resp_Prove_Tee_single_proposal!);
    // old payload: Prove(0) Tee(0) ‖ proposal ‖ len(1) ‖ proposal
    const length = (old.length - 3) / 2;
    const proposalBytes = old.slice(2, 2 + length);
    expect(old[2 + length]).toBe(1);
    // alloy's B256 and Address go through serde as byte strings: a length varint (0x20, 0x14), as
    // every hash of the golden frame already does.
    const withSchedule = [...proposalBytes, 0x20, ...hexToBytes(scheduleId)];
    const expected = Uint8Array.from([0, 0, ...withSchedule, 1, ...withSchedule, 0x14, ...hexToBytes(key.address)]);
    const current: EnclaveResponse = {
      type: 'prove',
      result: {
        type: 'tee',
        aggregateProposal: { ...proposal, scheduleId },
        proposals: [{ ...proposal, scheduleId }],
        teeSigner: key.address,
      },
    };
    expect(bytesToHex(encodeEnclaveResponse(current))).toBe(bytesToHex(expected));
    expect(decodeEnclaveResponse(expected)).toEqual(current);
    // The pre-scheduleId frame no longer decodes: it ends where schedule_id should start.
    expect(() => decodeEnclaveResponse(old)).toThrow(/schedule_id/);
    expect(() => encodeEnclaveResponse({ type: 'prove', result: { ...current.result, teeSigner: undefined } as never })).toThrow(
      /tee_signer/,
    );
  });

  it('reassembles a frame split across chunks and refuses an oversized length', () => {
    const bytes = hexToBytes(frames.resp_Prove_Tee_single_proposal!);
    const acc = frameAccumulator();
    let out: Uint8Array | undefined;
    for (let i = 0; i < bytes.length; i += 7) out = acc.push(bytes.slice(i, i + 7)) ?? out;
    expect(out && bytesToHex(out)).toBe(`0x${frames.resp_Prove_Tee_single_proposal!.slice(10)}`);
    expect(() => frameAccumulator(16).push(Uint8Array.of(0, 0, 1, 0, 0))).toThrow(/over the cap/);
  });

  it('varints use the 0xFB/0xFC/0xFD widths and round-trip', () => {
    for (const value of [0n, 250n, 251n, 65535n, 65536n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 64n - 1n]) {
      const bytes = bincodeWriter().varint(value).finish();
      expect(bytes.length).toBe(value < 251n ? 1 : value <= 0xffffn ? 3 : value <= 0xffffffffn ? 5 : 9);
      expect(bincodeReader(bytes).varint()).toBe(value);
    }
  });

  it('rejects unknown variants and truncated payloads with a clear error', () => {
    expect(() => decodeEnclaveRequest(Uint8Array.of(7))).toThrow(/unknown variant 7/);
    expect(() => decodeEnclaveResponse(hexToBytes('0x0304626f'))).toThrow(/needs 4 bytes/);
  });
});
