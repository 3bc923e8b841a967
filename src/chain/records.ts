import { toHex } from 'viem';
import type { ProduceRecord } from '../log/port.ts';
import { topics } from '../log/topics.ts';
import type { ExecutionOutput, Executor } from '../evm/port.ts';
import type { BlockRecord, ChainRecord, FlashblockRecord, LogRecordValue } from '../schemas/records.ts';
import type { SourceEvent } from '../source/port.ts';
import type { AssembledBlock } from './assemble.ts';

/**
 * The records one accepted flashblock becomes. First, at once, flashlog.flashblocks (the message as
 * received); then, once executed, flashlog.blocks (the pre-confirmed block so far) and one
 * flashlog.logs record per log of the new transactions. Keys as in ARCHITECTURE.md.
 */
export function flashblockRecord(block: AssembledBlock, json: Record<string, unknown>, receivedAt: number): ProduceRecord {
  const value: FlashblockRecord = {
    v: 1, blockNumber: toHex(block.blockNumber), index: block.index, payloadId: block.payloadId, receivedAt, flashblock: json,
  };
  return { topic: topics.flashblocks, key: block.blockNumber.toString(), value: JSON.stringify(value) };
}

export function blockRecords(
  block: AssembledBlock,
  execution: ExecutionOutput | null,
  executor: Executor['kind'] | null,
): ProduceRecord[] {
  const blockNumber = toHex(block.blockNumber);
  const key = block.blockNumber.toString();
  const blockValue: BlockRecord = {
    v: 1,
    blockNumber,
    index: block.index,
    payloadId: block.payloadId,
    header: block.header,
    transactions: block.transactions.map((tx) => ({ hash: tx.hash, raw: tx.raw })),
    firstNew: block.firstNew,
    receipts: execution?.receipts ?? null,
    stateDiff: execution?.stateDiff ?? null,
    executor: execution ? executor : null,
  };
  const records: ProduceRecord[] = [{ topic: topics.blocks, key, value: JSON.stringify(blockValue) }];
  for (const receipt of execution?.receipts ?? []) {
    for (const log of receipt.logs) {
      const value: LogRecordValue = { v: 1, index: block.index, ...log };
      records.push({ topic: topics.logs, key: log.address.toLowerCase(), value: JSON.stringify(value) });
    }
  }
  return records;
}

const ZERO32 = `0x${'0'.repeat(64)}` as const;

/**
 * The records of a blocks-source event: a block that grew is the records of an assembled
 * flashblocks block at index 0 (receipts from the node); a replaced block is a `reorg` record that
 * names it, then a `removed: true` copy of each log it published; a lifecycle step is a `safe` or
 * `finalized` record (`canonical` needs none: a 200 ms block is canonical when it arrives).
 */
export function sourceEventRecords(event: SourceEvent): ProduceRecord[] {
  if (event.type === 'grew') {
    return blockRecords(event.block, event.receipts ? { receipts: [...event.receipts], stateDiff: null } : null, event.receipts ? 'node' : null);
  }
  const key = event.blockNumber.toString();
  if (event.type === 'lifecycle') {
    if (event.level === 'canonical') return [];
    const value: ChainRecord = { v: 1, type: event.level, blockNumber: toHex(event.blockNumber), blockHash: event.blockHash };
    return [{ topic: topics.chain, key, value: JSON.stringify(value) }];
  }
  const reorg: ChainRecord = {
    v: 1, type: 'reorg', blockNumber: toHex(event.blockNumber), blockHash: event.byHash ?? ZERO32,
    transactions: [...event.transactions], removedTransactions: [...event.removedTransactions], replacedBlockHash: event.replacedHash,
  };
  return [
    { topic: topics.chain, key, value: JSON.stringify(reorg) },
    ...event.removedLogs.map((log) => {
      const value: LogRecordValue = { v: 1, index: 0, ...log, removed: true };
      return { topic: topics.logs, key: log.address.toLowerCase(), value: JSON.stringify(value) };
    }),
  ];
}
