import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { initialSequencerState, step, type SequencerState } from '../src/chain/sequencer.ts';
import { decodeFrame } from '../src/wire/frame.ts';
import { sharedPath } from '../test/helpers/shared.ts';

/**
 * Decode + sequence + assemble throughput on one core: the real Base Sepolia sequence (11
 * flashblocks, 24 txs), renumbered into 100 consecutive blocks, replayed in a loop, as brotli
 * binary frames (Base's public feed) and as text frames. Target: >= 5,000 flashblocks/s.
 */
export async function run(): Promise<Record<string, unknown>[]> {
  const messages = JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/base-sepolia-33439826.json'), 'utf8')) as Record<string, unknown>[];
  const texts: string[] = [];
  for (let block = 0; block < 100; block++) {
    const number = 33439826 + block;
    for (const message of messages) {
      texts.push(JSON.stringify({
        ...message,
        base: message.base ? { ...(message.base as object), block_number: `0x${number.toString(16)}` } : undefined,
        metadata: { ...(message.metadata as object), block_number: number },
      }));
    }
  }
  const brotliFrames = texts.map((text) => brotliCompressSync(Buffer.from(text), { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 22 } }));
  const textFrames = texts.map((text) => Buffer.from(text));
  const options = { maxBytes: 16 * 1024 * 1024 };

  const measure = (frames: Buffer[], sequence: boolean, minMs = 1500) => {
    let count = 0;
    const started = performance.now();
    while (performance.now() - started < minMs) {
      let state: SequencerState = initialSequencerState();
      for (const frame of frames) {
        const decoded = decodeFrame(frame, options);
        if (!decoded.ok) throw new Error(decoded.detail);
        if (sequence) {
          const result = step(state, { type: 'flashblock', flashblock: decoded.flashblock });
          if (result.events[0]?.type !== 'accepted') throw new Error('not accepted');
          state = result.state;
        }
        count++;
      }
    }
    return count / ((performance.now() - started) / 1000);
  };
  measure(brotliFrames, true, 300); // warm up
  const brotliFull = measure(brotliFrames, true);
  const brotliDecode = measure(brotliFrames, false);
  const textFull = measure(textFrames, true);
  const target = 5000;
  return [
    { pipeline: 'decode+sequence+assemble, brotli frames', 'flashblocks/s': Math.round(brotliFull), 'x target (5,000/s)': brotliFull / target, 'x Base rate (5/s)': brotliFull / 5 },
    { pipeline: 'decode only, brotli frames', 'flashblocks/s': Math.round(brotliDecode), 'x target (5,000/s)': brotliDecode / target, 'x Base rate (5/s)': brotliDecode / 5 },
    { pipeline: 'decode+sequence+assemble, text frames', 'flashblocks/s': Math.round(textFull), 'x target (5,000/s)': textFull / target, 'x Base rate (5/s)': textFull / 5 },
  ];
}
