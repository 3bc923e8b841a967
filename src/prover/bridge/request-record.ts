import { describeIssue, proofRequestRecordSchema, type ProofRequestRecord } from '../../records/proofs.ts';

/**
 * One record of flashlog.proofs.requests, read: the request, or why it is refused (-32602) and the
 * request id to answer under (the record's `requestId` when it has one, else its key; none means
 * nobody can be answered).
 */
export type ReadRequest =
  | { readonly ok: true; readonly record: ProofRequestRecord }
  | { readonly ok: false; readonly requestId: string | undefined; readonly message: string };

export function readRequestRecord(value: string, key: string | null): ReadRequest {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    json = undefined;
  }
  const parsed = proofRequestRecordSchema.safeParse(json);
  if (parsed.success) return { ok: true, record: parsed.data };
  const named =
    json && typeof json === 'object' && typeof (json as { requestId?: unknown }).requestId === 'string'
      ? (json as { requestId: string }).requestId
      : undefined;
  const message = json === undefined ? 'request record: not JSON' : describeIssue(parsed.error, 'request record');
  return { ok: false, requestId: named ?? key ?? undefined, message };
}
