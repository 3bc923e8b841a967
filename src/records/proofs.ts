import { getAddress, type Hex } from 'viem';
import { z } from 'zod';
import { topics } from './topics.ts';

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
  /** L2 block whose timestamp pins the upgrade schedule (local key 11); absent = the claimed block. */
  schedule_l2_block_number: u64.optional(),
});
export type ProofRequestWire = z.input<typeof proofRequestSchema>;

export const proposalWireSchema = z.object({
  output_root: b256,
  signature: z.string().regex(/^0x([0-9a-fA-F]{2})*$/),
  l1_origin_hash: b256,
  l1_origin_number: u64,
  l2_block_number: u64,
  prev_output_root: b256,
  config_hash: b256,
  /** Since Base's scheduleId journal; absent in a reply from before it. */
  schedule_id: b256.optional(),
});
export const proofResultWireSchema = z.union([
  z.object({
    Tee: z.object({
      aggregate_proposal: proposalWireSchema,
      proposals: z.array(proposalWireSchema),
      /** The enclave's signer (base/base `ProofResult::Tee.tee_signer`); absent in a reply from before it. */
      tee_signer: address.optional(),
    }),
  }),
  z.object({ Zk: z.object({ proof_bytes: z.array(z.number().int().min(0).max(255)) }) }),
]);
export type ProofResultWire = z.input<typeof proofResultWireSchema>;

/**
 * The request/reply records of flashlog.proofs.requests and flashlog.proofs.replies: versioned
 * JSON envelopes (`"v": 1`, camelCase like every flashlog record) around Base's own JSON for the
 * ProofRequest and ProofResult (snake_case). Both are keyed by the request id.
 *
 *   request: {"v":1,"requestId":"…","replyTopic":"flashlog.proofs.replies","requestedAt":ms,"request":{ProofRequest}}
 *   reply:   {"v":1,"requestId":"…","repliedAt":ms,"proverMs":n,"result":{"Tee":{…}}}
 *        or  {"v":1,"requestId":"…","repliedAt":ms,"proverMs":n,"error":{"code":-32000,"message":"…"}}
 */
export const proofRequestRecordSchema = z.looseObject({
  v: z.literal(1),
  requestId: z.string().min(1).max(256),
  replyTopic: z.string().min(1).default(topics.proofReplies),
  requestedAt: z.number().optional(),
  request: proofRequestSchema,
});
export type ProofRequestRecord = z.output<typeof proofRequestRecordSchema>;

export const proofErrorSchema = z.object({ code: z.number().int(), message: z.string() });
export type ProofError = z.output<typeof proofErrorSchema>;

export const proofReplyRecordSchema = z
  .looseObject({
    v: z.literal(1),
    requestId: z.string().min(1),
    repliedAt: z.number(),
    proverMs: z.number().optional(),
    result: proofResultWireSchema.optional(),
    error: proofErrorSchema.optional(),
  })
  .refine((reply) => (reply.result === undefined) !== (reply.error === undefined), {
    message: 'a reply has exactly one of result and error',
  });
export type ProofReplyRecord = z.output<typeof proofReplyRecordSchema>;

/** `where: what`, naming the first bad field of a record. */
export function describeIssue(error: z.ZodError, where: string): string {
  const issue = error.issues[0]!;
  return `${[where, ...issue.path].join('.')}: ${issue.message}`;
}
