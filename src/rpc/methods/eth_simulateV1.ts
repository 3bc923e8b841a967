import { z } from 'zod';
import { ServerError, TooManyBlocksError } from '../../errors.ts';
import type { IssueParams } from '../../schemas/issue.ts';
import { MAX_SIMULATED_BLOCKS, type SimulationBase } from '../../simulate/simulate-blocks.ts';
import { simulatePayloadSchema } from '../../simulate/payload.ts';
import { defineMethod } from '../method.ts';
import { isPending, latest, orDefault, stateBlockParam } from '../params.ts';
import { pendingView } from '../pending.ts';
import { blockForUpstream, deadlineUpstream, pendingTarget } from '../pending-execution.ts';

/**
 * eth_simulateV1 `[payload, block]`, executed by flashlog's own engine (src/simulate) on a
 * worker thread, on the named block's state read from the upstream. With `pending` (pending.ts), on a
 * blocks source the simulation starts on the pending block itself (by hash), so the first simulated
 * block is the one after it, as a node simulates on `latest`; on a flashblocks source it starts at
 * the canonical block under the pending blocks with the pre-confirmed state diff laid over it (what
 * Base's node does), so the first simulated block is the one after that canonical block.
 */
const missingPayload = 'missing value for required argument 0 (params[0]): expected a simulation payload {blockStateCalls, ...}';

/** `[payload, block?]`: the payload as execution-apis defines it (src/simulate/payload.ts), block `latest` by default. */
const params = z
  .tuple([
    z
      .unknown()
      .refine((payload) => payload !== undefined && payload !== null, {
        error: missingPayload,
        params: { whole: true } satisfies IssueParams,
        abort: true,
      })
      .pipe(simulatePayloadSchema),
    orDefault(stateBlockParam, latest),
  ])
  .rest(z.unknown());

export const eth_simulateV1 = defineMethod({
  name: 'eth_simulateV1',
  executes: true,
  params,
  handler: async ([payload, block], ctx, given) => {
    const { limits, simulation: deps } = ctx.execution!;
    if (!deps) throw new ServerError('eth_simulateV1: no simulation threads');
    const started = Date.now();
    if (BigInt(payload.blockStateCalls.length) > MAX_SIMULATED_BLOCKS) {
      throw new TooManyBlocksError(
        `too many blocks: params[0].blockStateCalls has ${payload.blockStateCalls.length}, the limit is ${MAX_SIMULATED_BLOCKS}`,
      );
    }
    const upstream = deadlineUpstream(ctx.upstream, 'eth_simulateV1', limits.timeoutMs);
    const target = isPending(block) ? pendingTarget(await pendingView({ ...ctx, upstream }), { block, overrides: {} }, false) : undefined;
    const byHash = block.kind === 'hash' ? block.hash : typeof target?.block === 'object' ? target.block.blockHash : undefined;
    const header = (
      byHash !== undefined
        ? await upstream.call('eth_getBlockByHash', [byHash, false])
        : await upstream.call('eth_getBlockByNumber', [target ? target.block : blockForUpstream(block, given[1]), false])
    ) as Record<string, string> | null;
    if (!header) throw new ServerError(byHash !== undefined ? `header not found: no block ${byHash}` : 'header not found');
    if (block.kind === 'hash' && block.requireCanonical) {
      const canonical = (await upstream.call('eth_getBlockByNumber', [header.number, false])) as { hash?: string } | null;
      if (canonical?.hash?.toLowerCase() !== block.hash) throw new ServerError(`hash ${block.hash} is not currently canonical`);
    }
    const base: SimulationBase = {
      number: BigInt(header.number!),
      hash: header.hash as `0x${string}`,
      timestamp: BigInt(header.timestamp!),
      gasLimit: BigInt(header.gasLimit!),
      gasUsed: BigInt(header.gasUsed!),
      baseFeePerGas: BigInt(header.baseFeePerGas ?? 0),
      excessBlobGas: BigInt(header.excessBlobGas ?? 0),
      blobGasUsed: BigInt(header.blobGasUsed ?? 0),
      miner: (header.miner ?? `0x${'00'.repeat(20)}`) as `0x${string}`,
      difficulty: BigInt(header.difficulty ?? 0),
      extraData: (header.extraData ?? '0x') as `0x${string}`,
    };
    return deps.pool.run({
      payload,
      base,
      prestate: target?.overrides,
      rules: await deps.rules(ctx.upstream),
      gasCap: limits.gasCap,
      upstreamUrl: ctx.upstream.url,
      deadline: started + limits.timeoutMs,
      timeoutMs: limits.timeoutMs,
    });
  },
});
