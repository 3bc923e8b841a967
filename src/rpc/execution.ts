import type { ExecutionServices, Method, MethodSpec } from './method.ts';
import { registry } from './registry.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { RulesSpec } from '../simulate/chain-rules.ts';
import { createSimulationPool } from '../simulate/pool.ts';

/**
 * The methods that execute EVM code on request: eth_call, eth_estimateGas and eth_simulateV1.
 * With `pending` they run on the canonical base block with the pre-confirmed state diff laid under
 * the caller's overrides (`pendingOverrides` + `layerOverrides`); other blocks go to the upstream.
 * Each is declared `executes` in its file under `methods/`; this table binds them to the gas cap,
 * the time limit and the simulation threads, and is what the gateway is given.
 */
export interface ExecutionOptions {
  /** Most gas one call (or one simulated block) may use. */
  readonly gasCap: bigint;
  /** Longest one request may execute before it is answered with an error. */
  readonly timeoutMs: number;
  /** eth_simulateV1's chain rules: a geth genesis file, else this hardfork for every block. */
  readonly simulateGenesis?: string | undefined;
  readonly simulateHardfork?: string | undefined;
  /** Threads eth_simulateV1 runs on. */
  readonly simulateWorkers?: number | undefined;
}

export interface ExecutionMethods {
  readonly methods: Readonly<Record<string, Method>>;
  close(): Promise<void>;
}

export function createExecutionMethods(options: ExecutionOptions): ExecutionMethods {
  const limits = { gasCap: options.gasCap, timeoutMs: options.timeoutMs };
  const pool = createSimulationPool({ workers: options.simulateWorkers ?? 1 });
  const services: ExecutionServices = { limits, simulation: { rules: chainRules(options), pool } };
  const methods = Object.fromEntries(registry.filter((spec) => spec.executes).map((spec) => [spec.name, bindExecution(spec, services)]));
  return {
    methods,
    close: () => pool.close(),
  };
}

/** An executing method with its services bound: what the gateway calls. */
export function bindExecution(spec: MethodSpec, services: ExecutionServices): Method {
  return (params, ctx) => spec.call(params, { ...ctx, execution: services });
}

/**
 * The chain rules for simulations, resolved on first use and kept: from the genesis file when one
 * is set, else the fixed hardfork under the upstream's chain ID. A failure is not kept.
 */
function chainRules(options: ExecutionOptions): (upstream: Upstream) => Promise<RulesSpec> {
  let rules: Promise<RulesSpec> | undefined;
  return (upstream) => {
    rules ??= (async () => {
      if (options.simulateGenesis) return { genesis: options.simulateGenesis };
      return { chainId: BigInt((await upstream.call('eth_chainId', [])) as string), hardfork: options.simulateHardfork ?? 'prague' };
    })();
    rules.catch(() => {
      rules = undefined;
    });
    return rules;
  };
}
