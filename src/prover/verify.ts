import type { Address, Hex } from 'viem';
import { encodeJournal, intermediateRootsOf, journalDigest, type Journal } from './journal.ts';
import type { ProofResult, Proposal } from './enclave-protocol.ts';
import type { ProofRequest } from './request.ts';
import { l1ProofBytes, recoverSigner } from './signature.ts';

export interface VerifiedProposal {
  readonly kind: 'aggregate' | 'block';
  readonly startingL2Block: number;
  readonly l2BlockNumber: number;
  readonly journal: Hex;
  readonly digest: Hex;
  readonly signer: Address;
  /** The 130-byte proof the L1 verifier takes: 0x00 ‖ l1OriginHash ‖ l1OriginNumber(u256) ‖ r‖s‖v, v in {27,28}. */
  readonly proof: Hex;
}

/**
 * Rebuilds every journal of a Tee result the way the verifier contract does (per-block proposals:
 * start = n−1, no intermediate roots; the aggregate: start = agreed block, intermediate roots
 * sampled every `intermediate_block_interval`), recovers each signer, and checks that the
 * proposals chain and share one signer. `problems` is empty when all holds.
 */
export async function verifyProofResult(
  result: ProofResult,
  request: ProofRequest,
  teeImageHash: Hex,
): Promise<{ proposals: VerifiedProposal[]; problems: string[] }> {
  const problems: string[] = [];
  if (result.type !== 'tee') return { proposals: [], problems: ['not a Tee proof result'] };
  const verify = async (kind: VerifiedProposal['kind'], p: Proposal, start: number, roots: readonly Hex[]): Promise<VerifiedProposal> => {
    const journal: Journal = {
      proposer: request.proposer,
      l1OriginHash: p.l1OriginHash,
      prevOutputRoot: p.prevOutputRoot,
      startingL2Block: start,
      outputRoot: p.outputRoot,
      endingL2Block: p.l2BlockNumber,
      intermediateRoots: roots,
      configHash: p.configHash,
      teeImageHash,
    };
    const digest = journalDigest(journal);
    return {
      kind,
      startingL2Block: start,
      l2BlockNumber: p.l2BlockNumber,
      journal: encodeJournal(journal),
      digest,
      signer: await recoverSigner(digest, p.signature),
      proof: l1ProofBytes(p.l1OriginHash, p.l1OriginNumber, p.signature),
    };
  };
  const out: VerifiedProposal[] = [];
  let prev = request.agreedL2OutputRoot;
  for (const p of result.proposals) {
    if (p.prevOutputRoot !== prev)
      problems.push(`proposal for L2 block ${p.l2BlockNumber}: prev_output_root ${p.prevOutputRoot} does not chain from ${prev}`);
    out.push(await verify('block', p, p.l2BlockNumber - 1, []));
    prev = p.outputRoot;
  }
  const count = result.proposals.length;
  const aggregate = result.aggregateProposal;
  const roots = count === 1 ? [] : intermediateRootsOf(result.proposals, request.intermediateBlockInterval);
  out.push(await verify('aggregate', aggregate, aggregate.l2BlockNumber - count, roots));
  if (aggregate.outputRoot !== request.claimedL2OutputRoot)
    problems.push(`aggregate output_root ${aggregate.outputRoot} is not the claimed ${request.claimedL2OutputRoot}`);
  if (aggregate.l2BlockNumber !== request.claimedL2BlockNumber)
    problems.push(`aggregate l2_block_number ${aggregate.l2BlockNumber} is not the claimed ${request.claimedL2BlockNumber}`);
  const signers = new Set(out.map((p) => p.signer));
  if (signers.size > 1) problems.push(`proposals recover to ${signers.size} different signers: ${[...signers].join(', ')}`);
  return { proposals: out, problems };
}
