import { concatMap, type Observable, type Subscription } from 'rxjs';
import { errorMessage } from '../../errors.ts';
import type { Upstream } from '../../jsonrpc/upstream.ts';
import type { Logger } from '../../obs/logger.ts';
import type { ViewState } from '../../view/state.ts';
import { canonicalBlocks$ } from '../canonical-blocks.ts';
import type { KindSource, Notifier, Subscriber, SubscriptionKind } from './kind.ts';
import type { LogFanout } from './log-fanout.ts';

/**
 * The streams the kinds read, turned into notifications:
 * - each new view state: its logs to the log fan-out first (they are small and what
 *   latency-sensitive readers, indexers, wait for), then each `flashblocks` kind in registry order;
 * - each canonical block the view's head passes (only when an upstream is there and a
 *   `canonical` kind has subscribers), to the `canonical` kinds.
 * The state replayed as the hub subscribes (the view so far) is not news; anything after it is,
 * including the very first state when the log was empty at start. The writes of every view change
 * handled in one turn of the event loop (the log delivers what it has read in one turn: a burst, a
 * replay) leave together, one write per connection, when the socket writer uncorks after the turn.
 */
export function notifyFromStreams(options: {
  readonly states$: Observable<ViewState>;
  readonly upstream?: Upstream;
  readonly logger: Logger;
  readonly kinds: readonly { readonly spec: SubscriptionKind; readonly source: KindSource }[];
  readonly subscribersOf: (kind: string) => ReadonlySet<Subscriber<unknown>>;
  /** Whether anyone is subscribed at all. */
  readonly active: () => boolean;
  readonly fanout: LogFanout;
  readonly out: Notifier;
}): { close(): void } {
  const { logger, fanout, out, subscribersOf } = options;
  const reading = (source: KindSource) => options.kinds.filter((kind) => kind.source === source).map((kind) => kind.spec);
  const flashblockKinds = reading('flashblocks');
  const canonicalKinds = reading('canonical');

  let lastSeq: number | undefined;
  let subscribing = true;
  const views: Subscription = options.states$
    .pipe(
      concatMap(async (state) => {
        if (subscribing || (lastSeq !== undefined && state.seq <= lastSeq)) {
          lastSeq = Math.max(lastSeq ?? 0, state.seq);
          return;
        }
        lastSeq = state.seq;
        const change = state.change;
        if (!options.active()) return;
        try {
          if (change.type === 'flashblock') {
            if (change.removedLogs) fanout.queue(change.removedLogs);
            fanout.queue(change.newLogs);
            for (const kind of flashblockKinds) {
              const subscribers = subscribersOf(kind.name);
              if (subscribers.size > 0) await kind.flashblock!(change, subscribers, out);
            }
          } else if (change.type === 'removed') fanout.queue(change.logs);
        } catch (error) {
          logger.warn({ err: errorMessage(error) }, 'notification failed');
        }
      }),
    )
    .subscribe({ error: (error: unknown) => logger.error({ err: errorMessage(error) }, 'view stream failed; subscriptions stop') });
  subscribing = false;

  const wants = (what: 'header' | 'logs') =>
    canonicalKinds.some((kind) => kind.canonical!.wants === what && subscribersOf(kind.name).size > 0);
  const canonical =
    canonicalKinds.length > 0 && options.upstream
      ? canonicalBlocks$({
          states$: options.states$,
          upstream: options.upstream,
          logger,
          wanted: () => ({ heads: wants('header'), logs: wants('logs') }),
        }).subscribe((block) => {
          for (const kind of canonicalKinds) kind.canonical!.notify(block, subscribersOf(kind.name), out);
        })
      : undefined;

  return {
    close() {
      views.unsubscribe();
      canonical?.unsubscribe();
    },
  };
}
