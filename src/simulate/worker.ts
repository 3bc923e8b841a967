import { parentPort } from 'node:worker_threads';
import { JsonRpcError } from '../errors.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import { loadRules, type ChainRules, type RulesSpec } from './chain-rules.ts';
import { simulate } from './simulate-blocks.ts';
import type { SimulationJob, SimulationReply } from './pool.ts';
import { createStateReads } from './upstream-source.ts';

/**
 * A simulation thread (see pool.ts): runs one job at a time and keeps, across jobs, the chain
 * rules and the cache of canonical state reads, so a warm simulation reads nothing upstream.
 */
const reads = createStateReads();
const rules = new Map<string, Promise<ChainRules>>();

function rulesFor(spec: RulesSpec): Promise<ChainRules> {
  const key = 'genesis' in spec ? `genesis:${spec.genesis}` : `${spec.chainId}:${spec.hardfork}`;
  let held = rules.get(key);
  if (!held) {
    held = loadRules(spec);
    rules.set(key, held);
    held.catch(() => rules.delete(key));
  }
  return held;
}

async function run(job: SimulationJob): Promise<unknown> {
  const { common, scheduled, precompiles, rollup } = await rulesFor(job.rules);
  const call = (method: string, params: readonly unknown[]) =>
    createUpstream(job.upstreamUrl, { timeoutMs: Math.max(1, job.deadline - Date.now()) }).call(method, params);
  return simulate(job.payload, {
    base: job.base,
    source: reads.at(job.base, call),
    blockHash: (number) => reads.blockHash(job.base.hash, number, call),
    common,
    scheduled,
    precompiles,
    rollup,
    prestate: job.prestate,
    gasCap: job.gasCap,
    deadline: job.deadline,
    timeoutMs: job.timeoutMs,
  });
}

parentPort!.postMessage('ready');
parentPort!.on('message', ({ id, job }: { id: number; job: SimulationJob }) => {
  run(job).then(
    (result) => parentPort!.postMessage({ id, result } satisfies SimulationReply),
    (error: unknown) => {
      // An upstream read cut off by the deadline is the time limit, whichever timer fired first.
      // (an upstream failure: a ServerError -32000, or a fetch abort; an answer's own error stands)
      const upstreamFailure = !(error instanceof JsonRpcError) || error.rpcCode === -32000;
      const late = Date.now() >= job.deadline && upstreamFailure;
      const rpcCode = late ? -32016 : error instanceof JsonRpcError ? error.rpcCode : -32603;
      const message = late
        ? `eth_simulateV1: execution took longer than the ${job.timeoutMs} ms limit (--call-timeout-ms)`
        : error instanceof Error
          ? error.message
          : String(error);
      parentPort!.postMessage({
        id,
        error: { rpcCode, message, data: error instanceof JsonRpcError ? error.data : undefined },
      } satisfies SimulationReply);
    },
  );
});
