import { viewBlocksAreCanonical } from '../../../config/source-mode.ts';
import { formatPendingBlock } from '../../format.ts';
import { defineKind } from '../kind.ts';
import { kindOnly } from '../kind-params.ts';

/**
 * `newHeads` (the standard kind): the header of each new canonical block.
 * - Blocks source: each new 200 ms block of the view (its first step): the node's header, with
 *   `timestampMs` (formatPendingBlock without the body).
 * - Flashblocks chain: each canonical block the view's head passes, read from the upstream once;
 *   without an upstream it is not offered.
 */
export const newHeads = defineKind({
  name: 'newHeads',
  params: kindOnly('newHeads'),
  reads: (feed) => (viewBlocksAreCanonical(feed.source) ? 'flashblocks' : feed.upstream ? 'canonical' : undefined),
  async flashblock(change, subscribers, out) {
    if (change.firstNew !== 0) return;
    const { transactions: _transactions, uncles: _uncles, ...header } = await formatPendingBlock(change.block, false, out.formatter);
    const json = JSON.stringify(header);
    for (const sub of subscribers) out.send(sub, json);
  },
  canonical: {
    wants: 'header',
    notify(block, subscribers, out) {
      const json = JSON.stringify(block.header);
      for (const sub of subscribers) out.send(sub, json);
    },
  },
});
