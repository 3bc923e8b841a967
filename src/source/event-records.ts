import { toHex } from 'viem';
import { blockRecords } from '../records/blocks.ts';
import { chainRecord, type ChainRecord } from '../records/chain.ts';
import { logRecord, type LogRecordValue } from '../records/logs.ts';
import type { TopicRecord } from '../records/topics.ts';
import type { SourceEvent } from './port.ts';

const ZERO32 = `0x${'0'.repeat(64)}` as const;

/**
 * The records of a Source event: a block that grew is the records of an assembled block (its
 * receipts from the node, when the source has them; the flashblocks feed's go through an executor
 * in streams/source-ingest.ts instead); a replaced block is a `reorg` record that names it, then a
 * `removed: true` copy of each log it published that the new chain does not hold; a lifecycle step
 * is a `sealed` record when a canonical block sealed a pre-confirmation (a 200 ms block needs none:
 * it is canonical when it arrives), or a `safe` or `finalized` record; a gap is a `gap` record.
 */
export function sourceEventRecords(event: SourceEvent): TopicRecord[] {
  if (event.type === 'grew') {
    return blockRecords(
      event.block,
      event.receipts ? { receipts: [...event.receipts], stateDiff: null } : null,
      event.receipts ? 'node' : null,
    );
  }
  if (event.type === 'lifecycle') {
    if (event.level !== 'canonical') {
      const value: ChainRecord = { v: 1, type: event.level, blockNumber: toHex(event.blockNumber), blockHash: event.blockHash };
      return [chainRecord(value)];
    }
    if (!event.sealedTransactions) return [];
    const sealed: ChainRecord = {
      v: 1,
      type: 'sealed',
      blockNumber: toHex(event.blockNumber),
      blockHash: event.blockHash,
      transactions: [...event.sealedTransactions],
    };
    return [chainRecord(sealed)];
  }
  if (event.type === 'gap') {
    const gap: ChainRecord = {
      v: 1,
      type: 'gap',
      blockNumber: toHex(event.from),
      fromBlock: toHex(event.from),
      toBlock: toHex(event.to),
      reason: event.reason,
    };
    return [chainRecord(gap)];
  }
  const reorg: ChainRecord = {
    v: 1,
    type: 'reorg',
    blockNumber: toHex(event.blockNumber),
    blockHash: event.byHash ?? ZERO32,
    transactions: [...event.transactions],
    removedTransactions: [...event.removedTransactions],
    ...(event.replacedHash ? { replacedBlockHash: event.replacedHash } : {}),
  };
  return [
    chainRecord(reorg),
    ...event.removedLogs.map((log) => {
      const value: LogRecordValue = { v: 1, index: event.index, ...log, removed: true };
      return logRecord(value);
    }),
  ];
}
