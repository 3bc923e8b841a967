import { encodePacked, keccak256, type Address, type Hex } from 'viem';
import type { Proposal } from './enclave-protocol.ts';

/**
 * The TEE proof journal, as Base's enclave signs it and `AggregateVerifier._verifyTeeProof`
 * rebuilds it (base/contracts `src/L1/proofs/AggregateVerifier.sol` @4f7acda5, lines 962-973;
 * base/base `nitro-enclave/src/server.rs`, `ProofJournal { …, schedule_id }`):
 *
 *   proposer(20) ‖ l1OriginHash(32) ‖ prevOutputRoot(32) ‖ startingL2Block(u64 BE) ‖ outputRoot(32)
 *   ‖ endingL2Block(u64 BE) ‖ intermediateRoots(32·N) ‖ configHash(32) ‖ teeImageHash(32)
 *   ‖ scheduleId(32)
 *
 * 228 + 32·N bytes. The journal before base/contracts PR #359 (2026-07-17) ended at teeImageHash
 * (196 + 32·N bytes): `encodePreScheduleJournal`, kept to recognise proofs signed over it.
 */
export interface Journal {
  readonly proposer: Address;
  readonly l1OriginHash: Hex;
  readonly prevOutputRoot: Hex;
  readonly startingL2Block: number | bigint;
  readonly outputRoot: Hex;
  readonly endingL2Block: number | bigint;
  readonly intermediateRoots: readonly Hex[];
  readonly configHash: Hex;
  readonly teeImageHash: Hex;
  /** `ProtocolVersions.activatedScheduleId(claim timestamp)` (./schedule-id.ts). */
  readonly scheduleId: Hex;
}

/** @example encodeJournal(j).length === 2 + 2 * (228 + 32 * j.intermediateRoots.length) */
export function encodeJournal(journal: Journal): Hex {
  return encodePacked(['bytes', 'bytes32'], [encodePreScheduleJournal(journal), journal.scheduleId]);
}

/** The journal as it was before scheduleId (196 + 32·N bytes). */
export function encodePreScheduleJournal(journal: Omit<Journal, 'scheduleId'>): Hex {
  return encodePacked(
    ['address', 'bytes32', 'bytes32', 'uint64', 'bytes32', 'uint64', 'bytes32[]', 'bytes32', 'bytes32'],
    [
      journal.proposer,
      journal.l1OriginHash,
      journal.prevOutputRoot,
      BigInt(journal.startingL2Block),
      journal.outputRoot,
      BigInt(journal.endingL2Block),
      [...journal.intermediateRoots],
      journal.configHash,
      journal.teeImageHash,
    ],
  );
}

/** keccak256 of the journal bytes: what the enclave signs (no EIP-191 prefix). */
export const journalDigest = (journal: Journal): Hex => keccak256(encodeJournal(journal));
/** keccak256 of the journal before scheduleId: what a proof signed before base/contracts PR #359 commits to. */
export const preScheduleJournalDigest = (journal: Omit<Journal, 'scheduleId'>): Hex => keccak256(encodePreScheduleJournal(journal));

/** The aggregate's intermediate roots, as the verifier and the proposer sample them. */
export function intermediateRootsOf(proposals: readonly Proposal[], interval: number): Hex[] {
  if (interval <= 0) return [];
  return Array.from({ length: Math.floor(proposals.length / interval) }, (_, i) => proposals[(i + 1) * interval - 1]!.outputRoot);
}
