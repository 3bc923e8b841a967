import { errorMessage } from '../../errors.ts';
import { answeredOf, exchange } from '../../jsonrpc/upstream.ts';
import type { ProofError } from '../../records/proofs.ts';

/** What a `prover_prove` call came back with: Base's JSON result, or the JSON-RPC error. */
export type ProveOutcome = { readonly result: unknown } | { readonly error: ProofError; readonly unreachable?: true };

/** JSON-RPC code for failures that never reached the host (connection refused, reset, timeout). */
export const hostUnavailableCode = -32603;

/**
 * Calls `prover_prove` on a prover host over HTTP. JSON-RPC errors come back as `{error}` with the
 * host's code and message; a host that cannot be reached at all is `{error: {code: -32603}}`.
 */
export async function callProverHost(
  url: string,
  request: unknown,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<ProveOutcome> {
  const answer = await exchange(url, 'prover_prove', [request], options);
  switch (answer.kind) {
    case 'result':
    case 'error':
      return answeredOf(answer);
    case 'timeout':
      return { error: { code: hostUnavailableCode, message: `prover host ${url} did not answer within ${options.timeoutMs} ms` } };
    case 'unreachable':
      return {
        error: { code: hostUnavailableCode, message: `prover host ${url} unreachable: ${errorMessage(answer.cause)}` },
        unreachable: true,
      };
    case 'too_large':
      return { error: { code: hostUnavailableCode, message: `prover host ${url}: a reply over ${answer.limitBytes} bytes` } };
    case 'malformed':
      return answer.json
        ? { error: { code: hostUnavailableCode, message: `prover host ${url}: HTTP ${answer.status}, not a JSON-RPC response` } }
        : {
            error: {
              code: hostUnavailableCode,
              message: `prover host ${url}: HTTP ${answer.status} with a body that is not JSON (${answer.detail})`,
            },
          };
  }
}

/**
 * `callProverHost`, retried while the host cannot be reached at all (connection refused or reset
 * before an answer), with exponential backoff. A JSON-RPC error or a timeout is not retried: the
 * host got the request and may still be proving.
 */
export async function callProverHostWithRetry(
  url: string,
  request: unknown,
  options: { timeoutMs: number; signal?: AbortSignal; attempts?: number; backoffMs?: number },
): Promise<ProveOutcome> {
  const attempts = options.attempts ?? 5;
  let delay = options.backoffMs ?? 1000;
  for (let attempt = 1; ; attempt++) {
    const outcome = await callProverHost(url, request, options);
    if (!('unreachable' in outcome) || attempt >= attempts || options.signal?.aborted) return outcome;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
    delay = Math.min(delay * 2, 30_000);
  }
}
