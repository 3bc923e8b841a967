import type { Observable } from 'rxjs';
import type { z } from 'zod';
import type { RulesSpec } from '../simulate/chain-rules.ts';
import type { SimulationPool } from '../simulate/pool.ts';
import { parseParam } from '../schemas/issue.ts';
import type { ViewState } from '../view/state.ts';
import type { TransactionFormatter } from './format.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { NodeHead } from './node-head.ts';

/**
 * One JSON-RPC method the gateway answers itself: one file under `methods/` exporting one
 * `defineMethod(...)`, plus one line in `registry.ts`. A method not in the registry is forwarded to
 * the upstream unchanged.
 *
 * Its params are declared once, as a zod schema of the whole params tuple (the pieces are in
 * params.ts): the gateway parses with it, a bad value is -32602 naming the field
 * (src/schemas/issue.ts), and the handler gets the parsed tuple, typed from the schema, with the
 * params as received beside it (what goes upstream is those, unchanged, unless a method says otherwise).
 *
 * @example
 * export const eth_getBlockTransactionCountByNumber = defineMethod({
 *   name: 'eth_getBlockTransactionCountByNumber',
 *   params: z.tuple([required('a block number or tag', blockParam)]).rest(z.unknown()),
 *   handler: ([block], ctx) => ...,
 * });
 */
export interface MethodContext {
  /** The view as of now (read once per call for a consistent answer). */
  readonly view: () => ViewState;
  /** Every new view state (for methods that wait for something to appear in the view). */
  readonly states$: Observable<ViewState>;
  readonly upstream: Upstream;
  /** The node's head as the gateway follows it (pending reads are held against it); absent: asked per read. */
  readonly nodeHead?: NodeHead | undefined;
  readonly formatter: TransactionFormatter;
  readonly limits: { readonly maxLogsRange: number };
  /** Sends this call to the upstream, unchanged or with other params. */
  forward(params?: readonly unknown[]): Promise<unknown>;
  /** The gas cap, time limit and simulation threads: set for methods declared `executes`. */
  readonly execution?: ExecutionServices;
  /** This WebSocket connection's subscriptions (set for WebSocket calls only). */
  readonly subscriptions?: ConnectionSubscriptions;
}

/** eth_subscribe / eth_unsubscribe on one WebSocket connection (subscriptions/hub.ts). */
export interface ConnectionSubscriptions {
  /** `[kind, ...options]`, parsed by the kind's own schema; answers the subscription id. */
  subscribe(params: readonly unknown[]): string;
  unsubscribe(id: string): boolean;
}

/** A method as the gateway calls it: the params as received (a list). */
export type Method = (params: readonly unknown[], ctx: MethodContext) => unknown;

/** A params schema: the whole params list in, the parsed tuple out. */
export type ParamsSchema = z.ZodType<readonly unknown[], unknown>;

/** A handler: the parsed params, the context, and the params as received (to forward unchanged). */
export type Handler<Params> = (params: Params, ctx: MethodContext, given: readonly unknown[]) => unknown;

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
  /** The params tuple's schema: the gateway parses with it (issues answer -32602 naming the field). */
  readonly params: ParamsSchema;
  /** The handler behind its params schema: takes the params as received. */
  readonly call: Method;
  /** Where it can be called; `['ws']` for subscriptions. */
  readonly transports: readonly Transport[];
  /** `forbidden`: refused with 403/-32001 in public mode, as Base's public endpoints do. */
  readonly public: 'allowed' | 'forbidden';
  /** Runs EVM code: served only when the gateway is given execution services (else forwarded). */
  readonly executes: boolean;
}

export interface MethodDefinition<Schema extends ParamsSchema> {
  readonly name: string;
  readonly params: Schema;
  readonly handler: Handler<z.output<Schema>>;
  /** Default both HTTP and WebSocket. */
  readonly transports?: readonly Transport[];
  /** Default `allowed`. */
  readonly public?: 'allowed' | 'forbidden';
  /** Default false. */
  readonly executes?: boolean;
}

/** Declares one method (the only export of its file under `methods/`). */
export function defineMethod<Schema extends ParamsSchema>(definition: MethodDefinition<Schema>): MethodSpec {
  const { handler, params: schema } = definition;
  const parsedByText = new Map<string, z.output<Schema>>();
  /**
   * The parsed params: params made only of strings, numbers, booleans and nulls (`['pending',
   * false]`, a hash, an address and a tag) are parsed once and the parse kept, so a read repeated
   * by many clients runs no schema (the parse of the same primitives is always the same, and
   * handlers take it read-only); anything else is parsed every call.
   */
  const parse = (params: readonly unknown[]): z.output<Schema> => {
    const text = primitivesKey(params);
    if (text === undefined) return parseParam(schema, params, 'params');
    let parsed = parsedByText.get(text);
    if (parsed === undefined) {
      parsed = parseParam(schema, params, 'params');
      if (parsedByText.size >= keptParses) parsedByText.clear();
      parsedByText.set(text, parsed);
    }
    return parsed;
  };
  return {
    name: definition.name,
    params: schema,
    call: async (params, ctx) => handler(parse(params), ctx, params),
    transports: definition.transports ?? ['http', 'ws'],
    public: definition.public ?? 'allowed',
    executes: definition.executes ?? false,
  };
}

/** Parses kept per method (then the memo starts over): the few reads clients repeat, not every address asked. */
const keptParses = 256;

/** A key naming a params list of at most four primitives exactly (type and value), or undefined for anything else. */
function primitivesKey(params: readonly unknown[]): string | undefined {
  if (params.length > 4) return undefined;
  let key = '';
  for (const value of params) {
    const type = typeof value;
    if (value !== null && type !== 'string' && type !== 'number' && type !== 'boolean') return undefined;
    if (type === 'string' && (value as string).includes('\u0000')) return undefined; // the separator: no two lists share a key
    key += `${type === 'object' ? 'n' : type[0]}${String(value)}\u0000`;
  }
  return key;
}
