import { defineMethod } from '../method.ts';
import { callParams, prepareCall } from '../pending-execution.ts';

/**
 * eth_call `[tx, block, stateOverrides?, blockOverrides?]`. With `pending` (pending.ts): at the
 * pending block by hash on a blocks source; on a flashblocks source at the canonical block under
 * the pending blocks, with the pre-confirmed diff under the caller's overrides; without
 * pre-confirmed blocks, as `latest`. Other blocks: the upstream at that block. Always with the gas
 * cap and the time limit; a revert passes through as the node answers it (code 3, data).
 */
export const eth_call = defineMethod({
  name: 'eth_call',
  executes: true,
  params: callParams,
  handler: async (params, ctx, given) => {
    const { call, upstream, target, forward } = await prepareCall('eth_call', params, given, ctx, ctx.execution!.limits);
    if (target) return upstream.call('eth_call', [call, target.block, target.overrides, ...given.slice(3)]);
    return forward();
  },
});
