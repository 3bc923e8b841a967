import { concat } from 'viem';
import type { Frame } from './frames.ts';

/**
 * Frames → channels (specs/protocol/derivation.md, "Channel Bank"; specs/protocol/holocene/
 * derivation.md, "Frame Queue" and "Channel Bank").
 *
 * Before Holocene, the bank buffers any number of channels in FIFO order (by first frame seen),
 * takes frames in any order, drops duplicates and frames of timed-out channels, prunes whole
 * channels from the front while the bank holds more than `maxChannelBankSize` bytes (a channel's
 * size is its buffered frame data plus 200 bytes per frame), and hands out a channel once it is
 * closed and its frames are contiguous: only the first channel before Canyon, the first ready one
 * after.
 *
 * From Holocene, frames must come in order. Each batcher transaction's frames are pruned first (a
 * non-first frame that does not follow the frame before it is dropped; a first frame drops the
 * unclosed frames of the channel before it), and the bank holds one staging channel: a first frame
 * replaces it, a frame that is not its next one is dropped, and it is dropped when its size passes
 * `maxRlpBytesPerChannel`.
 *
 * A channel times out when `currentL1Block > openL1Block + channelTimeout`; a timed-out channel
 * takes no more frames and is dropped.
 */

export interface ChannelRules {
  /** Holocene's strict frame ordering and single staging channel. */
  readonly holocene: boolean;
  /** Before Holocene: read the first ready channel in FIFO order (Canyon), not only the first channel. */
  readonly canyon: boolean;
  /** In L1 blocks: the rollup config's `channel_timeout`, 50 from Granite. */
  readonly channelTimeout: number;
  /** Before Holocene: the bank's total size (100,000,000 bytes; 1,000,000,000 from Fjord). */
  readonly maxChannelBankSize: number;
  /** From Holocene: the staging channel's size (10,000,000 bytes; 100,000,000 from Fjord). */
  readonly maxRlpBytesPerChannel: number;
}

/** The frame overhead the channel size counts per frame. */
export const channelFrameOverhead = 200;

export interface ReadyChannel {
  readonly id: `0x${string}`;
  /** The L1 block the channel's first frame came in. */
  readonly openL1Block: number;
  /** The frames in order, 0..n. */
  readonly frames: readonly Frame[];
  /** The frames' data, concatenated: the compressed channel. */
  readonly data: Uint8Array;
}

/** What the bank did with the frames it was given, in order. */
export type ChannelEvent =
  | { readonly type: 'ready'; readonly channel: ReadyChannel }
  | { readonly type: 'frameDropped'; readonly channelId: `0x${string}`; readonly frameNumber: number; readonly reason: string }
  | { readonly type: 'channelDropped'; readonly channelId: `0x${string}`; readonly reason: string };

export interface ChannelBank {
  /** Takes one batcher transaction's frames, read from L1 block `l1Block`. */
  ingest(frames: readonly Frame[], l1Block: number): ChannelEvent[];
  /** Drops the channels that have timed out by `l1Block` (derivation moves to the next L1 block). */
  advance(l1Block: number): ChannelEvent[];
  /** The channels still open (not ready), for an operator's view. */
  open(): { id: `0x${string}`; openL1Block: number; frameNumbers: number[]; closed: boolean }[];
}

interface OpenChannel {
  readonly id: `0x${string}`;
  readonly openL1Block: number;
  readonly inputs: Map<number, Frame>;
  size: number;
  closed: boolean;
  endFrameNumber: number;
}

const frameSize = (frame: Frame) => frame.data.length + channelFrameOverhead;

/**
 * Adds a frame to a channel, or says why not (the checks the spec lists, in op-node's order).
 * `inOrder` is Holocene's rule that the frame must be the next one.
 */
function addFrame(channel: OpenChannel, frame: Frame, inOrder: boolean): string | undefined {
  if (frame.isLast && channel.closed) return 'a second closing frame for a closed channel';
  if (channel.inputs.has(frame.frameNumber)) return 'duplicate frame number';
  if (channel.closed && frame.frameNumber >= channel.endFrameNumber) return `frame number past the closing frame ${channel.endFrameNumber}`;
  if (inOrder && frame.frameNumber !== channel.inputs.size) return `out of order: expected frame ${channel.inputs.size}`;
  if (frame.isLast) {
    channel.closed = true;
    channel.endFrameNumber = frame.frameNumber;
    // A closing frame removes the frames numbered above it.
    for (const [number, pruned] of channel.inputs) {
      if (number > frame.frameNumber) {
        channel.inputs.delete(number);
        channel.size -= frameSize(pruned);
      }
    }
  }
  channel.inputs.set(frame.frameNumber, frame);
  channel.size += frameSize(frame);
  return undefined;
}

const isReady = (channel: OpenChannel) =>
  channel.closed &&
  channel.inputs.size === channel.endFrameNumber + 1 &&
  [...channel.inputs.keys()].every((n) => n <= channel.endFrameNumber);

function toReady(channel: OpenChannel): ReadyChannel {
  const frames = [...channel.inputs.values()].sort((a, b) => a.frameNumber - b.frameNumber);
  return { id: channel.id, openL1Block: channel.openL1Block, frames, data: concat(frames.map((frame) => frame.data)) };
}

/**
 * Holocene's frame queue rule, applied to one batcher transaction's frames: what stays is, per
 * channel, ordered and contiguous frames, and a first frame follows a closing frame or nothing.
 */
export function pruneFrameQueue(frames: readonly Frame[], dropped: (frame: Frame, reason: string) => void): Frame[] {
  const queue = [...frames];
  for (let i = 0; i < queue.length - 1;) {
    const current = queue[i]!;
    const next = queue[i + 1]!;
    if (current.channelId === next.channelId) {
      if (current.isLast || next.frameNumber !== current.frameNumber + 1) {
        dropped(
          next,
          current.isLast ? 'follows the closing frame of its channel' : `out of order: expected frame ${current.frameNumber + 1}`,
        );
        queue.splice(i + 1, 1);
        continue;
      }
    } else if (next.frameNumber === 0 && !current.isLast) {
      dropped(current, 'its channel was not closed before a new channel started');
      queue.splice(i, 1);
      if (i > 0) i--;
      continue;
    } else if (next.frameNumber !== 0) {
      dropped(next, 'a non-first frame of another channel than the frame before it');
      queue.splice(i + 1, 1);
      continue;
    }
    i++;
  }
  return queue;
}

/**
 * A channel bank with the rules of one fork. It is pure and synchronous: the caller feeds it
 * batcher transactions in L1 order and reads what became ready.
 *
 * @example
 * const bank = createChannelBank({ holocene: true, canyon: true, channelTimeout: 50, maxChannelBankSize: 1e9, maxRlpBytesPerChannel: 1e8 });
 * const ready = bank.ingest(parseFrames(calldata), 20_000_000).filter((e) => e.type === 'ready');
 */
export function createChannelBank(rules: ChannelRules): ChannelBank {
  const channels = new Map<`0x${string}`, OpenChannel>();
  let staging: OpenChannel | undefined;
  const timedOut = (channel: OpenChannel, l1Block: number) => channel.openL1Block + rules.channelTimeout < l1Block;

  /** Before Holocene: hand out ready channels and drop timed-out ones at the front, as op-node's Read does. */
  const drain = (l1Block: number, events: ChannelEvent[]) => {
    for (;;) {
      const first = channels.values().next().value;
      if (!first) return;
      if (timedOut(first, l1Block)) {
        channels.delete(first.id);
        events.push({ type: 'channelDropped', channelId: first.id, reason: `timed out (opened at L1 block ${first.openL1Block})` });
        continue;
      }
      const candidates = rules.canyon ? [...channels.values()] : [first];
      const ready = candidates.find((channel) => !timedOut(channel, l1Block) && isReady(channel));
      if (!ready) return;
      channels.delete(ready.id);
      events.push({ type: 'ready', channel: toReady(ready) });
    }
  };

  const ingestBank = (frame: Frame, l1Block: number, events: ChannelEvent[]) => {
    let channel = channels.get(frame.channelId);
    if (!channel) {
      channel = { id: frame.channelId, openL1Block: l1Block, inputs: new Map(), size: 0, closed: false, endFrameNumber: 0 };
      channels.set(frame.channelId, channel);
    }
    if (timedOut(channel, l1Block)) {
      events.push({ type: 'frameDropped', channelId: frame.channelId, frameNumber: frame.frameNumber, reason: 'its channel timed out' });
      return;
    }
    const refused = addFrame(channel, frame, false);
    if (refused) {
      events.push({ type: 'frameDropped', channelId: frame.channelId, frameNumber: frame.frameNumber, reason: refused });
      return;
    }
    let total = [...channels.values()].reduce((sum, open) => sum + open.size, 0);
    for (const [id, open] of channels) {
      if (total <= rules.maxChannelBankSize) break;
      channels.delete(id);
      total -= open.size;
      events.push({
        type: 'channelDropped',
        channelId: id,
        reason: `pruned: the channel bank held more than ${rules.maxChannelBankSize} bytes`,
      });
    }
  };

  const ingestStaging = (frame: Frame, l1Block: number, events: ChannelEvent[]) => {
    if (staging && timedOut(staging, l1Block)) {
      events.push({ type: 'channelDropped', channelId: staging.id, reason: `timed out (opened at L1 block ${staging.openL1Block})` });
      staging = undefined;
    }
    if (frame.frameNumber === 0) {
      if (staging) events.push({ type: 'channelDropped', channelId: staging.id, reason: 'replaced by a new channel before it closed' });
      staging = { id: frame.channelId, openL1Block: l1Block, inputs: new Map(), size: 0, closed: false, endFrameNumber: 0 };
    }
    const drop = (reason: string) =>
      events.push({ type: 'frameDropped', channelId: frame.channelId, frameNumber: frame.frameNumber, reason });
    if (!staging) return drop('a non-first frame with no channel open');
    if (staging.id !== frame.channelId) return drop(`belongs to another channel than the open ${staging.id}`);
    const refused = addFrame(staging, frame, true);
    if (refused) return drop(refused);
    if (staging.size > rules.maxRlpBytesPerChannel) {
      events.push({ type: 'channelDropped', channelId: staging.id, reason: `larger than ${rules.maxRlpBytesPerChannel} bytes` });
      staging = undefined;
      return;
    }
    if (frame.isLast) {
      events.push({ type: 'ready', channel: toReady(staging) });
      staging = undefined;
    }
  };

  return {
    ingest(frames, l1Block) {
      const events: ChannelEvent[] = [];
      if (rules.holocene) {
        const kept = pruneFrameQueue(frames, (frame, reason) =>
          events.push({ type: 'frameDropped', channelId: frame.channelId, frameNumber: frame.frameNumber, reason }),
        );
        for (const frame of kept) ingestStaging(frame, l1Block, events);
      } else {
        drain(l1Block, events);
        for (const frame of frames) {
          ingestBank(frame, l1Block, events);
          drain(l1Block, events);
        }
      }
      return events;
    },
    advance(l1Block) {
      const events: ChannelEvent[] = [];
      if (rules.holocene) {
        if (staging && timedOut(staging, l1Block)) {
          events.push({ type: 'channelDropped', channelId: staging.id, reason: `timed out (opened at L1 block ${staging.openL1Block})` });
          staging = undefined;
        }
      } else {
        // Only the first channel is dropped on a timeout (and those behind it as they come first),
        // as op-node's bank does: a timed-out channel further back still counts to the bank's size.
        drain(l1Block, events);
      }
      return events;
    },
    open() {
      const list = rules.holocene ? (staging ? [staging] : []) : [...channels.values()];
      return list.map((channel) => ({
        id: channel.id,
        openL1Block: channel.openL1Block,
        frameNumbers: [...channel.inputs.keys()].sort((a, b) => a - b),
        closed: channel.closed,
      }));
    },
  };
}
