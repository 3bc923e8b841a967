import { brotliDecompressSync, constants as zlib } from 'node:zlib';
import type { PayloadBlocks } from './payload-blocks.ts';
import { flashblockWireSchema, numbered, ownBlockNumber, type Flashblock } from '../schemas/flashblock.ts';
import { payloadId } from '../schemas/hex.ts';

/**
 * Decodes one flashblocks WebSocket frame, text or binary, as Base's node does
 * (base/base `crates/alloy/flashblocks/src/block.rs`, `try_parse_message`):
 *
 *   frame := json | brotli(json)
 *   json  := UTF-8 text whose first non-whitespace character is "{"
 *
 * Brotli has no magic number, so anything that is not such text is brotli. The decompressed size
 * is capped (a brotli bomb stops at the cap, it is never inflated in full).
 *
 * The JSON is any producer's message (src/schemas/flashblock.ts: Base, op-rbuilder, X Layer, OP
 * specs). X Layer also sends a bare `{"payload_id": ...}` when a block's sequence ends; it carries
 * no flashblock and comes back as `end_of_sequence`, not as a failure.
 */
export type FrameFailure = 'oversized' | 'brotli' | 'utf8' | 'json' | 'schema' | 'unknown_payload';

export type DecodedFrame =
  | { readonly ok: true; readonly flashblock: Flashblock; readonly json: Record<string, unknown>; readonly compressed: boolean }
  | { readonly ok: false; readonly reason: FrameFailure; readonly detail: string }
  | { readonly ok: false; readonly reason: 'end_of_sequence'; readonly payloadId: string; readonly detail: string };

export interface DecodeOptions {
  /** Cap on the frame and on its decompressed JSON, in bytes. */
  readonly maxBytes: number;
  /**
   * Payload id → block number, learnt from index-0 messages; numbers the later OP-specs messages,
   * which carry no block number. Without it such messages fail with `unknown_payload`.
   */
  readonly payloadBlocks?: PayloadBlocks;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function looksLikeJson(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x7b; // "{"
  }
  return false;
}

/** Decodes and validates one frame. Never throws: failures come back with their reason. */
export function decodeFrame(frame: Uint8Array | string, options: DecodeOptions): DecodedFrame {
  let text: string;
  let compressed = false;
  if (typeof frame === 'string') {
    if (frame.length > options.maxBytes)
      return { ok: false, reason: 'oversized', detail: `text frame of ${frame.length} chars exceeds ${options.maxBytes}` };
    text = frame;
  } else {
    if (frame.byteLength > options.maxBytes)
      return { ok: false, reason: 'oversized', detail: `frame of ${frame.byteLength} bytes exceeds ${options.maxBytes}` };
    let plain: string | undefined;
    if (looksLikeJson(frame)) {
      try {
        plain = utf8.decode(frame);
      } catch {
        plain = undefined; // not UTF-8: treat as brotli, as Base does
      }
    }
    if (plain === undefined) {
      compressed = true;
      let inflated: Buffer;
      try {
        inflated = brotliDecompressSync(frame, {
          maxOutputLength: options.maxBytes,
          params: { [zlib.BROTLI_DECODER_PARAM_LARGE_WINDOW]: 0 },
        });
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
          return { ok: false, reason: 'oversized', detail: `decompressed frame exceeds ${options.maxBytes} bytes` };
        }
        return { ok: false, reason: 'brotli', detail: `not JSON and not brotli: ${(error as Error).message}` };
      }
      try {
        plain = utf8.decode(inflated);
      } catch {
        return { ok: false, reason: 'utf8', detail: 'decompressed frame is not UTF-8' };
      }
    }
    text = plain;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: 'json', detail: (error as Error).message };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, reason: 'schema', detail: 'expected a JSON object' };
  }
  const keys = Object.keys(json);
  if (keys.length === 1 && keys[0] === 'payload_id' && payloadId.safeParse((json as { payload_id: unknown }).payload_id).success) {
    const id = (json as { payload_id: string }).payload_id;
    return { ok: false, reason: 'end_of_sequence', payloadId: id, detail: `end of the sequence of payload ${id}` };
  }
  const parsed = flashblockWireSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: 'schema', detail: `${issue.path.join('.') || '(root)'}: ${issue.message}` };
  }
  const wire = parsed.data;
  const blockNumber = ownBlockNumber(wire) ?? options.payloadBlocks?.blockOf(wire.payload_id);
  if (blockNumber === undefined) {
    return {
      ok: false,
      reason: 'unknown_payload',
      detail: `metadata.block_number: absent, and payload ${wire.payload_id} (index ${wire.index}) was not seen at index 0`,
    };
  }
  if (wire.base) options.payloadBlocks?.remember(wire.payload_id, blockNumber);
  return { ok: true, flashblock: numbered(wire, blockNumber), json: json as Record<string, unknown>, compressed };
}
