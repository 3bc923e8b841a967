import { FlashlogError } from '../errors.ts';

/**
 * bincode 2 with `config::standard()` through serde, the subset Base's enclave protocol uses.
 * Hand-written because no maintained JS library speaks bincode 2's varint grammar.
 *
 * Grammar (https://github.com/bincode-org/bincode/blob/trunk/docs/spec.md):
 *   unsigned int  = varint: v < 251 -> 1 byte; else 0xFB u16-LE | 0xFC u32-LE | 0xFD u64-LE | 0xFE u128-LE
 *   u8            = 1 raw byte (never a varint)
 *   enum variant  = its serde index (declaration order) as a u32 varint, then the payload
 *   Option<T>     = 0x00 | 0x01 T
 *   seq / Vec<T>  = varint length, then the elements
 *   bytes         = varint length, then the raw bytes (alloy B256/Address/Bytes serialize as bytes)
 *   [u8; N]       = N raw bytes, no length
 *   String        = varint byte length, then UTF-8
 *
 * The enclave frame around a payload is `u32 big-endian payload length ‖ payload`.
 */
export interface BincodeWriter {
  varint(value: bigint | number): BincodeWriter;
  u8(value: number): BincodeWriter;
  raw(bytes: Uint8Array): BincodeWriter;
  /** varint length + bytes */
  bytes(bytes: Uint8Array): BincodeWriter;
  string(text: string): BincodeWriter;
  option<T>(value: T | undefined | null, write: (value: T) => void): BincodeWriter;
  finish(): Uint8Array;
}

export function bincodeWriter(): BincodeWriter {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const push = (bytes: Uint8Array) => {
    chunks.push(bytes);
    length += bytes.length;
  };
  const writer: BincodeWriter = {
    varint(value) {
      const v = BigInt(value);
      if (v < 0n) throw new FlashlogError('BINCODE_RANGE', `bincode varint: got negative ${v}`);
      if (v < 251n) {
        push(Uint8Array.of(Number(v)));
      } else if (v <= 0xffffn) {
        const out = new Uint8Array(3);
        out[0] = 0xfb;
        new DataView(out.buffer).setUint16(1, Number(v), true);
        push(out);
      } else if (v <= 0xffffffffn) {
        const out = new Uint8Array(5);
        out[0] = 0xfc;
        new DataView(out.buffer).setUint32(1, Number(v), true);
        push(out);
      } else if (v <= 0xffffffffffffffffn) {
        const out = new Uint8Array(9);
        out[0] = 0xfd;
        new DataView(out.buffer).setBigUint64(1, v, true);
        push(out);
      } else {
        throw new FlashlogError('BINCODE_RANGE', `bincode varint: ${v} does not fit u64`);
      }
      return writer;
    },
    u8(value) {
      push(Uint8Array.of(value & 0xff));
      return writer;
    },
    raw(bytes) {
      push(bytes);
      return writer;
    },
    bytes(bytes) {
      writer.varint(bytes.length);
      push(bytes);
      return writer;
    },
    string(text) {
      return writer.bytes(new TextEncoder().encode(text));
    },
    option(value, write) {
      if (value === undefined || value === null) {
        push(Uint8Array.of(0));
      } else {
        push(Uint8Array.of(1));
        write(value);
      }
      return writer;
    },
    finish() {
      const out = new Uint8Array(length);
      let at = 0;
      for (const chunk of chunks) {
        out.set(chunk, at);
        at += chunk.length;
      }
      return out;
    },
  };
  return writer;
}

export interface BincodeReader {
  varint(): bigint;
  /** A varint that must fit a JS number (lengths, variant indices, block numbers). */
  varintNumber(what: string): number;
  u8(): number;
  raw(length: number): Uint8Array;
  bytes(what: string, maxLength?: number): Uint8Array;
  string(what: string): string;
  option<T>(read: () => T): T | undefined;
  /** Bytes not yet read. */
  remaining(): number;
  /** Throws unless every byte was consumed. */
  end(what: string): void;
}

export function bincodeReader(input: Uint8Array): BincodeReader {
  let at = 0;
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const need = (count: number, what: string) => {
    if (at + count > input.length) {
      throw new FlashlogError('BINCODE_TRUNCATED', `bincode ${what}: needs ${count} bytes at offset ${at}, only ${input.length - at} left`);
    }
  };
  const reader: BincodeReader = {
    varint() {
      need(1, 'varint');
      const tag = input[at++]!;
      if (tag < 251) return BigInt(tag);
      if (tag === 0xfb) {
        need(2, 'varint u16');
        const v = view.getUint16(at, true);
        at += 2;
        return BigInt(v);
      }
      if (tag === 0xfc) {
        need(4, 'varint u32');
        const v = view.getUint32(at, true);
        at += 4;
        return BigInt(v);
      }
      if (tag === 0xfd) {
        need(8, 'varint u64');
        const v = view.getBigUint64(at, true);
        at += 8;
        return v;
      }
      throw new FlashlogError('BINCODE_INVALID', `bincode varint: unsupported tag 0x${tag.toString(16)} at offset ${at - 1}`);
    },
    varintNumber(what) {
      const v = reader.varint();
      if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new FlashlogError('BINCODE_RANGE', `bincode ${what}: ${v} is too large`);
      return Number(v);
    },
    u8() {
      need(1, 'u8');
      return input[at++]!;
    },
    raw(length) {
      need(length, `${length} raw bytes`);
      const out = input.slice(at, at + length);
      at += length;
      return out;
    },
    bytes(what, maxLength = input.length) {
      const length = reader.varintNumber(`${what} length`);
      if (length > maxLength) throw new FlashlogError('BINCODE_RANGE', `bincode ${what}: length ${length} exceeds ${maxLength}`);
      need(length, what);
      return reader.raw(length);
    },
    string(what) {
      return new TextDecoder('utf-8', { fatal: true }).decode(reader.bytes(what));
    },
    option(read) {
      const tag = reader.u8();
      if (tag === 0) return undefined;
      if (tag === 1) return read();
      throw new FlashlogError('BINCODE_INVALID', `bincode Option: tag ${tag} at offset ${at - 1}, expected 0 or 1`);
    },
    remaining() {
      return input.length - at;
    },
    end(what) {
      if (at !== input.length) throw new FlashlogError('BINCODE_INVALID', `bincode ${what}: ${input.length - at} trailing bytes`);
    },
  };
  return reader;
}

/** Largest payload we accept in a frame: a u32 length could otherwise ask for 4 GiB. */
export const defaultMaxFrameBytes = 512 * 1024 * 1024;

/** `u32 BE length ‖ payload`. */
export function encodeFrame(payload: Uint8Array): Uint8Array {
  if (payload.length > 0xffffffff)
    throw new FlashlogError('FRAME_TOO_LARGE', `frame payload of ${payload.length} bytes does not fit a u32 length`);
  const out = new Uint8Array(4 + payload.length);
  new DataView(out.buffer).setUint32(0, payload.length, false);
  out.set(payload, 4);
  return out;
}

/**
 * Accumulates stream chunks until one whole frame has arrived. `push` returns the payload once
 * complete (and throws if the announced length is over the cap), otherwise undefined.
 */
export function frameAccumulator(maxFrameBytes = defaultMaxFrameBytes): {
  push(chunk: Uint8Array): Uint8Array | undefined;
  buffered(): number;
} {
  const chunks: Uint8Array[] = [];
  let have = 0;
  let expected: number | undefined;
  const concat = () => {
    const all = new Uint8Array(have);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    chunks.length = 0;
    chunks.push(all);
    return all;
  };
  return {
    push(chunk) {
      chunks.push(chunk);
      have += chunk.length;
      if (expected === undefined && have >= 4) {
        const all = concat();
        expected = new DataView(all.buffer, all.byteOffset, all.byteLength).getUint32(0, false);
        if (expected > maxFrameBytes)
          throw new FlashlogError('FRAME_TOO_LARGE', `frame announces ${expected} bytes, over the cap of ${maxFrameBytes}`);
      }
      if (expected !== undefined && have >= 4 + expected) {
        const all = concat();
        return all.slice(4, 4 + expected);
      }
      return undefined;
    },
    buffered: () => have,
  };
}
