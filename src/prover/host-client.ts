import { errorMessage } from '../errors.ts';
import type { ProofError } from './records.ts';

/** What a `prover_prove` call came back with: Base's JSON result, or the JSON-RPC error. */
export type ProveOutcome = { readonly result: unknown } | { readonly error: ProofError };

/** JSON-RPC code for failures that never reached the host (connection refused, reset, timeout). */
export const hostUnavailableCode = -32603;

/**
 * Calls `prover_prove` on a prover host over HTTP. JSON-RPC errors come back as `{error}` with the
 * host's code and message; a host that cannot be reached at all is `{error: {code: -32603}}`.
 */
export async function callProverHost(url: string, request: unknown, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ProveOutcome> {
  const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prover_prove', params: [request] }),
      signal: AbortSignal.any(signals),
    });
  } catch (error) {
    const timedOut = signals[0]!.aborted;
    return { error: { code: hostUnavailableCode, message: timedOut ? `prover host ${url} did not answer within ${options.timeoutMs} ms` : `prover host ${url} unreachable: ${errorMessage((error as { cause?: unknown }).cause ?? error)}` } };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    return { error: { code: hostUnavailableCode, message: `prover host ${url}: HTTP ${response.status} with a body that is not JSON (${errorMessage(error)})` } };
  }
  const reply = body as { result?: unknown; error?: { code?: unknown; message?: unknown } };
  if (reply && typeof reply === 'object' && reply.error && typeof reply.error.code === 'number') {
    return { error: { code: reply.error.code, message: String(reply.error.message ?? '') } };
  }
  if (reply && typeof reply === 'object' && 'result' in reply) return { result: reply.result };
  return { error: { code: hostUnavailableCode, message: `prover host ${url}: HTTP ${response.status}, not a JSON-RPC response` } };
}
