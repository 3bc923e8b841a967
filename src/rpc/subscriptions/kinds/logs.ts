import { viewBlocksAreCanonical } from '../../../config/source-mode.ts';
import { matchesFilter } from '../../params.ts';
import { defineKind } from '../kind.ts';
import { withLogFilter } from '../kind-params.ts';

/**
 * `logs` [filter {address, topics}] (the standard kind): logs of canonical blocks.
 * - On a chain followed by the blocks source (Base since Denim) each 200 ms block the view takes is
 *   canonical (unsafe): its logs, through the same fan-out as `pendingLogs`, with `removed: true`
 *   copies on a reorg.
 * - On a flashblocks chain, the logs of each canonical block the view's head passes, read from the
 *   upstream once (canonical-blocks.ts); without an upstream it is not offered. Pre-confirmed logs
 *   stay on `pendingLogs`.
 */
export const logs = defineKind({
  name: 'logs',
  params: withLogFilter('logs'),
  reads: (feed) => (viewBlocksAreCanonical(feed.source) ? 'logs' : feed.upstream ? 'canonical' : undefined),
  logFilter: (options) => options.filter,
  canonical: {
    wants: 'logs',
    notify(block, subscribers, out) {
      for (const log of block.logs) {
        let json: string | undefined;
        for (const sub of subscribers) {
          if (sub.options.filter && !matchesFilter(log, sub.options.filter)) continue;
          out.send(sub, (json ??= JSON.stringify(log)));
        }
      }
    },
  },
});
