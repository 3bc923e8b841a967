import { bytesToHex, concat, hexToBytes, isHex, size } from 'viem';
import { FlashlogError } from '../errors.ts';
import { createReader } from './reader.ts';

/**
 * Batcher transaction data → channel frames (specs/protocol/derivation.md, "Batcher Transaction
 * Format" and "Frame Format"):
 *
 *     data  = version_byte(0) ++ frame ++ frame ++ …
 *     frame = channel_id(16) ++ frame_number(u16 BE) ++ frame_data_length(u32 BE) ++ frame_data ++ is_last(u8: 0|1)
 *
 * It is an invariant of the spec that a batcher transaction is all or nothing: one frame that
 * does not parse rejects every frame of the transaction, so `parseFrames` throws rather than
 * returning the frames before the bad one.
 */

/** The only batcher transaction version with frames (version 1 is an alt-DA commitment). */
export const derivationVersion0 = 0;
/** Cap of `frame_data_length` (op-node's MaxFrameLen; the spec: "capped to 1,000,000 bytes"). */
export const maxFrameDataLength = 1_000_000;
/** channel_id ++ frame_number ++ frame_data_length ++ is_last. */
export const frameOverheadBytes = 16 + 2 + 4 + 1;

export interface Frame {
  /** 16 bytes, as 0x-hex: the channel the frame belongs to. */
  readonly channelId: `0x${string}`;
  readonly frameNumber: number;
  readonly data: Uint8Array;
  readonly isLast: boolean;
  /** Offset of the frame's first byte in the batcher transaction data (after nothing: the version byte is offset 0). */
  readonly offset: number;
}

export type ParseFramesErrorType = FlashlogError;

/**
 * The frames of one batcher transaction's data (calldata, or a blob's decoded data).
 * Throws `DERIVE_FRAME_INVALID` naming the frame and the offset when anything does not parse.
 *
 * @example parseFrames(hexToBytes(tx.input)) // [{ channelId: '0xac32…', frameNumber: 0, data, isLast: true, offset: 1 }]
 */
export function parseFrames(data: Uint8Array): Frame[] {
  if (data.length === 0) throw new FlashlogError('DERIVE_FRAME_INVALID', 'batcher data is empty: expected a version byte and frames');
  if (data[0] !== derivationVersion0) {
    throw new FlashlogError(
      'DERIVE_FRAME_INVALID',
      `batcher data version byte at offset 0: got ${data[0]}, expected 0 (frames; version 1 is an alt-DA commitment, not decoded here)`,
    );
  }
  const reader = createReader(data.subarray(1), 'DERIVE_FRAME_INVALID', 1);
  const frames: Frame[] = [];
  while (reader.remaining > 0) {
    const offset = reader.offset;
    const at = `frame ${frames.length}`;
    const channelId = bytesToHex(reader.bytes(16, `${at} channel_id`));
    const frameNumber = reader.uintBE(2, `${at} frame_number`);
    const lengthOffset = reader.offset;
    const length = reader.uintBE(4, `${at} frame_data_length`);
    if (length > maxFrameDataLength) {
      throw new FlashlogError(
        'DERIVE_FRAME_INVALID',
        `${at} frame_data_length at offset ${lengthOffset}: got ${length}, expected at most ${maxFrameDataLength}`,
      );
    }
    const frameData = reader.bytes(length, `${at} frame_data`);
    const lastOffset = reader.offset;
    const isLast = reader.u8(`${at} is_last`);
    if (isLast > 1)
      throw new FlashlogError('DERIVE_FRAME_INVALID', `${at} is_last at offset ${lastOffset}: got ${isLast}, expected 0 or 1`);
    frames.push({ channelId, frameNumber, data: frameData, isLast: isLast === 1, offset });
  }
  if (frames.length === 0) throw new FlashlogError('DERIVE_FRAME_INVALID', 'batcher data has a version byte and no frame');
  return frames;
}

/** The batcher transaction data for `frames` (version 0), the inverse of `parseFrames`. */
export function encodeFrames(frames: readonly Pick<Frame, 'channelId' | 'frameNumber' | 'data' | 'isLast'>[]): Uint8Array {
  const parts: Uint8Array[] = [Uint8Array.of(derivationVersion0)];
  for (const frame of frames) {
    const header = new Uint8Array(22);
    header.set(hexBytes16(frame.channelId), 0);
    const view = new DataView(header.buffer);
    view.setUint16(16, frame.frameNumber);
    view.setUint32(18, frame.data.length);
    parts.push(header, frame.data, Uint8Array.of(frame.isLast ? 1 : 0));
  }
  return concat(parts);
}

function hexBytes16(id: `0x${string}`): Uint8Array {
  if (!isHex(id, { strict: true }) || size(id) !== 16)
    throw new FlashlogError('DERIVE_FRAME_INVALID', `channel id: expected 16 bytes of hex, got ${id}`);
  return hexToBytes(id);
}
