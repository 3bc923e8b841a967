import { BehaviorSubject, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { apply, initialViewState, type ViewState } from '../view/state.ts';
import { blockBuilder } from '../../test/helpers/view-records.ts';
import { createPendingWatch } from './pending-watch.ts';

/**
 * The state CI met on the flashblocks devnet: flashblocks ingested, the node's head moving on, and
 * the gateway serving no block being built. The timings are driven, not hoped for: each block's
 * records reach the view either before the node seals it (as they should) or only after (an ingest
 * behind the chain: the view must drop them, the block being canonical already).
 */
function harness() {
  let state: ViewState = initialViewState();
  let offset = 0n;
  const states$ = new BehaviorSubject<ViewState>(state);
  const heads$ = new Subject<bigint>();
  const warnings: unknown[] = [];
  const infos: unknown[] = [];
  const logger = {
    warn: (detail: unknown, message: string) => warnings.push({ detail, message }),
    info: (detail: unknown, message: string) => infos.push({ detail, message }),
  } as never;
  const metrics = createMetricsRegistry({ defaults: false });
  const watch = createPendingWatch({ source: 'flashblocks', nodeHead: { heads$ }, states$, logger, metrics });
  const input = (next: ViewState) => {
    state = next;
    states$.next(state);
  };
  return {
    watch,
    warnings,
    infos,
    metrics,
    /** Block `n`'s first flashblock reaches the view. */
    preconfirmed(n: bigint) {
      for (const record of blockBuilder(n).flashblock([]))
        input(
          apply(state, { type: 'record', record: { ...record, key: record.key ?? null, partition: 0, offset: offset++, timestamp: 0 } }),
        );
    },
    /** The node seals `n`: the view learns the head, and so does the watch. */
    sealed(n: bigint) {
      input(apply(state, { type: 'head', blockNumber: n }));
      heads$.next(n);
    },
    held: () => state.blocks.map((block) => block.number),
  };
}

describe('createPendingWatch', () => {
  it('records before each seal: a block being built is served every block, no warning', () => {
    const h = harness();
    h.sealed(9n);
    for (let n = 10n; n < 20n; n++) {
      h.preconfirmed(n);
      expect(h.held()).toEqual([n]);
      h.sealed(n);
    }
    expect(h.watch.missed()).toBe(0);
    expect(h.warnings).toEqual([]);
  });

  it('records only after each seal: the view holds nothing, the gauge counts the heads and one warning says so; it clears when blocks are served again', async () => {
    const h = harness();
    h.sealed(9n);
    for (let n = 10n; n < 16n; n++) {
      h.sealed(n); // the node seals first ...
      h.preconfirmed(n); // ... and the block's record comes after: dropped, it is canonical already
      expect(h.held()).toEqual([]);
    }
    expect(h.watch.missed()).toBe(6);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatchObject({
      detail: { missedBlocks: 3, head: 12 },
      message: expect.stringContaining('no pre-confirmation served'),
    });
    expect(await h.metrics.getSingleMetricAsString('flashlog_gateway_heads_without_preconfirmation')).toMatch(
      /flashlog_gateway_heads_without_preconfirmation 6$/m,
    );
    h.preconfirmed(16n);
    h.sealed(16n);
    expect(h.watch.missed()).toBe(0);
    expect(h.infos).toHaveLength(1);
  });

  it('nothing on a blocks source', () => {
    const heads$ = new Subject<bigint>();
    const watch = createPendingWatch({
      source: 'blocks',
      nodeHead: { heads$ },
      states$: new Subject(),
      logger: {} as never,
      metrics: createMetricsRegistry({ defaults: false }),
    });
    for (let n = 1n; n < 10n; n++) heads$.next(n);
    expect(watch.missed()).toBe(0);
  });
});
