import { encodePacked, keccak256, type Address, type Hex } from 'viem';
import type { Proposal } from './enclave-protocol.ts';

/**
 * The TEE proof journal, as Base's enclave signs it and `AggregateVerifier._verifyTeeProof`
 * rebuilds it (spec era, block numbers as u64):
 *
 *   proposer(20) ‖ l1OriginHash(32) ‖ prevOutputRoot(32) ‖ startingL2Block(u64 BE) ‖ outputRoot(32)
 *   ‖ endingL2Block(u64 BE) ‖ intermediateRoots(32·N) ‖ configHash(32) ‖ teeImageHash(32)
 *
 * 196 + 32·N bytes.
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
}

/** @example encodeJournal(j).length === 2 + 2 * (196 + 32 * j.intermediateRoots.length) */
export function encodeJournal(journal: Journal): Hex {
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

/** The aggregate's intermediate roots, as the verifier and the proposer sample them. */
export function intermediateRootsOf(proposals: readonly Proposal[], interval: number): Hex[] {
  if (interval <= 0) return [];
  return Array.from({ length: Math.floor(proposals.length / interval) }, (_, i) => proposals[(i + 1) * interval - 1]!.outputRoot);
}
