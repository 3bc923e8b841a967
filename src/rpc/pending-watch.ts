import type { Observable, Subscription } from 'rxjs';
import type { SourceKind } from '../config/source-mode.ts';
import type { Logger } from '../obs/logger.ts';
import { gauge, type Registry } from '../obs/metrics.ts';
import type { ViewState } from '../view/state.ts';
import { heldBlockHash, newestHeld } from './pending.ts';

/**
 * Pre-confirmations the gateway should serve and does not. On a flashblocks source every block is
 * pre-confirmed before the node seals it, so the view holds block N, being built, before the
 * node's head reaches N. When the node's head moves `missedBlocks` heights in a row whose blocks
 * the view never held (the ingest stalled, or its block records come only after the seal, when
 * the view must drop them), `pending` is only ever `latest`: the gauge
 * `flashlog_gateway_heads_without_preconfirmation` counts those heights, and one warning says so
 * (one info line once a block being built is held again). Nothing on a blocks source, where the
 * view's blocks are the node's own.
 */
export interface PendingWatchOptions {
  readonly source: SourceKind;
  readonly nodeHead: { readonly heads$: Observable<bigint> };
  readonly states$: Observable<ViewState>;
  readonly logger: Logger;
  readonly metrics: Registry;
  /** Heights in a row without a pre-confirmation before the warning (default 3). */
  readonly missedBlocks?: number;
}

export interface PendingWatch {
  /** Node heads in a row whose block the view never held being built. */
  missed(): number;
  close(): void;
}

export function createPendingWatch(options: PendingWatchOptions): PendingWatch {
  if (options.source !== 'flashblocks') return { missed: () => 0, close: () => {} };
  const limit = options.missedBlocks ?? 3;
  const missedGauge = gauge(
    options.metrics,
    'flashlog_gateway_heads_without_preconfirmation',
    "the node's heads in a row whose block the view never held being built (flashblocks source): pending was only latest",
  );
  /** The highest block the view has held being built. */
  let highestBuilt = -1n;
  let missed = 0;
  let warned = false;
  const held: Subscription = options.states$.subscribe((state) => {
    const top = newestHeld(state);
    if (top !== undefined && heldBlockHash(top) === undefined && top.number > highestBuilt) highestBuilt = top.number;
  });
  let previous: bigint | undefined;
  const heads: Subscription = options.nodeHead.heads$.subscribe((head) => {
    const first = previous === undefined;
    previous = head;
    if (first) return; // the head at start: its block may have been built before the gateway started
    if (highestBuilt >= head) {
      if (warned) options.logger.info({ head: Number(head) }, 'pre-confirmations are served again');
      missed = 0;
      warned = false;
    } else {
      missed += 1;
      if (missed >= limit && !warned) {
        warned = true;
        options.logger.warn(
          { head: Number(head), missedBlocks: missed, newestBuilt: highestBuilt < 0n ? null : Number(highestBuilt) },
          "no pre-confirmation served: the node's head moved on and the view never held its blocks being built; is the ingest behind or stalled?",
        );
      }
    }
    missedGauge.set(missed);
  });
  return {
    missed: () => missed,
    close() {
      held.unsubscribe();
      heads.unsubscribe();
    },
  };
}
