import type { WebSocket } from 'ws';
import type { z } from 'zod';
import type { SourceKind } from '../../config/source-mode.ts';
import type { ViewChange } from '../../view/state.ts';
import type { AnnouncedBlock } from '../canonical-blocks.ts';
import type { TransactionFormatter } from '../format.ts';
import type { LogFilter } from '../params.ts';

/**
 * One `eth_subscribe` kind: one file under `kinds/` exporting one `defineKind(...)`, plus one line
 * in `registry.ts`. A kind says which params it takes (a zod schema over the whole params array, so
 * a bad one answers -32602 naming the field, src/schemas/issue.ts), which stream of the gateway it
 * reads, and how it renders its notifications. The hub (hub.ts) keeps the subscriptions and the
 * writer (socket-writer.ts, log-fanout.ts) puts the frames on the wire.
 *
 * @example
 * export const newFlashblocks = defineKind({
 *   name: 'newFlashblocks',
 *   params: kindOnly('newFlashblocks'),
 *   reads: () => 'flashblocks',
 *   flashblock: async (change, subscribers, out) => { ... out.send(sub, json) ... },
 * });
 */

/** How the gateway is fed: see `source` in hub.ts. */
export interface Feed {
  /** The source mode: on `blocks` each block of the view is canonical (src/config/source-mode.ts `viewBlocksAreCanonical`). */
  readonly source: SourceKind;
  /** Whether an upstream is there to read canonical blocks from. */
  readonly upstream: boolean;
}

/**
 * The stream a kind reads:
 * - `logs`: the view's new logs (and `removed: true` copies on a reorg), one notification per log
 *   through the log fan-out (each log serialized once, a subscriber's filter checked per log);
 * - `flashblocks`: each flashblock the view takes (its block and what it added);
 * - `canonical`: each canonical block the view's head passes, read from the upstream once.
 */
export type KindSource = 'logs' | 'flashblocks' | 'canonical';

export interface Subscriber<Options> {
  readonly id: string;
  readonly options: Options;
  readonly socket: WebSocket;
}

/** Where a kind's notifications go. */
export interface Notifier {
  /** Writes one notification, `result` being its JSON text, to one subscriber. */
  send(subscriber: Subscriber<unknown>, result: string): void;
  readonly formatter: TransactionFormatter;
}

export type FlashblockChange = Extract<ViewChange, { type: 'flashblock' }>;

export interface KindDefinition<Options> {
  readonly name: string;
  /** The whole params array (`[name, ...]`), parsed to this kind's options. */
  readonly params: z.ZodType<Options>;
  /** The stream it reads, given the feed; undefined: not offered on this feed. */
  reads(feed: Feed): KindSource | undefined;
  /** `logs`: which logs a subscriber gets (null: all). */
  logFilter?(options: Options): LogFilter | null;
  /** `flashblocks`: the notifications one flashblock brings, each rendered once for all subscribers. */
  flashblock?(change: FlashblockChange, subscribers: ReadonlySet<Subscriber<Options>>, out: Notifier): Promise<void> | void;
  /** `canonical`: what of a canonical block it needs (the upstream is asked only for what someone wants). */
  readonly canonical?: {
    readonly wants: 'header' | 'logs';
    notify(block: AnnouncedBlock, subscribers: ReadonlySet<Subscriber<Options>>, out: Notifier): void;
  };
}

/** A kind as the registry holds it (its options type erased). */
export type SubscriptionKind = KindDefinition<unknown>;

/** Declares one subscription kind (the only export of its file under `kinds/`). */
export function defineKind<Options>(definition: KindDefinition<Options>): SubscriptionKind {
  return definition as unknown as SubscriptionKind;
}
