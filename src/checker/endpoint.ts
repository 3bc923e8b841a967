import { answeredOf, exchange, exchangeError } from '../jsonrpc/upstream.ts';
import { JsonRpcError } from '../errors.ts';
import type { Answer } from './compare.ts';

/** One side the checker talks to (the gateway or the node): an answer, or a throw when there was none. */
export interface Endpoint {
  readonly url: string;
  call(method: string, params: readonly unknown[]): Promise<Answer>;
}

/** The JSON-RPC over HTTP of `url`, through the project's one client. A timeout or a transport failure throws. */
export function httpEndpoint(url: string, timeoutMs: number, signal?: AbortSignal): Endpoint {
  const target = new URL(url);
  return {
    url,
    async call(method, params) {
      const answer = await exchange(target, method, params, { timeoutMs, signal });
      if (answer.kind === 'result' || answer.kind === 'error') return answeredOf(answer);
      throw exchangeError(answer, method, { label: url, timeoutMs });
    },
  };
}

/** The result of an answer, or a throw naming the method and the error. */
export function resultOf<T>(method: string, answer: Answer): T {
  if ('error' in answer) throw new JsonRpcError(answer.error.code, `${method}: error ${answer.error.code}: ${answer.error.message}`);
  return answer.result as T;
}

/** Runs `tasks` with at most `limit` in flight; resolves with their results in order. */
export async function inBatches<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}
