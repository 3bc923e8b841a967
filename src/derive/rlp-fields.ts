import { RLP, type NestedUint8Array } from '@ethereumjs/rlp';
import { bytesToBigInt } from '@ethereumjs/util';
import { FlashlogError, type ErrorCode } from '../errors.ts';

/**
 * Typed reads of RLP items decoded by @ethereumjs/rlp, as strictly as go-ethereum's decoder reads
 * them into the structs op-node decodes batches into: an integer is canonical (no leading zero
 * byte) and fits its width, a hash or an address has its exact size, a struct has exactly its
 * fields. Each failure names the field.
 */
export type RlpItem = Uint8Array | NestedUint8Array;

export interface RlpFields {
  list(item: RlpItem | undefined, what: string, length?: number): RlpItem[];
  bytes(item: RlpItem | undefined, what: string): Uint8Array;
  fixed(item: RlpItem | undefined, size: number, what: string): Uint8Array;
  /** An unsigned integer of at most `maxBytes` bytes (8 for uint64, 32 for uint256). */
  uint(item: RlpItem | undefined, maxBytes: number, what: string): bigint;
}

export function rlpFields(code: ErrorCode): RlpFields {
  const fail = (what: string, detail: string): never => {
    throw new FlashlogError(code, `${what}: ${detail}`);
  };
  const bytes = (item: RlpItem | undefined, what: string): Uint8Array => {
    if (item === undefined) return fail(what, 'missing');
    if (!(item instanceof Uint8Array)) return fail(what, 'got a list, expected a byte string');
    return item;
  };
  return {
    list(item, what, length) {
      if (item === undefined) return fail(what, 'missing');
      if (item instanceof Uint8Array) return fail(what, 'got a byte string, expected a list');
      if (length !== undefined && item.length !== length) fail(what, `got a list of ${item.length} items, expected ${length}`);
      return item;
    },
    bytes,
    fixed(item, size, what) {
      const value = bytes(item, what);
      if (value.length !== size) fail(what, `got ${value.length} bytes, expected ${size}`);
      return value;
    },
    uint(item, maxBytes, what) {
      const value = bytes(item, what);
      if (value.length > maxBytes) fail(what, `got a ${value.length}-byte integer, expected at most ${maxBytes} bytes`);
      if (value.length > 0 && value[0] === 0) fail(what, 'non-canonical integer (leading zero byte)');
      return bytesToBigInt(value);
    },
  };
}

/**
 * One RLP item from the front of `data`: the item and how many bytes it took. Throws `code`
 * naming `what` and the offset (`base` + 0) when the item is malformed or cut short.
 */
export function readRlpItem(data: Uint8Array, code: ErrorCode, what: string, base: number): { item: RlpItem; size: number } {
  // RLP.decode copies the remainder after the item, so it is given a window that grows until the
  // item fits: reading many items from a large buffer stays linear in its size.
  for (let window = Math.min(data.length, 4096); ; window = Math.min(data.length, window * 8)) {
    try {
      const decoded = RLP.decode(data.subarray(0, window), true);
      return { item: decoded.data, size: window - decoded.remainder.length };
    } catch (error) {
      if (window >= data.length) throw new FlashlogError(code, `${what} at offset ${base}: ${(error as Error).message}`, { cause: error });
    }
  }
}
