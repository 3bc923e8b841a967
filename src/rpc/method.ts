import type { Observable } from 'rxjs';
import type { z } from 'zod';
import type { RulesSpec } from '../simulate/chain-rules.ts';
import type { SimulationPool } from '../simulate/pool.ts';
import { parseParam } from '../schemas/issue.ts';
import type { ViewState } from '../view/state.ts';
import type { TransactionFormatter } from './format.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';

/**
 * One JSON-RPC method the gateway answers itself: one file under `methods/` exporting one
 * `defineMethod(...)`, plus one line in `registry.ts`. A method not in the registry is forwarded to
 * the upstream unchanged.
 *
 * @example
 * export const eth_getBlockTransactionCountByNumber = defineMethod({
 *   name: 'eth_getBlockTransactionCountByNumber',
 *   handler: (params, ctx) => ...,
 * });
 */
export interface MethodContext {
  /** The view as of now (read once per call for a consistent answer). */
  readonly view: () => ViewState;
  /** Every new view state (for methods that wait for something to appear in the view). */
  readonly states$: Observable<ViewState>;
  readonly upstream: Upstream;
  readonly formatter: TransactionFormatter;
  readonly limits: { readonly maxLogsRange: number };
  /** Sends this call to the upstream, unchanged or with other params. */
  forward(params?: readonly unknown[]): Promise<unknown>;
  /** The gas cap, time limit and simulation threads: set for methods declared `executes`. */
  readonly execution?: ExecutionServices;
  /** This WebSocket connection's subscriptions (set for WebSocket calls only). */
  readonly subscriptions?: (params: readonly unknown[]) => unknown;
}

export type Method = (params: readonly unknown[], ctx: MethodContext) => unknown;

export type Transport = 'http' | 'ws';

export interface ExecutionLimits {
  /** Most gas one call may use: a larger `gas` is lowered to it. */
  readonly gasCap: bigint;
  /** Longest one request may take, all upstream calls included. */
  readonly timeoutMs: number;
}

export interface SimulationDeps {
  /** The chain's rules (fixed hardfork or a genesis schedule), resolved once. */
  rules(upstream: Upstream): Promise<RulesSpec>;
  /** The threads simulations run on (each keeps a cache of canonical state reads). */
  readonly pool: SimulationPool;
}

/** What the executing methods (eth_call, eth_estimateGas, eth_simulateV1) are given: see execution.ts. */
export interface ExecutionServices {
  readonly limits: ExecutionLimits;
  readonly simulation?: SimulationDeps;
}

/** A method as the registry holds it. */
export interface MethodSpec {
  readonly name: string;
  /**
   * The params array's schema, when the method declares one: the gateway parses with it (issues
   * answer -32602 naming the field, src/schemas/issue.ts) and gives the handler the parsed value.
   * Without one the handler gets the raw array and validates with params.ts.
   */
  readonly params?: z.ZodType<readonly unknown[]>;
  readonly handler: Method;
  /** Where it can be called; `['ws']` for subscriptions. */
  readonly transports: readonly Transport[];
  /** `forbidden`: refused with 403/-32001 in public mode, as Base's public endpoints do. */
  readonly public: 'allowed' | 'forbidden';
  /** Runs EVM code: served only when the gateway is given execution services (else forwarded). */
  readonly executes: boolean;
}

export interface MethodDefinition {
  readonly name: string;
  readonly params?: z.ZodType<readonly unknown[]>;
  readonly handler: Method;
  /** Default both HTTP and WebSocket. */
  readonly transports?: readonly Transport[];
  /** Default `allowed`. */
  readonly public?: 'allowed' | 'forbidden';
  /** Default false. */
  readonly executes?: boolean;
}

/** The spec's handler, behind its params schema when it declares one. */
export function callable(spec: MethodSpec): Method {
  const schema = spec.params;
  if (!schema) return spec.handler;
  return (params, ctx) => spec.handler(parseParam(schema, params, 'params'), ctx);
}

/** Declares one method (the only export of its file under `methods/`). */
export function defineMethod(definition: MethodDefinition): MethodSpec {
  return {
    ...definition,
    transports: definition.transports ?? ['http', 'ws'],
    public: definition.public ?? 'allowed',
    executes: definition.executes ?? false,
  };
}
