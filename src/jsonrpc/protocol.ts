import { InvalidRequestError, JsonRpcError, ParseError, errorMessage, InternalError } from '../errors.ts';

/**
 * JSON-RPC 2.0 framing (https://www.jsonrpc.org/specification): single calls and batches, `id`
 * echoed, notifications (no `id`) answered with nothing, errors as {code, message, data?}.
 */
export type RpcId = string | number | null;

export interface RpcCall {
  readonly id: RpcId | undefined;
  readonly method: string;
  readonly params: unknown;
}

export type Dispatch = (call: RpcCall) => Promise<unknown>;

/** A JSON-RPC client reduced to one call: method and params in, the result out (errors thrown). */
export type CallRpc = (method: string, params: readonly unknown[]) => Promise<unknown>;

export interface ProtocolLimits {
  readonly maxBatch: number;
  /** How the framing's own errors read (default `flashlog`). */
  readonly wording?: Wording | undefined;
}

/**
 * `flashlog` says what was wrong and where (`invalid request[1]: jsonrpc: expected "2.0", got
 * "1.0"`). `jsonrpsee` answers as Base's prover host does (jsonrpsee's fixed texts "Parse error",
 * "Invalid request", "Internal error"; any string is a method name and any JSON value params, as
 * jsonrpsee's `Request` reads them), so a client of Base's host reads the same wire. From
 * paritytech/jsonrpsee `types/src/error.rs` (c09bd57b03369ef23f02cad07b41c1996509566d: the
 * `*_MSG` texts) and `types/src/request.rs` (824c36914860f46c7a434d2fef550a3454f08864: `params`
 * an optional `RawValue`, `method` any string).
 */
export type Wording = 'flashlog' | 'jsonrpsee';

/** The body of a response: a JSON text, or null when every call was a notification. */
export async function handleText(text: string, dispatch: Dispatch, limits: ProtocolLimits): Promise<string | null> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    const parseError =
      limits.wording === 'jsonrpsee' ? new ParseError('Parse error') : new ParseError(`parse error: ${errorMessage(error)}`);
    return JSON.stringify(errorResponse(null, parseError));
  }
  const response = await handleMessage(message, dispatch, limits);
  if (response === null) return null;
  return Array.isArray(response) ? `[${response.map(responseText).join(',')}]` : responseText(response);
}

/**
 * A result already serialized: a method that answers the same bytes for many calls (the pending
 * block of one view version) returns it, and the response is written around it without formatting
 * or stringifying the result again. `toJSON` keeps it right (if slower) for any other serializer.
 */
export interface RawResult {
  readonly [rawJson]: string;
  toJSON(): unknown;
}

const rawJson = Symbol('raw JSON');

/** Wraps a JSON text (the caller's promise: it is valid JSON) as a result written verbatim. */
export function rawResult(json: string): RawResult {
  return { [rawJson]: json, toJSON: () => JSON.parse(json) as unknown };
}

/** The JSON text of a raw result, or undefined for any other value. */
export function rawText(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && rawJson in value ? (value as RawResult)[rawJson] : undefined;
}

/** One response's text: a raw result is written between the envelope's parts as it is. */
function responseText(response: object): string {
  const { id, result } = response as { id?: RpcId; result?: unknown };
  const raw = rawText(result);
  return raw === undefined ? JSON.stringify(response) : `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"result":${raw}}`;
}

/**
 * The response to a parsed JSON-RPC message (one call or a batch): an object, an array, or null
 * when every call was a notification.
 */
export async function handleMessage(message: unknown, dispatch: Dispatch, limits: ProtocolLimits): Promise<object | null> {
  const wording = limits.wording ?? 'flashlog';
  if (deeperThan(message, MAX_DEPTH)) {
    return errorResponse(
      readableId(message),
      worded(new InvalidRequestError(`invalid request: JSON nested deeper than ${MAX_DEPTH} levels`), wording),
    );
  }
  const calls = parseMessage(message, limits);
  if (calls instanceof JsonRpcError) return errorResponse(readableId(message), worded(calls, wording));
  if (!Array.isArray(message)) {
    // One call (the common case): answered without the batch's list work.
    const call = calls[0]!;
    if (call instanceof JsonRpcError) return errorResponse(readableId(message), worded(call, wording));
    const response = await run(call, dispatch, wording);
    return call.id === undefined ? null : response;
  }
  const items = Array.isArray(message) ? message : [message];
  const responses = await Promise.all(
    calls.map(async (call, i) => {
      if (call instanceof JsonRpcError) return errorResponse(readableId(items[i]), worded(call, wording));
      const response = await run(call, dispatch, wording);
      return call.id === undefined ? null : response;
    }),
  );
  const answered = responses.filter((response) => response !== null);
  if (!Array.isArray(message)) return answered[0] ?? null;
  return answered.length ? answered : null;
}

/** A framing error in jsonrpsee's words (its code kept). */
function worded(error: JsonRpcError, wording: Wording): JsonRpcError {
  if (wording === 'flashlog') return error;
  return error instanceof InvalidRequestError ? new InvalidRequestError('Invalid request') : error;
}

/**
 * No JSON-RPC method takes values nested this deep; deeper input would only reach recursive code
 * (schema checks, JSON.stringify when forwarding) and overflow its stack.
 */
export const MAX_DEPTH = 64;

/** Whether a parsed JSON value nests arrays/objects deeper than `limit` (iterative: no recursion). */
export function deeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

/** The id of an invalid request when it is itself valid (a string or number), else null. */
export function readableId(value: unknown): RpcId {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** Splits a parsed message into calls (or per-call errors); one error for the whole message when it is not a call or batch. */
export function parseMessage(message: unknown, limits: ProtocolLimits): (RpcCall | JsonRpcError)[] | JsonRpcError {
  if (Array.isArray(message)) {
    if (message.length === 0) return new InvalidRequestError('invalid request: empty batch');
    if (message.length > limits.maxBatch) {
      return new InvalidRequestError(`invalid request: batch of ${message.length} calls exceeds the limit of ${limits.maxBatch}`);
    }
    return message.map((item, i) => parseCall(item, `[${i}]`, limits.wording ?? 'flashlog'));
  }
  const call = parseCall(message, '', limits.wording ?? 'flashlog');
  return call instanceof JsonRpcError ? call : [call];
}

function parseCall(value: unknown, where: string, wording: Wording): RpcCall | JsonRpcError {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new InvalidRequestError(
      `invalid request${where ? ` ${where}` : ''}: expected a JSON-RPC request object, got ${JSON.stringify(value)?.slice(0, 40)}`,
    );
  }
  const call = value as Record<string, unknown>;
  if (call.jsonrpc !== '2.0')
    return new InvalidRequestError(`invalid request${where}: jsonrpc: expected "2.0", got ${JSON.stringify(call.jsonrpc) ?? 'nothing'}`);
  if (typeof call.method !== 'string' || (call.method.length === 0 && wording === 'flashlog')) {
    return new InvalidRequestError(
      `invalid request${where}: method: expected a method name, got ${JSON.stringify(call.method) ?? 'nothing'}`,
    );
  }
  const id = call.id;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return new InvalidRequestError(`invalid request${where}: id: expected a string, number or null, got ${JSON.stringify(id)}`);
  }
  if (wording === 'flashlog' && call.params !== undefined && (typeof call.params !== 'object' || call.params === null)) {
    return new InvalidRequestError(`invalid request${where}: params: expected an array or object, got ${JSON.stringify(call.params)}`);
  }
  return { id: id as RpcId | undefined, method: call.method, params: call.params };
}

async function run(call: RpcCall, dispatch: Dispatch, wording: Wording): Promise<Record<string, unknown>> {
  try {
    const result = await dispatch(call);
    return { jsonrpc: '2.0', id: call.id ?? null, result: result === undefined ? null : result };
  } catch (error) {
    return errorResponse(call.id ?? null, error, wording);
  }
}

/** An error response; anything thrown that is not a JsonRpcError is -32603 (its message kept in flashlog's wording only). */
export function errorResponse(id: RpcId, error: unknown, wording: Wording = 'flashlog'): Record<string, unknown> {
  const rpcError =
    error instanceof JsonRpcError
      ? error
      : new InternalError(wording === 'jsonrpsee' ? 'Internal error' : `internal error: ${errorMessage(error)}`);
  return { jsonrpc: '2.0', id, error: rpcError.toJSON() };
}
