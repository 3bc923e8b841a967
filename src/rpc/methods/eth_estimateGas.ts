import { numberToHex } from 'viem';
import { JsonRpcError, ServerError } from '../../errors.ts';
import { defineMethod } from '../method.ts';
import type { Upstream } from '../../jsonrpc/upstream.ts';
import { callParams, prepareCall, withGas, type CallObject, type PendingTarget } from '../pending-execution.ts';

/** The least gas any transaction takes (intrinsic cost of a plain transfer). */
const TRANSFER_GAS = 21_000n;
/** Probes run side by side per round of the search. */
const PROBES = 3;

/**
 * eth_estimateGas `[tx, block?, stateOverrides?]`, block `latest` by default. With `pending` the
 * gateway searches itself, with eth_call on pending state: the smallest gas limit under which the
 * transaction succeeds (0x5208 for a plain transfer). Other blocks go to the upstream.
 */
export const eth_estimateGas = defineMethod({
  name: 'eth_estimateGas',
  executes: true,
  params: callParams,
  handler: async (params, ctx, given) => {
    const limits = ctx.execution!.limits;
    const { call, upstream, target, forward } = await prepareCall('eth_estimateGas', params, given, ctx, limits);
    if (!target) return forward();
    const ceiling = min(call.gas === undefined ? target.blockGasLimit : BigInt(call.gas), limits.gasCap);
    return numberToHex(await smallestGas(upstream, call, target, ceiling));
  },
});

type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: JsonRpcError };

/**
 * Runs the call at the ceiling first (a revert there is the answer, with its data), then an
 * exponential climb from 21,000 to bracket the need, then narrows the bracket with PROBES calls
 * side by side per round down to one gas. Assumes, as every node's estimator does, that a
 * transaction that succeeds with some gas succeeds with more.
 */
async function smallestGas(upstream: Upstream, call: CallObject, target: PendingTarget, ceiling: bigint): Promise<bigint> {
  const probe = async (gas: bigint): Promise<Outcome> => {
    try {
      await upstream.call('eth_call', [withGas(call, gas), target.block, target.overrides]);
      return { ok: true };
    } catch (error) {
      // A transport failure or the time limit is the answer; an execution failure is information.
      if (!(error instanceof JsonRpcError) || (error instanceof ServerError && error.retryable)) throw error;
      return { ok: false, error };
    }
  };

  const atCeiling = await probe(ceiling);
  if (!atCeiling.ok) {
    const { error } = atCeiling;
    if (error.rpcCode === 3 || /revert/i.test(error.message)) throw error;
    if (/out of gas|gas required exceeds|requires at least|intrinsic gas/i.test(error.message)) {
      throw new ServerError(`gas required exceeds allowance (${ceiling})`);
    }
    throw error;
  }
  if (ceiling <= TRANSFER_GAS) return ceiling;

  // Bracket: `low` fails (or is below the intrinsic floor), `high` succeeds.
  let low = TRANSFER_GAS - 1n;
  let high = ceiling;
  for (let gas = TRANSFER_GAS; gas < high; gas *= 2n) {
    if ((await probe(gas)).ok) {
      high = gas;
      break;
    }
    low = gas;
  }
  while (high - low > 1n) {
    const step = (high - low) / BigInt(PROBES + 1) || 1n;
    const points: bigint[] = [];
    for (let gas = low + step; gas < high && points.length < PROBES; gas += step) points.push(gas);
    const outcomes = await Promise.all(points.map(probe));
    const firstOk = outcomes.findIndex((outcome) => outcome.ok);
    if (firstOk === -1) {
      low = points[points.length - 1]!;
    } else {
      high = points[firstOk]!;
      if (firstOk > 0) low = points[firstOk - 1]!;
    }
  }
  return high;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
