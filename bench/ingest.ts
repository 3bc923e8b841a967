import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { createPayloadBlocks } from '../src/wire/payload-blocks.ts';
import { initialSequencerState, step, type SequencerState } from '../src/chain/sequencer.ts';
import { decodeFrame } from '../src/wire/frame.ts';
import { opRbuilderMessages, opSpecsMessages, sourceMessages, xLayerFrames } from '../test/helpers/feed-formats.ts';
import { sharedPath } from '../test/helpers/shared.ts';
import { from } from 'rxjs';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { allTopics, topics } from '../src/records/topics.ts';
import { testContext } from '../test/helpers/context.ts';
import { createIngest } from '../streams/ingest.ts';

/**
 * Decode + sequence + assemble throughput on one core: the real Base Sepolia sequence (11
 * flashblocks, 24 txs), renumbered into 100 consecutive blocks, replayed in a loop, as brotli
 * binary frames (Base's public feed) and as text frames. Target: >= 5,000 flashblocks/s.
 */
export async function run(): Promise<Record<string, unknown>[]> {
  const messages = JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/base-sepolia-33439826.json'), 'utf8')) as Record<
    string,
    unknown
  >[];
  const texts: string[] = [];
  for (let block = 0; block < 100; block++) {
    const number = 33439826 + block;
    for (const message of messages) {
      texts.push(
        JSON.stringify({
          ...message,
          base: message.base ? { ...(message.base as object), block_number: `0x${number.toString(16)}` } : undefined,
          metadata: { ...(message.metadata as object), block_number: number },
        }),
      );
    }
  }
  const brotliFrames = texts.map((text) =>
    brotliCompressSync(Buffer.from(text), { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 22 } }),
  );
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
  const producers = await producerRows();
  const topology = await measureTopology(brotliFrames);
  return [
    ...producers,
    {
      pipeline:
        'the ingest topology (createIngest: frames -> source -> flashlog.flashblocks + flashlog.blocks, in-memory embedded log), brotli frames',
      'flashblocks/s': Math.round(topology),
      'x target (5,000/s)': topology / target,
      'x Base rate (5/s)': topology / 5,
    },
    {
      pipeline: 'decode+sequence+assemble, brotli frames',
      'flashblocks/s': Math.round(brotliFull),
      'x target (5,000/s)': brotliFull / target,
      'x Base rate (5/s)': brotliFull / 5,
    },
    {
      pipeline: 'decode only, brotli frames',
      'flashblocks/s': Math.round(brotliDecode),
      'x target (5,000/s)': brotliDecode / target,
      'x Base rate (5/s)': brotliDecode / 5,
    },
    {
      pipeline: 'decode+sequence+assemble, text frames',
      'flashblocks/s': Math.round(textFull),
      'x target (5,000/s)': textFull / target,
      'x Base rate (5/s)': textFull / 5,
    },
  ];
}

/**
 * The same real block (Unichain Sepolia 35535698, 5 flashblocks with era A receipts) in each
 * producer's envelope (test/helpers/feed-formats.ts), renumbered into 100 blocks with their own
 * payload ids, as text frames: decode+sequence+assemble throughput relative to Base's format.
 */
async function producerRows(): Promise<Record<string, unknown>[]> {
  const renumber = (messages: Record<string, unknown>[], block: number) =>
    messages.map((message) => {
      const number = 35535698 + block;
      const payloadId = `0x${(0x0300000000000000n + BigInt(block)).toString(16).padStart(16, '0')}`;
      const out: Record<string, unknown> = { ...message, payload_id: payloadId };
      if (message.base) out.base = { ...(message.base as object), block_number: `0x${number.toString(16)}` };
      if (message.static) out.static = { ...(message.static as object), block_number: number };
      if (message.metadata && (message.metadata as { block_number?: number }).block_number !== undefined)
        out.metadata = { ...(message.metadata as object), block_number: number };
      return out;
    });
  const formats: [string, Record<string, unknown>[]][] = [
    ['Base format (the source as sent)', sourceMessages() as Record<string, unknown>[]],
    ['op-rbuilder', opRbuilderMessages()],
    ['X Layer (+ end-of-sequence frame)', xLayerFrames()],
    ['OP specs', await opSpecsMessages()],
  ];
  const options = { maxBytes: 16 * 1024 * 1024 };
  const rates = formats.map(([name, messages]) => {
    const frames = Array.from({ length: 100 }, (_, block) => renumber(messages, block))
      .flat()
      .map((message) => Buffer.from(JSON.stringify(message)));
    const measure = (minMs: number) => {
      let count = 0;
      const started = performance.now();
      while (performance.now() - started < minMs) {
        let state: SequencerState = initialSequencerState();
        const payloadBlocks = createPayloadBlocks();
        for (const frame of frames) {
          const decoded = decodeFrame(frame, { ...options, payloadBlocks });
          if (!decoded.ok) {
            if (decoded.reason === 'end_of_sequence') continue;
            throw new Error(`${name}: ${decoded.detail}`);
          }
          const result = step(state, { type: 'flashblock', flashblock: decoded.flashblock });
          if (result.events[0]?.type !== 'accepted') throw new Error(`${name}: not accepted`);
          state = result.state;
          count++;
        }
      }
      return count / ((performance.now() - started) / 1000);
    };
    measure(200); // warm up
    return [name, measure(1000)] as const;
  });
  const baseline = rates[0]![1];
  return rates.map(([name, rate]) => ({
    pipeline: `decode+sequence+assemble, text frames, ${name}`,
    'flashblocks/s': Math.round(rate),
    'x Base format': rate / baseline,
  }));
}

/**
 * The whole ingest topology as `flashlog ingest` composes it, without an executor: the frames
 * through `createIngest` (decode, de-dup, sequence, publish the flashblock and block records,
 * latency measured per block record) into an in-memory embedded log, until every record is
 * appended. Three passes of the 1,100 frames, each with a fresh log; the best pass counts.
 */
async function measureTopology(frames: Buffer[]): Promise<number> {
  let best = 0;
  for (let pass = 0; pass < 4; pass++) {
    const ctx = testContext();
    const log = createEmbeddedLog({ path: ':memory:' });
    await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
    const now = Date.now();
    const frames$ = from(frames.map((data) => ({ type: 'frame' as const, url: 'bench', data, binary: true, receivedAt: now })));
    const started = performance.now();
    await createIngest(ctx, { log, endpoints: { source: 'flashblocks' }, frames$ }).run();
    const rate = frames.length / ((performance.now() - started) / 1000);
    const [end] = await log.endOffsets(topics.blocks);
    if (Number(end?.offset ?? 0n) !== frames.length) throw new Error(`topology: ${end?.offset} block records, expected ${frames.length}`);
    await ctx.shutdown.run('bench over');
    await log.close();
    if (pass > 0) best = Math.max(best, rate); // the first pass warms up
  }
  return best;
}
