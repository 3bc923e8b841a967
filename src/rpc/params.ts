import { InvalidParamsError } from '../errors.ts';

/**
 * Parameter parsing for the methods the gateway serves itself. Every message names the parameter,
 * what came and what was expected: `params[0].fromBlock: expected hex block number or tag, got "yesterday"`.
 */
export type BlockTag = 'latest' | 'pending' | 'safe' | 'finalized' | 'earliest';
export type BlockParam = { readonly kind: 'tag'; readonly tag: BlockTag } | { readonly kind: 'number'; readonly number: bigint };

const tags = new Set<string>(['latest', 'pending', 'safe', 'finalized', 'earliest']);
const quantityPattern = /^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,63})$/;

const shown = (value: unknown): string => {
  let text: string;
  try {
    text = value === undefined ? 'nothing' : JSON.stringify(value);
  } catch {
    text = Array.isArray(value) ? 'an array' : typeof value;
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** `hex block number or tag`; absent means `fallback` when one is given. */
export function blockParam(value: unknown, where: string, fallback?: BlockTag): BlockParam {
  if (value === undefined || value === null) {
    if (fallback) return { kind: 'tag', tag: fallback };
  } else if (typeof value === 'string') {
    if (tags.has(value)) return { kind: 'tag', tag: value as BlockTag };
    if (quantityPattern.test(value)) return { kind: 'number', number: BigInt(value) };
  }
  throw new InvalidParamsError(
    `${where}: expected hex block number or tag (latest, pending, safe, finalized, earliest), got ${shown(value)}`,
  );
}

/** A block named as EIP-1898 allows for state methods: a number or tag, or a block hash. */
export type StateBlockParam = BlockParam | { readonly kind: 'hash'; readonly hash: `0x${string}`; readonly requireCanonical: boolean };

/**
 * EIP-1898: what `blockParam` takes, or `{ blockNumber }`, or `{ blockHash, requireCanonical? }`
 * (eth_call, eth_estimateGas, eth_simulateV1, eth_getBalance, eth_getCode, eth_getStorageAt,
 * eth_getTransactionCount). `{ blockNumber }` takes what `blockParam` takes, tags included.
 */
export function stateBlockParam(value: unknown, where: string, fallback?: BlockTag): StateBlockParam {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return blockParam(value, where, fallback);
  const given = value as Record<string, unknown>;
  const keys = Object.keys(given);
  if ('blockHash' in given && 'blockNumber' in given) throw new InvalidParamsError(`${where}: give blockHash or blockNumber, not both`);
  const known = keys.every((key) => key === 'blockHash' || key === 'blockNumber' || key === 'requireCanonical');
  if (known && given.requireCanonical !== undefined && typeof given.requireCanonical !== 'boolean') {
    throw new InvalidParamsError(`${where}.requireCanonical: expected true or false, got ${shown(given.requireCanonical)}`);
  }
  if (known && 'blockNumber' in given) return blockParam(given.blockNumber, `${where}.blockNumber`);
  if (known && 'blockHash' in given) {
    return { kind: 'hash', hash: hashParam(given.blockHash, `${where}.blockHash`), requireCanonical: given.requireCanonical === true };
  }
  throw new InvalidParamsError(
    `${where}: expected hex block number, tag, { blockNumber } or { blockHash, requireCanonical? } (EIP-1898), got ${shown(value)}`,
  );
}

export const isPending = (param: StateBlockParam): boolean => param.kind === 'tag' && param.tag === 'pending';

export function addressParam(value: unknown, where: string): `0x${string}` {
  if (typeof value === 'string' && /^0x[0-9a-fA-F]{40}$/.test(value)) return value.toLowerCase() as `0x${string}`;
  throw new InvalidParamsError(`${where}: expected a 20-byte 0x-hex address, got ${shown(value)}`);
}

export function hashParam(value: unknown, where: string): `0x${string}` {
  if (typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase() as `0x${string}`;
  throw new InvalidParamsError(`${where}: expected a 32-byte 0x-hex hash, got ${shown(value)}`);
}

/** A storage slot as a quantity or 32-byte word; returned as the 32-byte lower-case word. */
export function slotParam(value: unknown, where: string): `0x${string}` {
  if (typeof value === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(value)) {
    return `0x${value.slice(2).toLowerCase().padStart(64, '0')}`;
  }
  throw new InvalidParamsError(`${where}: expected a storage slot (0x-hex, at most 32 bytes), got ${shown(value)}`);
}

export function boolParam(value: unknown, where: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  throw new InvalidParamsError(`${where}: expected true or false, got ${shown(value)}`);
}

export function paramsArray(params: unknown, method: string): readonly unknown[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params;
  throw new InvalidParamsError(`params: expected an array of parameters for ${method}, got ${shown(params)}`);
}

export function requireParam(params: readonly unknown[], position: number, what: string): unknown {
  const value = params[position];
  if (value === undefined) throw new InvalidParamsError(`params[${position}]: expected ${what}, got nothing`);
  return value;
}

/** A log filter, as in eth_getLogs and pendingLogs: addresses any-of, topics per position any-of. */
export interface LogFilter {
  readonly addresses: ReadonlySet<string> | null;
  /** null = any topic at this position. */
  readonly topics: readonly (ReadonlySet<string> | null)[];
}

/** Most addresses, and most topics in one position, a log filter may name (Base's node's limits). */
export const maxFilterAddresses = 1000;
export const maxFilterTopicsPerPosition = 1000;

export function logFilterParam(value: Record<string, unknown>, where: string): LogFilter {
  let addresses: Set<string> | null = null;
  const address = value.address;
  if (address !== undefined && address !== null) {
    const list = Array.isArray(address) ? address : [address];
    if (list.length > maxFilterAddresses) {
      throw new InvalidParamsError(`${where}.address: expected at most ${maxFilterAddresses} addresses, got ${list.length}`);
    }
    addresses = new Set(list.map((item, i) => addressParam(item, Array.isArray(address) ? `${where}.address[${i}]` : `${where}.address`)));
  }
  const topicsIn = value.topics;
  const topics: (Set<string> | null)[] = [];
  if (topicsIn !== undefined && topicsIn !== null) {
    if (!Array.isArray(topicsIn)) throw new InvalidParamsError(`${where}.topics: expected an array of topics, got ${shown(topicsIn)}`);
    if (topicsIn.length > 4) throw new InvalidParamsError(`${where}.topics: expected at most 4 positions, got ${topicsIn.length}`);
    topicsIn.forEach((position, i) => {
      if (position === null) topics.push(null);
      else if (Array.isArray(position)) {
        if (position.length > maxFilterTopicsPerPosition) {
          throw new InvalidParamsError(
            `${where}.topics[${i}]: expected at most ${maxFilterTopicsPerPosition} topics in one position, got ${position.length}`,
          );
        }
        topics.push(position.length === 0 ? null : new Set(position.map((topic, j) => hashParam(topic, `${where}.topics[${i}][${j}]`))));
      } else topics.push(new Set([hashParam(position, `${where}.topics[${i}]`)]));
    });
  }
  return { addresses, topics };
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

export function objectParam(value: unknown, where: string, what: string): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new InvalidParamsError(`${where}: expected ${what}, got ${shown(value)}`);
}
