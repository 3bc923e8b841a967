import { z } from 'zod';
import { hexPatterns } from '../schemas/hex.ts';
import { parseParam, type IssueParams } from '../schemas/issue.ts';

/**
 * The zod pieces the methods' params schemas are made of (each method declares its whole params
 * tuple in its `defineMethod`). A bad value is -32602 naming the parameter, what came and what was
 * expected (src/schemas/issue.ts): `params[0].fromBlock: expected hex block number or tag (latest,
 * pending, safe, finalized, earliest), got "yesterday"`. The parsed values are what the handlers
 * use; what goes upstream is the params as received.
 */
export type BlockTag = 'latest' | 'pending' | 'safe' | 'finalized' | 'earliest';
export type BlockParam = { readonly kind: 'tag'; readonly tag: BlockTag } | { readonly kind: 'number'; readonly number: bigint };
/** A block named as EIP-1898 allows for state methods: a number or tag, or a block hash. */
export type StateBlockParam = BlockParam | { readonly kind: 'hash'; readonly hash: `0x${string}`; readonly requireCanonical: boolean };
type Hex = `0x${string}`;

const tags = new Set<string>(['latest', 'pending', 'safe', 'finalized', 'earliest']);
const quantityPattern = /^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,63})$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A string matching `pattern`; anything else (not a string, or nothing) is `message`. */
const text = (pattern: RegExp, message: string) => z.string({ error: message }).regex(pattern, message);

/**
 * The schema `pick` names for the value, its issues reported as they are: a choice by the value's
 * shape (an object or a string, a list or one item), which a union would report as "invalid input".
 */
export function choose<T>(pick: (value: unknown) => z.ZodType<T>) {
  return z.unknown().transform((value, ctx): T => {
    const parsed = pick(value).safeParse(value);
    if (parsed.success) return parsed.data;
    ctx.issues.push(...(parsed.error.issues as typeof ctx.issues));
    return z.NEVER;
  });
}

/** `schema`, but nothing at all (a missing parameter) is `expected <what>, got nothing`. */
export const required = <T>(what: string, schema: z.ZodType<T>) =>
  z
    .unknown()
    .refine((value): boolean => value !== undefined, { error: `expected ${what}`, abort: true })
    .pipe(schema);

/** `schema`, with nothing or null meaning `fallback`. */
export const orDefault = <T>(schema: z.ZodType<T>, fallback: T) => schema.nullish().transform((value): T => value ?? fallback);

/** A list of at most `max` (`<message>, got <its length>`), each item parsed by `item`. */
const listOf = <T>(item: z.ZodType<T>, max: number, message: string, notList: string) =>
  z
    .array(z.unknown(), { error: notList })
    .check((ctx) => {
      if (ctx.value.length > max) {
        ctx.issues.push({ code: 'custom', message, input: ctx.value, params: { got: String(ctx.value.length) } satisfies IssueParams });
      }
    })
    .pipe(z.array(item));

const blockMessage = 'expected hex block number or tag (latest, pending, safe, finalized, earliest)';

/** `hex block number or tag`. */
export const blockParam = z
  .string({ error: blockMessage })
  .refine((value) => tags.has(value) || quantityPattern.test(value), blockMessage)
  .transform((value): BlockParam =>
    tags.has(value) ? { kind: 'tag', tag: value as BlockTag } : { kind: 'number', number: BigInt(value) },
  );

export const latest: BlockParam = { kind: 'tag', tag: 'latest' };

export const addressParam = text(hexPatterns.address, 'expected a 20-byte 0x-hex address').transform((value) => value.toLowerCase() as Hex);
export const hashParam = text(hexPatterns.hash32, 'expected a 32-byte 0x-hex hash').transform((value) => value.toLowerCase() as Hex);

/** A storage slot as a quantity or 32-byte word; parsed to the 32-byte lower-case word. */
export const slotParam = text(/^0x[0-9a-fA-F]{1,64}$/, 'expected a storage slot (0x-hex, at most 32 bytes)').transform(
  (value): Hex => `0x${value.slice(2).toLowerCase().padStart(64, '0')}`,
);

export const boolParam = z.boolean({ error: 'expected true or false' });

const eip1898Message = 'expected hex block number, tag, { blockNumber } or { blockHash, requireCanonical? } (EIP-1898)';
const eip1898Keys = new Set(['blockHash', 'blockNumber', 'requireCanonical']);

/** EIP-1898's object form: `{ blockNumber }` (a number or tag) or `{ blockHash, requireCanonical? }`. */
const blockObject = z
  .record(z.string(), z.unknown())
  .refine((given) => !('blockHash' in given && 'blockNumber' in given), {
    error: 'give blockHash or blockNumber, not both',
    params: { got: null } satisfies IssueParams,
    abort: true,
  })
  .refine((given) => Object.keys(given).every((key) => eip1898Keys.has(key)), { error: eip1898Message, abort: true })
  .pipe(z.object({ requireCanonical: boolParam.optional(), blockNumber: blockParam.optional(), blockHash: hashParam.optional() }))
  .refine((given) => given.blockNumber !== undefined || given.blockHash !== undefined, eip1898Message)
  .transform(
    (given): StateBlockParam =>
      given.blockNumber ?? { kind: 'hash', hash: given.blockHash!, requireCanonical: given.requireCanonical === true },
  );

/**
 * EIP-1898: what `blockParam` takes, or `{ blockNumber }`, or `{ blockHash, requireCanonical? }`
 * (eth_call, eth_estimateGas, eth_simulateV1, eth_getBalance, eth_getCode, eth_getStorageAt,
 * eth_getTransactionCount, eth_getBlockReceipts). `{ blockNumber }` takes what `blockParam` takes, tags included.
 */
export const stateBlockParam = choose<StateBlockParam>((value) => (isObject(value) ? blockObject : blockParam));

export const isPending = (param: StateBlockParam): boolean => param.kind === 'tag' && param.tag === 'pending';

/** The JSON-RPC params as a list (absent: none); named params are refused naming the method. */
export function paramsArray(params: unknown, method: string): readonly unknown[] {
  if (params === undefined) return [];
  // A list is the answer as it came (the common case: no schema built per call); only a refusal needs zod's message.
  if (Array.isArray(params)) return params;
  return parseParam(z.array(z.unknown(), { error: `expected an array of parameters for ${method}` }), params, 'params');
}

/** A log filter, as in eth_getLogs and the log subscriptions: addresses any-of, topics per position any-of. */
export interface LogFilter {
  readonly addresses: ReadonlySet<string> | null;
  /** null = any topic at this position. */
  readonly topics: readonly (ReadonlySet<string> | null)[];
}

/** Most addresses, and most topics in one position, a log filter may name (Base's node's limits). */
export const maxFilterAddresses = 1000;
export const maxFilterTopicsPerPosition = 1000;

const addressList = listOf(
  addressParam,
  maxFilterAddresses,
  `expected at most ${maxFilterAddresses} addresses`,
  'expected a list of addresses',
);
const addresses = choose<Hex | Hex[]>((value) => (Array.isArray(value) ? addressList : addressParam));
const topicList = listOf(
  hashParam,
  maxFilterTopicsPerPosition,
  `expected at most ${maxFilterTopicsPerPosition} topics in one position`,
  'expected a list of topics',
);
const anyTopic = z.null();
const topicPosition = choose<Hex | Hex[] | null>((value) => (value === null ? anyTopic : Array.isArray(value) ? topicList : hashParam));

/**
 * The one log filter parser, `{address, topics}` (other fields are the caller's): address one or a
 * list, topics up to 4 positions, each null (any), a topic or a list (any of; empty: any).
 */
export const logFilterFields = {
  address: addresses.nullish(),
  topics: listOf(topicPosition, 4, 'expected at most 4 positions', 'expected an array of topics').nullish(),
};

/** A parsed `{address, topics}` as the `LogFilter` that `matchesFilter` checks (lower-case sets). */
export function toLogFilter(filter: {
  readonly address?: string | readonly string[] | null | undefined;
  readonly topics?: readonly (string | readonly string[] | null)[] | null | undefined;
}): LogFilter {
  const set = (one: string | readonly string[]) => new Set((typeof one === 'string' ? [one] : one).map((item) => item.toLowerCase()));
  return {
    addresses: filter.address === undefined || filter.address === null ? null : set(filter.address),
    topics: (filter.topics ?? []).map((position) => (position === null || position.length === 0 ? null : set(position))),
  };
}

/** A log filter object, `what` naming it when the value is not an object. */
export const logFilterObject = (what: string) => z.looseObject(logFilterFields, { error: `expected ${what}` });

/** The log filter of `value`'s `address` and `topics` (for servers that parse their own params: the devnet). */
export function logFilterParam(value: Record<string, unknown>, where: string): LogFilter {
  return toLogFilter(parseParam(z.object(logFilterFields), { address: value.address, topics: value.topics }, where));
}

/** `value` as an object (`expected <what>` otherwise). */
export function objectParam(value: unknown, where: string, what: string): Record<string, unknown> {
  return parseParam(z.record(z.string(), z.unknown(), { error: `expected ${what}` }), value, where);
}

export function matchesFilter(log: { address: string; topics: readonly string[] }, filter: LogFilter): boolean {
  if (filter.addresses && !filter.addresses.has(log.address.toLowerCase())) return false;
  for (let i = 0; i < filter.topics.length; i++) {
    const wanted = filter.topics[i];
    if (!wanted) continue;
    const topic = log.topics[i];
    if (topic === undefined || !wanted.has(topic.toLowerCase())) return false;
  }
  return true;
}
