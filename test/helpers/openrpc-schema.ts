import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { sharedPath } from './shared.ts';

/**
 * Every JSON-RPC answer held against the result schema of its method in the execution-apis
 * OpenRPC definitions (`fixtures/execution-apis/openrpc/src/{eth,schemas}/*.yaml`, CC0; see its
 * SOURCE.md): minimal hex quantities (`uint` is `^0x(0|[1-9a-f][0-9a-f]*)$`), required fields,
 * types, the signature fields of each transaction type.
 *
 * What an OP Stack node answers beyond Ethereum's schemas, and so what is allowed here, following
 * op-geth (`internal/ethapi`, `core/types/gen_receipt_json.go`) and Base's millisecond fields:
 * - a deposit transaction (type 0x7e): `sourceHash`, `mint` (absent when zero), `isSystemTx`
 *   (only when true), `depositReceiptVersion`, and `v`, `r`, `s`, `gasPrice` all 0x0: added to the
 *   `TransactionSigned` choice as one more variant;
 * - a transaction of a block being built (flashblocks `pending`): `blockHash: null` and no
 *   `blockTimestamp`, as go-ethereum answers a pending transaction; with a block hash,
 *   `blockTimestamp` stays required;
 * - receipts (closed by `additionalProperties: false`): the L1 fee fields (`l1Fee`, `l1GasPrice`,
 *   `l1GasUsed`, `l1FeeScalar` a decimal string, `l1BaseFeeScalar`, `l1BlobBaseFee`,
 *   `l1BlobBaseFeeScalar`), Isthmus's `operatorFeeScalar` / `operatorFeeConstant`, Jovian's
 *   `daFootprintGasScalar`, and a deposit's `depositNonce` / `depositReceiptVersion`;
 * - logs (closed too): Base's `blockTimestampMs`.
 * Blocks and transactions are open objects in the schemas (Base's `timestampMs` and
 * `blockTimestampMs`, `totalDifficulty` pass as they are). Nothing else is relaxed: an unknown
 * field in a receipt or a log fails.
 */
const openrpcDir = (): string => sharedPath('fixtures/execution-apis/openrpc/src');

type Schema = Record<string, unknown>;
const uint = { $ref: '#/components/schemas/uint' };
const nullOr = (schema: Schema): Schema => ({ oneOf: [{ type: 'null' }, schema] });

/** OP Stack's fields (see the comment above), added to the execution-apis schemas. */
function opExtensions(schemas: Record<string, Schema>): void {
  schemas.DepositTransactionSigned = {
    title: 'OP Stack deposit transaction (op-geth)',
    type: 'object',
    required: ['type', 'sourceHash', 'from', 'gas', 'value', 'input', 'nonce', 'v', 'r', 's'],
    properties: {
      type: { type: 'string', pattern: '^0x7e$' },
      sourceHash: { $ref: '#/components/schemas/hash32' },
      from: { $ref: '#/components/schemas/address' },
      to: nullOr({ $ref: '#/components/schemas/address' }),
      mint: uint,
      value: uint,
      gas: uint,
      gasPrice: { const: '0x0' },
      isSystemTx: { const: true },
      input: { $ref: '#/components/schemas/bytes' },
      nonce: uint,
      depositReceiptVersion: uint,
      v: { const: '0x0' },
      r: { const: '0x0' },
      s: { const: '0x0' },
    },
  };
  // The variants are told apart by `type`: choose by it (if/then) rather than `oneOf`, the same
  // constraint, so that a violation names the fields of its own type, not those of every other type.
  const variants: [string, string][] = [
    ['0x0', 'TransactionLegacySigned'],
    ['0x1', 'Transaction2930Signed'],
    ['0x2', 'Transaction1559Signed'],
    ['0x3', 'Transaction4844Signed'],
    ['0x4', 'Transaction7702Signed'],
    ['0x7e', 'DepositTransactionSigned'],
  ];
  schemas.TransactionSigned = {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: variants.map(([type]) => type) } },
    allOf: variants.map(([type, name]) => ({
      if: { properties: { type: { const: type } }, required: ['type'] },
      then: { $ref: `#/components/schemas/${name}` },
    })),
  };

  // A transaction of a block being built: no block hash yet, so no block timestamp either.
  const context = (schemas.TransactionInfo!.allOf as Schema[])[0]!;
  const properties = context.properties as Record<string, Schema>;
  properties.blockHash = nullOr(properties.blockHash!);
  context.required = (context.required as string[]).filter((field) => field !== 'blockTimestamp');
  context.if = { properties: { blockHash: { type: 'string' } } };
  context.then = { required: ['blockTimestamp'] };

  const receipt = schemas.ReceiptInfo!.properties as Record<string, Schema>;
  for (const field of [
    'l1Fee',
    'l1GasPrice',
    'l1GasUsed',
    'l1BaseFeeScalar',
    'l1BlobBaseFee',
    'l1BlobBaseFeeScalar',
    'operatorFeeScalar',
    'operatorFeeConstant',
    'daFootprintGasScalar',
    'depositNonce',
    'depositReceiptVersion',
  ])
    receipt[field] = uint;
  receipt.l1FeeScalar = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' };
  (schemas.Log!.properties as Record<string, Schema>).blockTimestampMs = uint;

  // An empty list is both a list of hashes and a list of logs: `oneOf` would refuse `[]`.
  schemas.FilterResults = { ...schemas.FilterResults, anyOf: schemas.FilterResults!.oneOf, oneOf: undefined };

  // newHeads: a block's header, without the body (transactions, uncles) or its size.
  const block = schemas.Block!;
  schemas.NewHead = {
    ...block,
    title: 'newHeads notification',
    required: (block.required as string[]).filter((field) => !['transactions', 'uncles', 'size'].includes(field)),
  };
}

interface Registry {
  readonly ajv: Ajv;
  readonly results: ReadonlyMap<string, ValidateFunction>;
}

let registry: Registry | undefined;
/** The id the schemas' document is registered under (a name only: nothing is fetched). */
const documentId = 'https://execution-apis.invalid/openrpc.json';

function load(): Registry {
  if (registry) return registry;
  const dir = openrpcDir();
  const schemas: Record<string, Schema> = {};
  for (const file of readdirSync(join(dir, 'schemas')).filter((name) => name.endsWith('.yaml')))
    Object.assign(schemas, parse(readFileSync(join(dir, 'schemas', file), 'utf8')) as Record<string, Schema>);
  opExtensions(schemas);
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addSchema({ $id: documentId, components: { schemas } });
  const results = new Map<string, ValidateFunction>();
  for (const file of readdirSync(join(dir, 'eth')).filter((name) => name.endsWith('.yaml'))) {
    const methods = parse(readFileSync(join(dir, 'eth', file), 'utf8')) as { name: string; result?: { schema?: Schema } }[];
    for (const method of methods) {
      if (!method.result?.schema) continue;
      results.set(method.name, ajv.compile(relativeTo(method.result.schema)));
    }
  }
  // Subscriptions (no OpenRPC method): `newHeads` a header, `logs` / `pendingLogs` one log each.
  results.set('newHeads', ajv.compile({ $ref: `${documentId}#/components/schemas/NewHead` }));
  const log = ajv.compile({ $ref: `${documentId}#/components/schemas/Log` });
  results.set('logs', log);
  results.set('pendingLogs', log);
  registry = { ajv, results };
  return registry;
}

/** A method's result schema with its `#/components/...` references pointed at the shared document. */
function relativeTo(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${documentId}#/components/`)) as Schema;
}

/** The methods the OpenRPC definitions give a result schema for. */
export const methodsWithSchema = (): readonly string[] => [...load().results.keys()];

/**
 * What is wrong with `result` as the answer of `method`: one line per violation (path, what the
 * schema wanted), empty when it is valid. A method the definitions do not describe (flashlog's,
 * Base's, `eth_subscribe`) gives `undefined`: nothing to hold it against.
 *
 * @example schemaErrors('eth_getTransactionByHash', { …, s: '0x0ae3…' }) // ['/s must match pattern "^0x(0|[1-9a-f][0-9a-f]*)$"', …]
 */
export function schemaErrors(method: string, result: unknown): string[] | undefined {
  const validate = load().results.get(method);
  if (!validate) return undefined;
  if (validate(result)) return [];
  // A found value fails the `notFound` (null) branch of every result too: that says nothing.
  const errors = (validate.errors ?? []).filter((error) => result === null || !error.schemaPath.includes('/notFound/'));
  return errors.map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'} (${error.schemaPath})`);
}

/** Throws, naming the method and every violation, when `result` is not a valid answer of `method`. */
export function assertSchemaValid(method: string, result: unknown): void {
  const errors = schemaErrors(method, result);
  if (errors && errors.length > 0) {
    const shown = JSON.stringify(result).slice(0, 400);
    throw new Error(
      `${method}: the answer does not match the execution-apis schema:\n  ${errors.slice(0, 12).join('\n  ')}\nanswer: ${shown}`,
    );
  }
}

/** How many answers were held against a schema, by method (for tests that want to see coverage). */
export const validatedCounts = new Map<string, number>();

interface JsonRpcRequest {
  readonly id?: unknown;
  readonly method?: string;
}

/** Validates every `result` of a JSON-RPC response body against the requests that asked for it. */
export function assertResponseValid(request: unknown, response: unknown): void {
  const requests = (Array.isArray(request) ? request : [request]) as JsonRpcRequest[];
  const responses = (Array.isArray(response) ? response : [response]) as { id?: unknown; result?: unknown; error?: unknown }[];
  for (const answer of responses) {
    if (answer === null || typeof answer !== 'object' || !('result' in answer)) continue;
    const asked = requests.find((item) => item && item.id === answer.id) ?? (requests.length === 1 ? requests[0] : undefined);
    if (!asked?.method) continue;
    assertSchemaValid(asked.method, answer.result);
    validatedCounts.set(asked.method, (validatedCounts.get(asked.method) ?? 0) + 1);
  }
}

/**
 * `fetch` that validates the answers of a JSON-RPC POST (single or batch) before handing the
 * response back: pass it where a test calls the gateway (viem's `http(url, { fetchFn })` too).
 * A non-JSON body (a 4xx page) is handed back unread.
 */
export async function validatingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (typeof init?.body !== 'string') return response;
  const text = await response.text();
  let request: unknown;
  let body: unknown;
  try {
    request = JSON.parse(init.body);
    body = JSON.parse(text);
  } catch {
    return again(response, text);
  }
  assertResponseValid(request, body);
  return again(response, text);
}

/** The response handed back after its body was read (a 204 has none). */
const again = (response: Response, text: string): Response =>
  new Response(response.status === 204 || response.status === 304 ? null : text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });

/**
 * One JSON-RPC call whose answer is held against its method's schema (the gateway tests' `rpc`):
 * the result, or a throw naming the method and the error the server gave.
 */
export async function validatedRpc<T = unknown>(url: string, method: string, params: readonly unknown[] = []): Promise<T> {
  const response = await validatingFetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
