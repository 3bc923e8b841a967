import type { LogRecord } from '../log/port.ts';
import { topics } from '../records/topics.ts';
import { apply, initialViewState, type PendingBlock, type ViewChange, type ViewInput, type ViewState } from './state.ts';

/**
 * The view's start-up replay with block records deferred: the same final state as applying every
 * input in order, without parsing the block records whose block is superseded before the end.
 *
 * A block record carries its block's transactions so far and only the new receipts, so a block's
 * content needs every one of its records; but almost every block of a long log becomes canonical
 * (or falls out of the pending window, `maxPendingBlocks`) before the replay ends, and the view
 * then drops it. So, during the replay, once a block is held (its first record applied as usual,
 * which settles whether it is held at all), its later records are kept as text, in order, beside
 * it: its tail. The tail is applied (parsed, validated, applied exactly as `apply` does) only when
 * something needs the block's content:
 * - a flashlog.chain record other than sealed/safe/finalized (a reorg or a replaced unsafe block
 *   reads the block's logs or hash): every tail is applied first;
 * - a block record whose number cannot be read safely from its text (`blockNumberOfRecordText`): every tail
 *   is applied first, and the record goes the usual way;
 * - the end of the replay (`finish`): the tails of the blocks still pending or dropped.
 * A block that leaves the view (out of the pending window, or out of the dropped list) takes its
 * tail with it unparsed, and so does a block record at or below the canonical head (the view
 * ignores those): these are `skipped`, counted and never validated.
 *
 * It is an invariant that a block's tail only holds records of that block made while it was held,
 * and that applying them later gives the same block: `apply` reads nothing of another block when
 * it applies a block record (only the block of the same number and the canonical head, and the
 * head only moves after the tails of what it passes are applied or taken along to `dropped`).
 *
 * Memory: a tail holds the records of one block since the view first held it (its flashblocks, a
 * handful to a few dozen), for at most the pending and the dropped blocks.
 *
 * What differs from applying every record: `applied` and `invalid` do not count skipped records
 * (a skipped record may have been invalid: nobody knows), and `lastInvalid` is the reason of the
 * last record found invalid when it was applied, which may be an earlier record than the last
 * invalid one read. The states seen before `finish` hold the right offsets, canonical head and
 * blocks held, but a block's content as of its first record (plus what has been applied).
 *
 * @example
 * const replay = createDeferredReplay(initialViewState());
 * for (const record of records) replay.apply({ type: 'record', record });
 * const state = replay.finish(); // deep-equal (but for the counts above) to records.reduce(apply)
 */
export interface DeferredReplay {
  apply(input: ViewInput): void;
  /** The view so far (see above: blocks' content may lag). */
  state(): ViewState;
  /** Applies every tail left and returns the view; the replay takes no more inputs after it. */
  finish(): ViewState;
  /** Block records never parsed: their block was superseded before the end of the replay. */
  skipped(): number;
  /** Block records kept as text, waiting in a tail. */
  deferred(): number;
}

export function createDeferredReplay(start: ViewState): DeferredReplay {
  let state = start;
  const tails = new Map<PendingBlock, LogRecord[]>();
  let skipped = 0;
  let deferred = 0;
  // The block whose tail holds the last input, if it is deferred: its change is the view's change.
  let lastDeferredTo: PendingBlock | undefined;
  let lastChange: ViewChange | undefined;
  let finished = false;

  /** Applies every tail, each block alone (see the invariant above), and puts the blocks back. */
  const applyTails = (): void => {
    if (tails.size === 0) return;
    let { blocks, dropped, applied, invalid, lastInvalid } = state;
    for (const [base, tail] of tails) {
      let alone: ViewState = { ...initialViewState(), blocks: [base] };
      for (const record of tail) alone = apply(alone, { type: 'record', record });
      const block = alone.blocks[0]!;
      blocks = blocks.map((candidate) => (candidate === base ? block : candidate));
      dropped = dropped.map((candidate) => (candidate === base ? block : candidate));
      applied += alone.applied;
      invalid += alone.invalid;
      if (alone.lastInvalid !== null) lastInvalid = alone.lastInvalid;
      if (base === lastDeferredTo) lastChange = alone.change;
      deferred -= tail.length;
    }
    tails.clear();
    state = { ...state, blocks, dropped, applied, invalid, lastInvalid };
  };

  /** Tails of blocks the view no longer holds are skipped. */
  const forgetLeft = (): void => {
    for (const [base, tail] of tails) {
      if (state.blocks.includes(base) || state.dropped.includes(base)) continue;
      skipped += tail.length;
      deferred -= tail.length;
      tails.delete(base);
    }
  };

  /** The input without applying it (offsets and seq move as `apply` would move them). */
  const pass = (record: LogRecord, change: ViewChange | undefined): void => {
    state = {
      ...state,
      offsets: { ...state.offsets, [`${record.topic}/${record.partition}`]: record.offset + 1n },
      seq: state.seq + 1,
      ...(change ? { change } : {}),
    };
  };

  return {
    apply(input) {
      if (finished) throw new Error('the replay is finished');
      if (input.type === 'record' && input.record.topic === topics.blocks) {
        const { record } = input;
        const number = blockNumberOfRecordText(record.value);
        if (number !== undefined && number <= state.canonical) {
          // `apply` validates such a record and changes nothing else.
          skipped++;
          lastDeferredTo = undefined;
          pass(record, noChange);
          return;
        }
        const base = number === undefined ? undefined : state.blocks.find((block) => block.number === number);
        if (base !== undefined) {
          const tail = tails.get(base);
          if (tail) tail.push(record);
          else tails.set(base, [record]);
          deferred++;
          lastDeferredTo = base;
          pass(record, undefined);
          return;
        }
        if (number === undefined) applyTails();
      } else if (input.type === 'record' && input.record.topic === topics.chain && chainNeedsBlocks(input.record.value)) {
        applyTails();
      }
      const before = state;
      state = apply(state, input);
      lastDeferredTo = undefined;
      if (tails.size > 0 && (state.blocks !== before.blocks || state.dropped !== before.dropped)) forgetLeft();
    },
    state: () => state,
    finish() {
      if (!finished) {
        finished = true;
        const last = lastDeferredTo;
        lastChange = undefined;
        applyTails();
        if (last !== undefined && lastChange !== undefined) state = { ...state, change: lastChange };
      }
      return state;
    },
    skipped: () => skipped,
    deferred: () => deferred,
  };
}

const noChange: ViewChange = { type: 'none' };

const blockNumberKey = '"blockNumber"';

/**
 * The top-level `blockNumber` of a block record's JSON text, read without parsing it; undefined
 * when that cannot be done safely. Safe means JSON.parse would give the same number: the text has
 * no backslash (so no key is spelled with an escape), and every `"blockNumber"` in it (the
 * top-level one, and those of its receipts and logs) is followed by `:"` and the same hex number
 * (so the top-level one, whichever of them JSON.parse keeps, is that number). A record it returns
 * undefined for goes the usual way. A text that is no valid record may still get a number: it is
 * then invalid whenever it is applied, as it would have been.
 */
export function blockNumberOfRecordText(text: string): bigint | undefined {
  let at = text.indexOf(blockNumberKey);
  if (at < 0 || text.indexOf('\\') >= 0) return undefined;
  const start = at + blockNumberKey.length + 2;
  if (text.charCodeAt(start - 2) !== 58 /* : */ || text.charCodeAt(start - 1) !== 34 /* " */) return undefined;
  const end = text.indexOf('"', start);
  if (end < 0 || end - start > 66) return undefined;
  const hex = text.slice(start, end);
  if (!quantityPattern.test(hex)) return undefined;
  const occurrence = text.slice(at, end + 1);
  while ((at = text.indexOf(blockNumberKey, at + blockNumberKey.length)) >= 0) {
    if (!text.startsWith(occurrence, at)) return undefined;
  }
  return BigInt(hex);
}

const quantityPattern = /^0x[0-9a-fA-F]{1,64}$/;

/**
 * Whether applying this flashlog.chain record may read a block's content: anything but a sealed,
 * safe, finalized or gap record (those move the canonical head or nothing). A text that is not JSON is
 * rejected by `apply` without reading any block.
 */
function chainNeedsBlocks(text: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  return type !== 'sealed' && type !== 'safe' && type !== 'finalized' && type !== 'gap';
}
