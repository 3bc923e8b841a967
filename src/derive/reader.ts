import { FlashlogError, type ErrorCode } from '../errors.ts';

/**
 * A cursor over the bytes of one derivation structure (a batcher transaction's data, a span
 * batch), which names the offset of whatever it fails to read. It holds the two encodings the OP
 * Stack's batch formats use beside RLP and that no library here reads: protobuf's unsigned
 * varint ("uvarint", as Go's `encoding/binary` reads it) and the span batch's "standard
 * bitlist" (a big-endian integer, bit i is the flag of element i). Both are a few lines, and a
 * library for either would pull in a protobuf or bignum dependency for nothing else.
 */
export interface ByteReader {
  /** Offset of the next byte, from the start of what the reader was built over (plus `base`). */
  readonly offset: number;
  readonly remaining: number;
  /** `count` bytes (a view, not a copy); fails naming `what` when fewer remain. */
  bytes(count: number, what: string): Uint8Array;
  u8(what: string): number;
  /** A big-endian unsigned integer of `size` bytes (2 or 4). */
  uintBE(size: 2 | 4, what: string): number;
  /** A protobuf uvarint that must fit in 64 bits, as Go's `binary.ReadUvarint` accepts it. */
  uvarint(what: string): bigint;
  /** A standard bitlist of `bitLength` bits: ceil(bitLength / 8) bytes, no bit set at or above `bitLength`. */
  bitlist(bitLength: number, what: string): Bitlist;
  /** The bytes from the cursor to the end, consuming them. */
  rest(): Uint8Array;
  /** The bytes from the cursor to the end, without consuming them. */
  view(): Uint8Array;
}

/** A decoded bitlist: `has(i)` is bit i (the least significant bit of the last byte is bit 0). */
export interface Bitlist {
  readonly length: number;
  has(index: number): boolean;
  count(): number;
}

/**
 * A reader over `data`; errors carry `code` and say "`what` at offset N". `base` is added to every
 * offset it reports, for a structure found inside a larger one.
 */
export function createReader(data: Uint8Array, code: ErrorCode, base = 0): ByteReader {
  let at = 0;
  const fail = (what: string, detail: string, from = at): never => {
    throw new FlashlogError(code, `${what} at offset ${base + from}: ${detail}`);
  };
  const need = (count: number, what: string) => {
    if (data.length - at < count) fail(what, `needs ${count} bytes, ${data.length - at} left`);
  };
  return {
    get offset() {
      return base + at;
    },
    get remaining() {
      return data.length - at;
    },
    bytes(count, what) {
      need(count, what);
      const out = data.subarray(at, at + count);
      at += count;
      return out;
    },
    u8(what) {
      need(1, what);
      return data[at++]!;
    },
    uintBE(size, what) {
      need(size, what);
      let value = 0;
      for (let i = 0; i < size; i++) value = value * 256 + data[at + i]!;
      at += size;
      return value;
    },
    uvarint(what) {
      const start = at;
      let value = 0n;
      for (let i = 0; i < 10; i++) {
        if (at >= data.length) fail(what, 'the varint is cut short', start);
        const byte = data[at]!;
        // The tenth byte may carry one bit only (bit 63); Go rejects more as an overflow.
        if (i === 9 && byte > 1) fail(what, 'the varint overflows 64 bits', start);
        at++;
        value |= BigInt(byte & 0x7f) << BigInt(7 * i);
        if (byte < 0x80) return value;
      }
      return fail(what, 'the varint overflows 64 bits', start);
    },
    bitlist(bitLength, what) {
      const size = Math.ceil(bitLength / 8);
      const start = base + at;
      const raw = this.bytes(size, what);
      const spare = size * 8 - bitLength;
      // The unused high bits of the first byte must be zero: the integer has at most bitLength bits.
      if (spare > 0 && raw[0]! >> (8 - spare) !== 0) {
        throw new FlashlogError(code, `${what} at offset ${start}: a bit is set above the ${bitLength} bits it holds`);
      }
      return bitlistOf(raw, bitLength);
    },
    rest() {
      const out = data.subarray(at);
      at = data.length;
      return out;
    },
    view() {
      return data.subarray(at);
    },
  };
}

export function bitlistOf(raw: Uint8Array, bitLength: number): Bitlist {
  const has = (index: number) => index >= 0 && index < bitLength && ((raw[raw.length - 1 - (index >> 3)]! >> (index & 7)) & 1) === 1;
  return {
    length: bitLength,
    has,
    count() {
      let n = 0;
      for (let i = 0; i < bitLength; i++) if (has(i)) n++;
      return n;
    },
  };
}

/** The standard bitlist encoding of `bits` (bit i = element i), ceil(n / 8) bytes. */
export function encodeBitlist(bits: readonly boolean[]): Uint8Array {
  const out = new Uint8Array(Math.ceil(bits.length / 8));
  bits.forEach((bit, i) => {
    const byte = out.length - 1 - (i >> 3);
    if (bit) out[byte] = out[byte]! | (1 << (i & 7));
  });
  return out;
}

/** The uvarint encoding of a 64-bit unsigned integer (the inverse of `ByteReader.uvarint`). */
export function encodeUvarint(value: bigint): Uint8Array {
  if (value < 0n || value >= 1n << 64n)
    throw new FlashlogError('DERIVE_BATCH_INVALID', `uvarint: ${value} is not a 64-bit unsigned integer`);
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return Uint8Array.from(out);
}
