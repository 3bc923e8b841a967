import { formatPendingBlock } from '../../format.ts';
import { defineKind } from '../kind.ts';
import { kindOnly } from '../kind-params.ts';

/** `newFlashblocks` (Base's kind): the accumulated pending block (full transactions, hash 0x00..00) per flashblock. */
export const newFlashblocks = defineKind({
  name: 'newFlashblocks',
  params: kindOnly('newFlashblocks'),
  reads: () => 'flashblocks',
  async flashblock(change, subscribers, out) {
    const json = JSON.stringify(await formatPendingBlock(change.block, true, out.formatter));
    for (const sub of subscribers) out.send(sub, json);
  },
});
