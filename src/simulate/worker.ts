import { parentPort } from 'node:worker_threads';
import { JsonRpcError } from '../errors.ts';
import type { Hex } from 'viem';
import type { RollupConfig } from '../op/rollup-config.ts';
import type { CallRpc } from '../jsonrpc/protocol.ts';
import { createUpstream, publicUpstreamLabel } from '../jsonrpc/upstream.ts';
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

/** Base blocks' L1-info deposits by hash (the last 64 bases). */
const l1InfoTxs = new Map<string, Promise<Hex | null>>();

/** An OP Stack chain with Jovian: the base block's first transaction, which a simulated block's DA footprint reads. */
function l1InfoTxOf(job: SimulationJob, rollup: RollupConfig | undefined, call: CallRpc): Promise<Hex | null> {
  if (rollup?.jovian_time === undefined || rollup.jovian_time === null) return Promise.resolve(null);
  let held = l1InfoTxs.get(job.base.hash);
  if (!held) {
    // A node without the method (or a failed read) leaves the footprint 0, not the simulation failed; that is not kept.
    held = (call('eth_getRawTransactionByBlockHashAndIndex', [job.base.hash, '0x0']) as Promise<Hex | null>).catch(() => null);
    l1InfoTxs.set(job.base.hash, held);
    void held.then((tx) => tx ?? l1InfoTxs.delete(job.base.hash));
    if (l1InfoTxs.size > 64) l1InfoTxs.delete(l1InfoTxs.keys().next().value!);
  }
  return held;
}

async function run(job: SimulationJob): Promise<unknown> {
  const { common, scheduled, precompiles, rollup } = await rulesFor(job.rules);
  const call = (method: string, params: readonly unknown[]) =>
    createUpstream(job.upstreamUrl, { timeoutMs: Math.max(1, job.deadline - Date.now()), label: publicUpstreamLabel }).call(method, params);
  const l1InfoTx = await l1InfoTxOf(job, rollup, call);
  return simulate(job.payload, {
    base: l1InfoTx ? { ...job.base, l1InfoTx } : job.base,
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
