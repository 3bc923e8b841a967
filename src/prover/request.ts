import { getAddress, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { zodIssueMessage } from '../schemas/issue.ts';
import type { Proposal, ProofResult } from './enclave-protocol.ts';

/**
 * `ProofRequest` and `ProofResult` as Base's host speaks them in JSON (serde defaults): snake_case
 * fields, u64 as JSON numbers, B256 as 0x-hex (0x optional on input), optional fields default to zero.
 * Unknown fields are ignored, as serde does.
 */
const b256 = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, 'expected a 32-byte hex hash')
  .transform((value) => `0x${value.replace(/^0x/, '').toLowerCase()}` as Hex);
const u64 = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const address = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{40}$/, 'expected a 20-byte hex address')
  .transform((value) => getAddress(`0x${value.replace(/^0x/, '')}`));
const zero32 = `0x${'00'.repeat(32)}` as Hex;

export const proofRequestSchema = z.object({
  l1_head: b256,
  agreed_l2_head_hash: b256,
  agreed_l2_output_root: b256,
  claimed_l2_output_root: b256,
  claimed_l2_block_number: u64,
  proposer: address.default(getAddress(`0x${'00'.repeat(20)}`)),
  intermediate_block_interval: u64.default(0),
  l1_head_number: u64.default(0),
  image_hash: b256.default(zero32),
});
export type ProofRequestWire = z.input<typeof proofRequestSchema>;

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
  };
}

const proposalWireSchema = z.object({
  output_root: b256,
  signature: z.string().regex(/^0x([0-9a-fA-F]{2})*$/),
  l1_origin_hash: b256,
  l1_origin_number: u64,
  l2_block_number: u64,
  prev_output_root: b256,
  config_hash: b256,
});
export const proofResultWireSchema = z.union([
  z.object({ Tee: z.object({ aggregate_proposal: proposalWireSchema, proposals: z.array(proposalWireSchema) }) }),
  z.object({ Zk: z.object({ proof_bytes: z.array(z.number().int().min(0).max(255)) }) }),
]);
export type ProofResultWire = z.input<typeof proofResultWireSchema>;

const proposalToWire = (p: Proposal) => ({
  output_root: p.outputRoot,
  signature: p.signature,
  l1_origin_hash: p.l1OriginHash,
  l1_origin_number: p.l1OriginNumber,
  l2_block_number: p.l2BlockNumber,
  prev_output_root: p.prevOutputRoot,
  config_hash: p.configHash,
});
const proposalFromWire = (p: z.output<typeof proposalWireSchema>): Proposal => ({
  outputRoot: p.output_root,
  signature: p.signature.toLowerCase() as Hex,
  l1OriginHash: p.l1_origin_hash,
  l1OriginNumber: p.l1_origin_number,
  l2BlockNumber: p.l2_block_number,
  prevOutputRoot: p.prev_output_root,
  configHash: p.config_hash,
});

/** `{"Tee":{"aggregate_proposal":…,"proposals":[…]}}` (serde's external tagging). */
export function proofResultToWire(result: ProofResult): ProofResultWire {
  return result.type === 'tee'
    ? { Tee: { aggregate_proposal: proposalToWire(result.aggregateProposal), proposals: result.proposals.map(proposalToWire) } }
    : { Zk: { proof_bytes: [...result.proofBytes] } };
}

export function proofResultFromWire(value: unknown): ProofResult {
  const parsed = proofResultWireSchema.parse(value);
  return 'Tee' in parsed
    ? {
        type: 'tee',
        aggregateProposal: proposalFromWire(parsed.Tee.aggregate_proposal),
        proposals: parsed.Tee.proposals.map(proposalFromWire),
      }
    : { type: 'zk', proofBytes: Uint8Array.from(parsed.Zk.proof_bytes) };
}
