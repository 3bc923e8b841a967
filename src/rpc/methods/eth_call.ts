import type { Method } from '../method.ts';
import { callRequest, capGas, deadlineUpstream, pendingTarget, type ExecutionLimits } from './pending-execution.ts';

/**
 * eth_call `[tx, block, stateOverrides?, blockOverrides?]`. With `pending`: at the canonical block
 * under the pending blocks, with the pre-confirmed diff under the caller's overrides; without
 * pre-confirmed blocks, as `latest`. Other blocks: the upstream at that block. Always with the gas
 * cap and the time limit; a revert passes through as the node answers it (code 3, data).
 */
export function ethCall(limits: ExecutionLimits): Method {
  return async (params, ctx) => {
    const request = callRequest(params, 'latest');
    const upstream = deadlineUpstream(ctx.upstream, 'eth_call', limits.timeoutMs);
    const call = capGas(request.call, limits.gasCap);
    const target = pendingTarget(ctx.view(), request);
    if (target) return upstream.call('eth_call', [call, target.block, target.overrides, ...params.slice(3)]);
    const block = request.block.kind === 'tag' && request.block.tag === 'pending' ? 'latest' : params[1] ?? 'latest';
    return upstream.call('eth_call', [call, block, ...params.slice(2)]);
  };
}
