import { JsonRpcError } from '../../errors.ts';
import { layerOverrides, stateOverridesParam } from '../../evm/overrides.ts';
import type { Method } from '../method.ts';
import { blockParam, objectParam, requireParam } from '../params.ts';
import { blockForUpstream, deadlineUpstream, pendingTarget, type ExecutionLimits } from './pending-execution.ts';

/** execution-apis: at most 256 simulated blocks per request. */
const MAX_BLOCKS = 256;

/**
 * eth_simulateV1 `[payload, block]`. With `pending`, the upstream simulates at the canonical block
 * under the pending blocks, with the pre-confirmed diff laid under the first block's
 * `stateOverrides` (so the simulated blocks follow the pre-confirmed state, as on Base's node).
 * The simulation itself is the upstream's (op-geth and op-reth serve eth_simulateV1); the gateway
 * checks the payload's shape and the block limit, and bounds the time.
 */
export function ethSimulateV1(limits: ExecutionLimits): Method {
  return async (params, ctx) => {
    const payload = objectParam(requireParam(params, 0, 'a simulation payload'), 'params[0]', 'a simulation payload object {blockStateCalls, ...}');
    const calls = payload.blockStateCalls;
    if (!Array.isArray(calls)) throw new JsonRpcError(-32602, `params[0].blockStateCalls: expected an array of block state calls, got ${JSON.stringify(calls) ?? 'nothing'}`);
    if (calls.length > MAX_BLOCKS) throw new JsonRpcError(-38026, `params[0].blockStateCalls: ${calls.length} blocks exceed the limit of ${MAX_BLOCKS}`);
    calls.forEach((entry, i) => objectParam(entry, `params[0].blockStateCalls[${i}]`, 'a block state call object'));
    const first = calls[0] as Record<string, unknown> | undefined;
    const userOverrides = stateOverridesParam(first?.stateOverrides, 'params[0].blockStateCalls[0].stateOverrides');
    const block = blockParam(params[1], 'params[1]', 'latest');
    const upstream = deadlineUpstream(ctx.upstream, 'eth_simulateV1', limits.timeoutMs);
    const target = pendingTarget(ctx.view(), { block, overrides: userOverrides });
    if (!target) {
      return upstream.call('eth_simulateV1', [payload, blockForUpstream(block, params[1]), ...params.slice(2)]);
    }
    const layered = [{ ...(first ?? {}), stateOverrides: layerOverrides(target.overrides, {}) }, ...calls.slice(1)];
    return upstream.call('eth_simulateV1', [{ ...payload, blockStateCalls: layered }, target.block, ...params.slice(2)]);
  };
}
