import { toHex } from 'viem';
import type { ReconcileEvent } from '../chain/reconcile.ts';
import type { ProduceRecord } from '../log/port.ts';
import { blockRecords } from '../records/blocks.ts';
import { chainRecord, type ChainRecord } from '../records/chain.ts';
import { logRecord, type LogRecordValue } from '../records/logs.ts';
import type { SourceEvent } from './port.ts';

const ZERO32 = `0x${'0'.repeat(64)}` as const;

/**
 * The records of a Source event: a block that grew is the records of an assembled block (its
 * receipts from the node, when the source has them; the flashblocks feed's go through an executor
 * in streams/source-ingest.ts instead); a replaced block is a `reorg` record that names it, then a
 * `removed: true` copy of each log it published; a lifecycle step is a `safe` or `finalized` record
 * (`canonical` needs none: a 200 ms block is canonical when it arrives).
 */
export function sourceEventRecords(event: SourceEvent): ProduceRecord[] {
  if (event.type === 'grew') {
    return blockRecords(
      event.block,
      event.receipts ? { receipts: [...event.receipts], stateDiff: null } : null,
      event.receipts ? 'node' : null,
    );
  }
  if (event.type === 'lifecycle') {
    if (event.level === 'canonical') return [];
    const value: ChainRecord = { v: 1, type: event.level, blockNumber: toHex(event.blockNumber), blockHash: event.blockHash };
    return [chainRecord(value)];
  }
  const reorg: ChainRecord = {
    v: 1,
    type: 'reorg',
    blockNumber: toHex(event.blockNumber),
    blockHash: event.byHash ?? ZERO32,
    transactions: [...event.transactions],
    removedTransactions: [...event.removedTransactions],
    replacedBlockHash: event.replacedHash,
  };
  return [
    chainRecord(reorg),
    ...event.removedLogs.map((log) => {
      const value: LogRecordValue = { v: 1, index: 0, ...log, removed: true };
      return logRecord(value);
    }),
  ];
}

/**
 * The records of canonical blocks reconciled with their pre-confirmation (`canonical-heads.ts`):
 * a `sealed` or `reorg` record on flashlog.chain, and after a reorg a `removed: true` copy of each
 * pre-confirmed log the canonical block does not hold.
 */
export function reconciledRecords(events: readonly Exclude<ReconcileEvent, { type: 'dropped' }>[]): ProduceRecord[] {
  const records: ProduceRecord[] = [];
  for (const event of events) {
    records.push(chainRecord(event.record));
    if (event.type === 'reorg') for (const log of event.removedLogs) records.push(logRecord(log));
  }
  return records;
}
