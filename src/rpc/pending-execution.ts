import { z } from 'zod';
import { callObjectSchema, type CallObject } from '../schemas/call.ts';
import { ServerError } from '../errors.ts';
import { callerOverridesSchema, layerOverrides, type StateOverrides } from '../schemas/state-overrides.ts';
import type { ViewState } from '../view/state.ts';
import type { ExecutionLimits, MethodContext } from './method.ts';
import { createUpstream, publicUpstreamLabel, type Upstream } from '../jsonrpc/upstream.ts';
import { isPending, latest, orDefault, required, stateBlockParam, type StateBlockParam } from './params.ts';
import { pendingStateBase, pendingView, type BlockHashParam } from './pending.ts';

/**
 * What eth_call, eth_estimateGas and eth_simulateV1 share with `pending` (pending.ts): on a blocks
 * source the call runs at the pending block itself, by hash; on a flashblocks source at the
 * canonical block under the pending blocks, with the pre-confirmed state diff laid under the
 * caller's state overrides (what Base's own node does). The upstream node executes it: state
 * overrides are standard on op-geth and op-reth (and on the devnet).
 */

export type { CallObject };

/** `[tx, block?, stateOverrides?, ...]` of eth_call and eth_estimateGas: block `latest` by default. */
export const callParams = z
  .tuple([required('a transaction call object', callObjectSchema), orDefault(stateBlockParam, latest), callerOverridesSchema])
  .rest(z.unknown());

/** The parsed `[tx, block, stateOverrides?]` of eth_call / eth_estimateGas. */
export interface CallRequest {
  readonly call: CallObject;
  readonly block: StateBlockParam;
  readonly overrides: StateOverrides;
}

export const withGas = (call: CallObject, gas: bigint): CallObject => ({ ...call, gas: `0x${gas.toString(16)}` });

/** Lowers `gas` to the cap (as op-geth's RPC gas cap does); an absent `gas` stays absent. */
export function capGas(call: CallObject, cap: bigint): CallObject {
  return call.gas !== undefined && BigInt(call.gas) > cap ? withGas(call, cap) : call;
}

/** Where a pending call executes, or `undefined` when the block is not `pending` / nothing is pre-confirmed. */
export interface PendingTarget {
  /** The pending block by hash (blocks source), or the canonical block under the pending blocks (hex, flashblocks source). */
  readonly block: string | BlockHashParam;
  /** The pending diff (none on a blocks source) with the caller's overrides on top. */
  readonly overrides: StateOverrides;
  /** Gas limit of the newest pre-confirmed block. */
  readonly blockGasLimit: bigint;
}

/**
 * Base's precompiles: Prague's 0x01-0x11 and RIP-7212's P256VERIFY at 0x100. geth and op-geth
 * remove the precompile at any address a state override names.
 */
const PRECOMPILES = new Set([...Array.from({ length: 0x11 }, (_, i) => i + 1), 0x100].map((n) => `0x${n.toString(16).padStart(40, '0')}`));

/**
 * The pending layer without the precompile addresses the caller does not override itself: as
 * overrides they would remove the precompile. One the caller names loses its precompile anyway,
 * so it keeps its pending state under the caller's fields.
 */
function withoutPrecompiles(overrides: StateOverrides, caller: StateOverrides): StateOverrides {
  const dropped = (address: string) => PRECOMPILES.has(address) && !(address in caller);
  if (!Object.keys(overrides).some(dropped)) return overrides;
  return Object.fromEntries(Object.entries(overrides).filter(([address]) => !dropped(address)));
}

/**
 * With `forUpstream` the pending layer leaves out precompile addresses the caller does not
 * override (a pre-confirmed payment to a precompile would otherwise disable it for the call; its
 * balance is then the canonical one); flashlog's own engine keeps the whole diff and the precompiles.
 */
export function pendingTarget(
  state: ViewState,
  request: Pick<CallRequest, 'block' | 'overrides'>,
  forUpstream = true,
): PendingTarget | undefined {
  if (!isPending(request.block)) return undefined;
  const base = pendingStateBase(state);
  if (!base) return undefined;
  const pending = forUpstream ? withoutPrecompiles(base.overrides, request.overrides) : base.overrides;
  return {
    block: base.at,
    overrides: layerOverrides(pending, request.overrides),
    blockGasLimit: BigInt(base.block.header.gasLimit),
  };
}

/**
 * The upstream for one request with what is left of its time: every call it makes shares one
 * deadline, so no request outlives `timeoutMs` however many calls it takes.
 */
export function deadlineUpstream(upstream: Upstream, method: string, timeoutMs: number): Upstream {
  const deadline = Date.now() + timeoutMs;
  return {
    url: upstream.url,
    call(name, params) {
      const left = deadline - Date.now();
      if (left <= 0)
        return Promise.reject(new ServerError(`${method}: execution took longer than the ${timeoutMs} ms limit (--call-timeout-ms)`));
      return createUpstream(upstream.url, { timeoutMs: left, label: publicUpstreamLabel })
        .call(name, params)
        .catch((error: unknown) => {
          if (Date.now() >= deadline && error instanceof ServerError && error.retryable) {
            throw new ServerError(`${method}: execution took longer than the ${timeoutMs} ms limit (--call-timeout-ms)`, { cause: error });
          }
          throw error;
        });
    },
  };
}

/** The block to send upstream when the call does not run on pending state: `pending` is `latest`. */
export function blockForUpstream(block: StateBlockParam, given: unknown): unknown {
  if (block.kind === 'number') return `0x${block.number.toString(16)}`;
  if (block.kind === 'tag') return block.tag === 'pending' ? 'latest' : block.tag;
  return given;
}

/**
 * What eth_call and eth_estimateGas start from: the parsed `[tx, block, stateOverrides?]`, the
 * call with its gas capped, the upstream bound to the request's deadline, where a pending call
 * runs (undefined when it does not), and the call as it goes upstream otherwise.
 */
export async function prepareCall(
  method: string,
  [tx, block, overrides]: z.output<typeof callParams>,
  given: readonly unknown[],
  ctx: MethodContext,
  limits: ExecutionLimits,
) {
  const request: CallRequest = { call: tx, block, overrides };
  const upstream = deadlineUpstream(ctx.upstream, method, limits.timeoutMs);
  const call = capGas(request.call, limits.gasCap);
  return {
    call,
    upstream,
    target: isPending(request.block) ? pendingTarget(await pendingView({ ...ctx, upstream }), request) : undefined,
    forward: () => upstream.call(method, [call, blockForUpstream(request.block, given[1]), ...given.slice(2)]),
  };
}
