import type { Address, Hex } from 'viem';
import { encodeJournal, intermediateRootsOf, journalDigest, preScheduleJournalDigest, type Journal } from './journal.ts';
import type { ProofResult, Proposal } from './enclave-protocol.ts';
import type { ProofRequest } from './request.ts';
import { l1ProofBytes, recoverSigner } from './signature.ts';

export interface VerifiedProposal {
  readonly kind: 'aggregate' | 'block';
  readonly startingL2Block: number;
  readonly l2BlockNumber: number;
  /** The scheduleId the journal was rebuilt with: the expected one, else the proposal's own. */
  readonly scheduleId: Hex;
  readonly journal: Hex;
  readonly digest: Hex;
  readonly signer: Address;
  /** The 130-byte proof the L1 verifier takes: 0x00 ‖ l1OriginHash ‖ l1OriginNumber(u256) ‖ r‖s‖v, v in {27,28}. */
  readonly proof: Hex;
}

/**
 * Rebuilds every journal of a Tee result the way the verifier contract does (per-block proposals:
 * start = n−1, no intermediate roots; the aggregate: start = agreed block, intermediate roots
 * sampled every `intermediate_block_interval`; the journal ends with the scheduleId the game
 * pinned), recovers each signer, and checks that the proposals chain and share one signer.
 * `problems` is empty when all holds; otherwise each names the block and what is wrong, among:
 * - the proposal carries a scheduleId other than `expectedScheduleId` (what the L1 game pinned);
 * - the signature is over the journal before scheduleId (a proof AggregateVerifier refuses since
 *   base/contracts PR #359), recognised by the result's `tee_signer` or by a result without
 *   schedule_id;
 * - the signature recovers to another address than the result's `tee_signer`.
 */
export async function verifyProofResult(
  result: ProofResult,
  request: ProofRequest,
  teeImageHash: Hex,
  expectedScheduleId?: Hex,
): Promise<{ proposals: VerifiedProposal[]; problems: string[] }> {
  const problems: string[] = [];
  if (result.type !== 'tee') return { proposals: [], problems: ['not a Tee proof result'] };
  const zero: Hex = `0x${'00'.repeat(32)}`;
  const verify = async (kind: VerifiedProposal['kind'], p: Proposal, start: number, roots: readonly Hex[]): Promise<VerifiedProposal> => {
    const what = `${kind === 'aggregate' ? 'aggregate proposal' : 'proposal'} for L2 block ${p.l2BlockNumber}`;
    const scheduleId = (expectedScheduleId ?? p.scheduleId ?? zero).toLowerCase() as Hex;
    const fields: Omit<Journal, 'scheduleId'> = {
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
    const journal: Journal = { ...fields, scheduleId };
    const digest = journalDigest(journal);
    const signer = await recoverSigner(digest, p.signature);
    const carried = p.scheduleId?.toLowerCase();
    if (carried !== undefined && carried !== scheduleId)
      problems.push(`${what}: scheduleId ${carried} differs from ${scheduleId}, the one the L1 game pins`);
    const reference = result.teeSigner;
    const signedBefore = async () => (await recoverSigner(preScheduleJournalDigest(fields), p.signature)) === (reference ?? signer);
    if (reference !== undefined && signer !== reference) {
      if (await signedBefore())
        problems.push(`${what}: signed over the journal before scheduleId (196 + 32·N bytes), which AggregateVerifier refuses`);
      else if (carried === undefined || carried === scheduleId)
        problems.push(`${what}: the signature recovers to ${signer}, not the enclave's tee_signer ${reference}`);
    } else if (reference === undefined && carried === undefined) {
      problems.push(`${what}: no schedule_id: a result from before the scheduleId journal, which AggregateVerifier refuses`);
    }
    return {
      kind,
      startingL2Block: start,
      l2BlockNumber: p.l2BlockNumber,
      scheduleId,
      journal: encodeJournal(journal),
      digest,
      signer,
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
