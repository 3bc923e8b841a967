import { z } from 'zod';
import { topics } from '../log/topics.ts';
import { proofRequestSchema, proofResultWireSchema } from './request.ts';

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
