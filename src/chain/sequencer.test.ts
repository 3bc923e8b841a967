import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../test/helpers/shared.ts';
import { flashblockSchema, type Flashblock } from '../schemas/flashblock.ts';
import { initialSequencerState, step, type SequencerEvent, type SequencerInput, type SequencerState } from './sequencer.ts';

const load = (name: string): Flashblock[] =>
  (JSON.parse(readFileSync(sharedPath(`fixtures/flashblocks/${name}`), 'utf8')) as unknown[]).map((message) =>
    flashblockSchema.parse(message),
  );
const sepolia = load('base-sepolia-33439826.json');
const unichain = load('unichain-sepolia-35535698.json');

/** The same block renumbered, to build multi-block feeds from one real sequence. */
const renumber = (flashblock: Flashblock, number: number): Flashblock => ({
  ...flashblock,
  base: flashblock.base ? { ...flashblock.base, block_number: `0x${number.toString(16)}` } : flashblock.base,
  metadata: { ...flashblock.metadata, block_number: number },
});

function run(inputs: SequencerInput[], state: SequencerState = initialSequencerState()) {
  const events: SequencerEvent[] = [];
  for (const input of inputs) {
    const result = step(state, input);
    state = result.state;
    events.push(...result.events);
  }
  return { state, events };
}
const feed = (flashblocks: Flashblock[]): SequencerInput[] => flashblocks.map((flashblock) => ({ type: 'flashblock', flashblock }));
const summary = (events: SequencerEvent[]) =>
  events.map((event) =>
    event.type === 'rejected'
      ? `${event.reason}:${event.flashblock.metadata.block_number}/${event.flashblock.index}`
      : `${event.type}:${event.flashblock.metadata.block_number}/${event.flashblock.index}`,
  );

describe('sequencer', () => {
  it('joining a feed mid-block (every fresh start): that block is dropped as joined, not as a bad first index; the next starts', () => {
    const [first, second] = [sepolia.map((f) => renumber(f, 10)), sepolia.map((f) => renumber(f, 11))];
    const { state, events } = run(feed([first[3]!, first[4]!, second[0]!, second[1]!]));
    expect(summary(events)).toEqual(['joined_mid_block:10/3', 'joined_mid_block:10/4', 'accepted:11/0', 'accepted:11/1']);
    expect(events[2]).toMatchObject({ kind: 'new_block', skippedBlocks: 0n });
    expect(state.current!.blockNumber).toBe(11n);
    // Once a block has started, a block that does not start at 0 is the feed's fault again.
    const later = run(feed([renumber(sepolia[3]!, 12)]), state);
    expect(summary(later.events)).toEqual(['bad_first_index:12/3']);
  });

  it('assembles the Base Sepolia sequence to the values its source test asserts', () => {
    const { state, events } = run(feed(sepolia));
    expect(events.every((event) => event.type === 'accepted')).toBe(true);
    const block = state.current!;
    expect(block.blockNumber).toBe(33439826n);
    expect(block.index).toBe(10);
    expect(block.header.parentHash).toBe('0x6ffd2714d5af6c412c57db3f664a5a127516573bbd987fd242d06f71ea662741');
    expect(block.header.timestamp).toBe('0x690fdf84');
    expect(block.header.miner).toBe('0x4200000000000000000000000000000000000011');
    expect(block.header.gasLimit).toBe('0x3938700');
    expect(block.header.gasUsed).toBe('0x49f43c');
    expect(block.header.stateRoot).toBe(`0x${'0'.repeat(64)}`);
    expect(block.header.flashblockHash).toBe('0x2b440a266840a96993d85d45d1de1e81f7a859aaac4654dcd5a990ffa2ef947b');
    expect(block.header.receiptsRoot).toBe('0xaa280e93aa4a7d3f616ad391404411abbeebe8bc8fb1ed9b3ef4d0a42bf64ccd');
    expect(block.header.withdrawalsRoot).toBe('0x77b0fb1616a212bd7cf33d7c28651f19bf6093b2c5f1967e674ec861aeaf9d44');
    expect(block.header.parentBeaconBlockRoot).toBe('0xf058b1e43890ed5f838bd07e77db06d075d894343d1b31f6099a345b0d8f7d1b');
    expect(block.transactions).toHaveLength(24);
    expect(block.transactions[0]!.hash).toBe('0x68fdd667a6f50d56d4dad5982098f79df89a512bebe32403ec1d203c9be4a292');
    expect(block.transactions[23]!.hash).toBe('0xfa740191aa9c7bc5149ac691a3fa026a92fdafabc10e976f1b1036d65b593018');
    expect(block.firstNew).toBe(22);
  });

  it('assembles the Unichain sequence (base: null after index 0) to the real block', () => {
    const { state } = run(feed(unichain));
    expect(state.current!.header.gasUsed).toBe('0x32138');
    expect(state.current!.header.flashblockHash).toBe('0xc463a3120c35268f610d969f5608b479332ef10953af77c7a6be806195831196');
    expect(state.current!.header.stateRoot).toBe('0x5615e4342d231c352438f0ba6a8f0f641459f67961961764b781a909969b28ad');
    expect(state.current!.transactions.map((tx) => tx.hash)).toEqual([
      '0x613834aaeeb676fb45e312531c0cac40485a2c1b7b8ad8d648e5034dddfb5f03',
      '0x89f7852587dca7dd2f31b02f3a93f47669a82784025d607ec7c336b66af84a19',
      '0x8416aa3bb024ea5dce8fc00d21a500df4e782743bdf245589b5aba920324df11',
      '0x9afeb04e8858ec2c17d1f6543fc3c00772ef05a7177733770c186cee02c67112',
      '0x68e4cb3cafd045680f66411af5c22bd4f239972551c668fde34fb495a07c06e7',
      '0x6d65b11050eee84c3f492106ca95057825d34274b5ca9bcf533885a7ff238d39',
    ]);
  });

  it('ignores duplicates, drops a block after a gap and a block that does not start at 0', () => {
    const [a0, a1, a2, a3, a4] = unichain.map((flashblock) => renumber(flashblock, 10)) as Flashblock[];
    const b = unichain.map((flashblock) => renumber(flashblock, 11));
    const c = unichain.map((flashblock) => renumber(flashblock, 12));
    const d = unichain.map((flashblock) => renumber(flashblock, 13));
    const { events, state } = run(
      feed([
        a0!,
        a1!,
        a1!,
        a0!,
        a2!,
        a4!,
        a3!, // duplicate, duplicate, gap (2 -> 4), then dropped
        b[0]!,
        b[1]!, // block 11 fine
        c[3]!,
        c[4]!, // block 12 starts at index 3: dropped
        d[0]!,
        d[1]!, // block 13 starts again
      ]),
    );
    expect(summary(events)).toEqual([
      'accepted:10/0',
      'accepted:10/1',
      'duplicate:10/1',
      'duplicate:10/0',
      'accepted:10/2',
      'gap:10/4',
      'dropped_block:10/3',
      'accepted:11/0',
      'accepted:11/1',
      'bad_first_index:12/3',
      'dropped_block:12/4',
      'accepted:13/0',
      'accepted:13/1',
    ]);
    expect(state.current!.blockNumber).toBe(13n);
    const newBlock = events.find((event) => event.type === 'accepted' && event.flashblock === d[0]);
    expect(newBlock).toMatchObject({ kind: 'new_block', skippedBlocks: 1n });
  });

  it('holds flashblocks until their parent is canonical, up to the limit ahead', () => {
    const b = (n: number) => unichain.map((flashblock) => renumber(flashblock, n));
    const { events, state } = run(
      [
        { type: 'canonical', blockNumber: 100n },
        ...feed([b(103)[0]!, b(103)[1]!, b(110)[0]!]),
        { type: 'canonical', blockNumber: 101n },
        { type: 'canonical', blockNumber: 102n },
        ...feed([b(103)[2]!, b(99)[0]!]),
      ],
      initialSequencerState(5),
    );
    expect(summary(events)).toEqual([
      'buffered:103/0',
      'buffered:103/1',
      'too_far_ahead:110/0',
      'accepted:103/0',
      'accepted:103/1',
      'accepted:103/2',
      'stale:99/0',
    ]);
    expect(state.held).toHaveLength(0);
  });
});
