import fc from 'fast-check';
import { bytesToHex, concat } from 'viem';
import { describe, expect, it } from 'vitest';
import { FlashlogError } from '../errors.ts';
import { encodeFrames, parseFrames } from './frames.ts';

const messageOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FlashlogError);
    return (error as Error).message;
  }
  throw new Error('expected an error');
};

const id = `0x${'ab'.repeat(16)}` as const;
const frame = (frameNumber: number, data: number[], isLast = false) => ({
  channelId: id,
  frameNumber,
  data: Uint8Array.from(data),
  isLast,
});

describe('parseFrames', () => {
  it('reads what encodeFrames wrote, for any frames', () => {
    const arbitraryFrame = fc.record({
      channelId: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes) => bytesToHex(bytes)),
      frameNumber: fc.integer({ min: 0, max: 0xffff }),
      data: fc.uint8Array({ maxLength: 300 }),
      isLast: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(arbitraryFrame, { minLength: 1, maxLength: 5 }), (frames) => {
        const parsed = parseFrames(encodeFrames(frames));
        expect(parsed.map(({ offset: _offset, ...rest }) => rest)).toEqual(frames);
      }),
    );
  });

  it('gives each frame its offset in the batcher data', () => {
    const parsed = parseFrames(encodeFrames([frame(0, [1, 2, 3]), frame(1, [4], true)]));
    expect(parsed.map((f) => f.offset)).toEqual([1, 1 + 23 + 3]);
  });

  it('refuses the whole transaction when one frame is bad, naming the frame, the field and the offset', () => {
    const good = encodeFrames([frame(0, [1, 2, 3]), frame(1, [4], true)]);
    expect(messageOf(() => parseFrames(new Uint8Array()))).toContain('batcher data is empty');
    expect(messageOf(() => parseFrames(concat([Uint8Array.of(1), good.subarray(1)])))).toContain(
      'version byte at offset 0: got 1, expected 0',
    );
    expect(messageOf(() => parseFrames(Uint8Array.of(0)))).toContain('no frame');
    const badLast = Uint8Array.from(good);
    badLast[good.length - 1] = 2;
    expect(messageOf(() => parseFrames(badLast))).toBe(`frame 1 is_last at offset ${good.length - 1}: got 2, expected 0 or 1`);
    expect(messageOf(() => parseFrames(good.subarray(0, good.length - 3)))).toBe(
      `frame 1 frame_data_length at offset ${27 + 18}: needs 4 bytes, 3 left`,
    );
    const huge = Uint8Array.from(good);
    new DataView(huge.buffer).setUint32(1 + 18, 1_000_001);
    expect(messageOf(() => parseFrames(huge))).toBe('frame 0 frame_data_length at offset 19: got 1000001, expected at most 1000000');
  });
});
