import type { SubscriptionKind } from './kind.ts';
import { logs } from './kinds/logs.ts';
import { newFlashblocks } from './kinds/newFlashblocks.ts';
import { newFlashblockTransactions } from './kinds/newFlashblockTransactions.ts';
import { newHeads } from './kinds/newHeads.ts';
import { pendingLogs } from './kinds/pendingLogs.ts';

/**
 * Every `eth_subscribe` kind, each declared once in its file under `kinds/` (params, the stream it
 * reads, how it renders). Adding a kind: one file under `kinds/` and one line here. The order is
 * the order a flashblock's notifications go out in (logs always first: see log-fanout.ts).
 */
export const subscriptionKinds: readonly SubscriptionKind[] = [pendingLogs, newHeads, logs, newFlashblocks, newFlashblockTransactions];
