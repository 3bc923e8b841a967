import { from, mergeMap, type Observable } from 'rxjs';
import { fillPlan } from '../chain/resume.ts';
import { errorMessage } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, type Registry } from '../obs/metrics.ts';
import { createNodeReader, type ReadBlock } from './node-reader.ts';
import type { SourceEvent } from './port.ts';

/**
 * The flashblocks source's backfill: blocks the feed never showed (a restart, a cut feed) are
 * read sealed from the node, block and receipts, as the blocks source reads its blocks, and
 * published the same way (`grew` with the node's receipts). What --max-backfill-blocks does not
 * allow, or the node does not give within `waitMs`, is a `gap` (src/chain/resume.ts, fillPlan).
 *
 *   last block published (the log's last after a restart) + next block from the feed
 *     -> fillPlan -> gap? -> eth_getBlockByNumber + receipts, oldest first -> grew (receipts from the node)
 *
 * The node may not hold the newest missing blocks yet (a flashblocks builder is ahead of it by
 * about a block): a block it does not have is asked again every `retryMs`, for up to `waitMs`.
 */
export interface SealedBackfillOptions {
  readonly rpc: Upstream;
  readonly maxBlocks: number;
  readonly retryMs?: number;
  readonly waitMs?: number;
  /** True once the source is stopping: the waiting ends. */
  readonly stopped: () => boolean;
  readonly logger: Logger;
  readonly metrics: Registry;
}

export interface SealedBackfill {
  /** The events that fill the blocks between `last` and `next` (exclusive): grew for each block read, a gap for the rest. */
  fill(last: bigint | null, next: bigint): Promise<SourceEvent[]>;
}

export function createSealedBackfill(options: SealedBackfillOptions): SealedBackfill {
  const { logger } = options;
  const reader = createNodeReader(options.rpc);
  const filled = counter(
    options.metrics,
    'flashlog_ingest_backfilled_total',
    'flashblocks source: blocks the feed never showed, read sealed from the node (after a restart or a cut feed)',
  );
  const retryMs = options.retryMs ?? 250;
  const waitMs = options.waitMs ?? 10_000;

  /** Block `n` from the node, asked again until `deadline`; null when it never came. */
  async function readWaiting(n: bigint, deadline: number): Promise<ReadBlock | null> {
    let failure: unknown = null;
    for (;;) {
      try {
        const block = await reader.read(n);
        if (block) return block;
      } catch (error) {
        failure = error;
      }
      if (Date.now() + retryMs > deadline || options.stopped()) {
        logger.warn(
          { block: Number(n), err: failure ? errorMessage(failure) : 'the node does not have it' },
          'flashblocks source: the node did not give a missing block',
        );
        return null;
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }

  return {
    async fill(last, next) {
      const plan = fillPlan(last, next, options.maxBlocks);
      const events: SourceEvent[] = [];
      if (plan.gap) events.push({ type: 'gap', from: plan.gap.from, to: plan.gap.to, reason: 'beyond_max_backfill' });
      if (!plan.backfill) return events;
      const { from, to } = plan.backfill;
      logger.info(
        { from: Number(from), to: Number(to), next: Number(next) },
        'flashblocks source: reading the blocks the feed did not show from the node',
      );
      for (let n = from; n <= to; n++) {
        const read = await readWaiting(n, Date.now() + waitMs);
        if (!read) {
          events.push({ type: 'gap', from: n, to, reason: 'not_on_node' });
          break;
        }
        filled.inc();
        events.push({ type: 'grew', block: read.block, receipts: read.receipts, receivedAt: Date.now() });
      }
      return events;
    },
  };
}

/**
 * The flashblocks source's stage (flashblocks.ts): each batch of its events, with the blocks the
 * feed never showed filled in before the block that starts after them. `resumeFrom` is the log's
 * newest block (a restart); afterwards, the newest block started. Synchronous unless something is
 * missing, so the feed's timing is untouched.
 */
export function createFeedBackfill(
  options: SealedBackfillOptions & { readonly resumeFrom: bigint | null },
): (events: SourceEvent[]) => Observable<SourceEvent> {
  const backfill = createSealedBackfill(options);
  let lastPublished = options.resumeFrom;
  const startsAfterMissing = (event: SourceEvent): boolean =>
    event.type === 'grew' && event.block.index === 0 && lastPublished !== null && event.block.blockNumber > lastPublished + 1n;
  const published = (event: SourceEvent): void => {
    if (event.type !== 'grew' || event.block.index !== 0) return;
    if (lastPublished === null || event.block.blockNumber > lastPublished) lastPublished = event.block.blockNumber;
  };
  return (events) => {
    if (!events.some(startsAfterMissing)) {
      events.forEach(published);
      return from(events);
    }
    const filled = async (): Promise<SourceEvent[]> => {
      const out: SourceEvent[] = [];
      for (const event of events) {
        if (event.type === 'grew' && startsAfterMissing(event)) out.push(...(await backfill.fill(lastPublished, event.block.blockNumber)));
        published(event);
        out.push(event);
      }
      return out;
    };
    return from(filled()).pipe(mergeMap((out) => from(out)));
  };
}
