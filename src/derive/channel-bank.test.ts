import { describe, expect, it } from 'vitest';
import { createChannelBank, type ChannelEvent } from './channel-bank.ts';
import type { Frame } from './frames.ts';
import { derivationRules } from './rules.ts';

/** Channel bank scenarios from the spec's rules (derivation.md "Channel Bank"; holocene/derivation.md). */
const A = `0x${'aa'.repeat(16)}` as const;
const B = `0x${'bb'.repeat(16)}` as const;
const f = (channelId: `0x${string}`, frameNumber: number, data: string, isLast = false): Frame => ({
  channelId,
  frameNumber,
  data: new TextEncoder().encode(data),
  isLast,
  offset: 0,
});
const summary = (events: ChannelEvent[]) =>
  events.map((event) =>
    event.type === 'ready'
      ? `ready ${event.channel.id.slice(2, 4)} ${new TextDecoder().decode(event.channel.data)}`
      : event.type === 'frameDropped'
        ? `frame ${event.channelId.slice(2, 4)}:${event.frameNumber} dropped: ${event.reason}`
        : `channel ${event.channelId.slice(2, 4)} dropped: ${event.reason}`,
  );

describe('channel bank before Holocene', () => {
  const rules = { ...derivationRules('granite') };

  it('assembles frames out of order and across transactions, dropping duplicates and a second close', () => {
    const bank = createChannelBank(rules);
    expect(summary(bank.ingest([f(A, 2, 'c', true), f(A, 0, 'a')], 10))).toEqual([]);
    expect(summary(bank.ingest([f(A, 0, 'x'), f(A, 3, 'd', true), f(A, 1, 'b')], 11))).toEqual([
      'frame aa:0 dropped: duplicate frame number',
      'frame aa:3 dropped: a second closing frame for a closed channel',
      'ready aa abc',
    ]);
    expect(bank.open()).toEqual([]);
  });

  it('prunes the frames above a closing frame, and refuses frames past it', () => {
    const bank = createChannelBank(rules);
    bank.ingest([f(A, 0, 'a'), f(A, 3, 'z')], 1);
    expect(summary(bank.ingest([f(A, 1, 'b', true), f(A, 2, 'c')], 1))).toEqual(['ready aa ab']);
    // The channel was read: frame 2 opens a new channel of the same id (ids may be reused once pruned).
    expect(bank.open()).toEqual([{ id: A, openL1Block: 1, frameNumbers: [2], closed: false }]);
    const again = createChannelBank(rules);
    again.ingest([f(A, 1, 'b', true)], 1);
    expect(summary(again.ingest([f(A, 2, 'c')], 1))).toEqual(['frame aa:2 dropped: frame number past the closing frame 1']);
  });

  it('times a channel out after channel_timeout L1 blocks (50 from Granite) and drops its late frames', () => {
    const bank = createChannelBank(rules);
    bank.ingest([f(A, 0, 'a')], 100);
    // The timed-out channel goes before the next frame is taken: the late frame opens a channel of its own.
    expect(summary(bank.ingest([f(A, 1, 'b', true)], 151))).toEqual(['channel aa dropped: timed out (opened at L1 block 100)']);
    expect(bank.open()).toEqual([{ id: A, openL1Block: 151, frameNumbers: [1], closed: true }]);
    const inTime = createChannelBank(rules);
    inTime.ingest([f(A, 0, 'a')], 100);
    expect(summary(inTime.ingest([f(A, 1, 'b', true)], 150))).toEqual(['ready aa ab']);
    expect(derivationRules('fjord').channelTimeout).toBe(300);
  });

  it('hands out only the first channel before Canyon, the first ready one after', () => {
    for (const [fork, expected] of [
      ['bedrock', [[], ['ready aa a', 'ready bb b']]],
      ['canyon', [['ready bb b'], ['ready aa a']]],
    ] as const) {
      const bank = createChannelBank(derivationRules(fork));
      const first = summary(bank.ingest([f(A, 0, 'a'), f(B, 0, 'b', true)], 1));
      const second = summary(bank.ingest([f(A, 1, '', true)], 1));
      expect([first, second]).toEqual(expected);
    }
  });

  it('prunes whole channels from the front while the bank is over its size (data + 200 bytes a frame)', () => {
    const bank = createChannelBank({ ...rules, maxChannelBankSize: 2 * 200 + 10 });
    bank.ingest([f(A, 0, 'aaaaa')], 1);
    expect(summary(bank.ingest([f(B, 0, 'bbbbb')], 1))).toEqual([]);
    expect(summary(bank.ingest([f(B, 1, 'b')], 1))).toEqual(['channel aa dropped: pruned: the channel bank held more than 410 bytes']);
    expect(bank.open().map((channel) => [channel.id, channel.frameNumbers])).toEqual([[B, [0, 1]]]);
  });
});

describe('channel bank from Holocene', () => {
  const rules = derivationRules('holocene');

  it('drops out-of-order frames of a transaction, keeps in-order ones', () => {
    const bank = createChannelBank(rules);
    expect(summary(bank.ingest([f(A, 0, 'a'), f(A, 2, 'c'), f(A, 1, 'b', true)], 1))).toEqual([
      'frame aa:2 dropped: out of order: expected frame 1',
      'ready aa ab',
    ]);
  });

  it('a first frame drops the unclosed channel before it, within a transaction and across transactions', () => {
    const bank = createChannelBank(rules);
    expect(summary(bank.ingest([f(A, 0, 'a'), f(B, 0, 'b')], 1))).toEqual([
      'frame aa:0 dropped: its channel was not closed before a new channel started',
    ]);
    expect(summary(bank.ingest([f(A, 0, 'x')], 2))).toEqual(['channel bb dropped: replaced by a new channel before it closed']);
    expect(summary(bank.ingest([f(B, 1, 'y', true)], 2))).toEqual([`frame bb:1 dropped: belongs to another channel than the open ${A}`]);
    expect(summary(bank.ingest([f(A, 1, 'y', true)], 3))).toEqual(['ready aa xy']);
    expect(summary(bank.ingest([f(B, 3, 'q')], 3))).toEqual(['frame bb:3 dropped: a non-first frame with no channel open']);
  });

  it('drops the staging channel past MAX_RLP_BYTES_PER_CHANNEL, and on timeout', () => {
    const small = createChannelBank({ ...rules, maxRlpBytesPerChannel: 450 });
    expect(summary(small.ingest([f(A, 0, 'a'.repeat(100)), f(A, 1, 'b'.repeat(100))], 1))).toEqual([
      'channel aa dropped: larger than 450 bytes',
    ]);
    const bank = createChannelBank(rules);
    bank.ingest([f(A, 0, 'a')], 1);
    expect(summary(bank.ingest([f(A, 1, 'b', true)], 52))).toEqual([
      'channel aa dropped: timed out (opened at L1 block 1)',
      'frame aa:1 dropped: a non-first frame with no channel open',
    ]);
    bank.ingest([f(B, 0, 'a')], 60);
    expect(summary(bank.advance(111))).toEqual(['channel bb dropped: timed out (opened at L1 block 60)']);
  });
});
