import type { Address, Hex } from 'viem';
import type { z } from 'zod';
import { proofRequestSchema, proofResultWireSchema, type proposalWireSchema, type ProofResultWire } from '../records/proofs.ts';
import { zodIssueMessage } from '../schemas/issue.ts';
import type { Proposal, ProofResult } from './enclave-protocol.ts';

export interface ProofRequest {
  readonly l1Head: Hex;
  readonly agreedL2HeadHash: Hex;
  readonly agreedL2OutputRoot: Hex;
  readonly claimedL2OutputRoot: Hex;
  readonly claimedL2BlockNumber: number;
  readonly proposer: Address;
  readonly intermediateBlockInterval: number;
  readonly l1HeadNumber: number;
  readonly imageHash: Hex;
  /** The L2 block whose timestamp pins the scheduleId (boot local key 11); undefined = the claimed block. */
  readonly scheduleL2BlockNumber?: number | undefined;
}

/** Names the first bad field: `params[0].claimed_l2_block_number: expected number, received string`. */
export function parseProofRequest(
  value: unknown,
  where = 'params[0]',
): { ok: true; request: ProofRequest } | { ok: false; message: string } {
  const parsed = proofRequestSchema.safeParse(value);
  if (!parsed.success) {
    return { ok: false, message: zodIssueMessage(parsed.error, where, value) };
  }
  const d = parsed.data;
  return {
    ok: true,
    request: {
      l1Head: d.l1_head,
      agreedL2HeadHash: d.agreed_l2_head_hash,
      agreedL2OutputRoot: d.agreed_l2_output_root,
      claimedL2OutputRoot: d.claimed_l2_output_root,
      claimedL2BlockNumber: d.claimed_l2_block_number,
      proposer: d.proposer,
      intermediateBlockInterval: d.intermediate_block_interval,
      l1HeadNumber: d.l1_head_number,
      imageHash: d.image_hash,
      scheduleL2BlockNumber: d.schedule_l2_block_number,
    },
  };
}

export function proofRequestToWire(request: ProofRequest): z.output<typeof proofRequestSchema> {
  return {
    l1_head: request.l1Head,
    agreed_l2_head_hash: request.agreedL2HeadHash,
    agreed_l2_output_root: request.agreedL2OutputRoot,
    claimed_l2_output_root: request.claimedL2OutputRoot,
    claimed_l2_block_number: request.claimedL2BlockNumber,
    proposer: request.proposer,
    intermediate_block_interval: request.intermediateBlockInterval,
    l1_head_number: request.l1HeadNumber,
    image_hash: request.imageHash,
    ...(request.scheduleL2BlockNumber === undefined ? {} : { schedule_l2_block_number: request.scheduleL2BlockNumber }),
  };
}

const proposalToWire = (p: Proposal) => ({
  output_root: p.outputRoot,
  signature: p.signature,
  l1_origin_hash: p.l1OriginHash,
  l1_origin_number: p.l1OriginNumber,
  l2_block_number: p.l2BlockNumber,
  prev_output_root: p.prevOutputRoot,
  config_hash: p.configHash,
  ...(p.scheduleId === undefined ? {} : { schedule_id: p.scheduleId }),
});
const proposalFromWire = (p: z.output<typeof proposalWireSchema>): Proposal => ({
  outputRoot: p.output_root,
  signature: p.signature.toLowerCase() as Hex,
  l1OriginHash: p.l1_origin_hash,
  l1OriginNumber: p.l1_origin_number,
  l2BlockNumber: p.l2_block_number,
  prevOutputRoot: p.prev_output_root,
  configHash: p.config_hash,
  scheduleId: p.schedule_id,
});

/** `{"Tee":{"aggregate_proposal":…,"proposals":[…],"tee_signer":…}}` (serde's external tagging). */
export function proofResultToWire(result: ProofResult): ProofResultWire {
  return result.type === 'tee'
    ? {
        Tee: {
          aggregate_proposal: proposalToWire(result.aggregateProposal),
          proposals: result.proposals.map(proposalToWire),
          ...(result.teeSigner === undefined ? {} : { tee_signer: result.teeSigner }),
        },
      }
    : { Zk: { proof_bytes: [...result.proofBytes] } };
}

export function proofResultFromWire(value: unknown): ProofResult {
  const parsed = proofResultWireSchema.parse(value);
  return 'Tee' in parsed
    ? {
        type: 'tee',
        aggregateProposal: proposalFromWire(parsed.Tee.aggregate_proposal),
        proposals: parsed.Tee.proposals.map(proposalFromWire),
        teeSigner: parsed.Tee.tee_signer,
      }
    : { type: 'zk', proofBytes: Uint8Array.from(parsed.Zk.proof_bytes) };
}
