import { toHex } from 'viem';
import type { ProduceRecord } from '../log/port.ts';
import { topics } from '../log/topics.ts';
import type { ExecutionOutput, ExecutorKind } from './execution-output.ts';
import type { BlockRecord, FlashblockRecord, LogRecordValue } from '../schemas/records.ts';
import type { AssembledBlock } from './assemble.ts';

/**
 * The records one accepted flashblock becomes. First, at once, flashlog.flashblocks (the message as
 * received); then, once executed, flashlog.blocks (the pre-confirmed block so far) and one
 * flashlog.logs record per log of the new transactions. Keys as in ARCHITECTURE.md.
 */
export function flashblockRecord(block: AssembledBlock, json: Record<string, unknown>, receivedAt: number): ProduceRecord {
  const value: FlashblockRecord = {
    v: 1,
    blockNumber: toHex(block.blockNumber),
    index: block.index,
    payloadId: block.payloadId,
    receivedAt,
    flashblock: json,
  };
  return { topic: topics.flashblocks, key: block.blockNumber.toString(), value: JSON.stringify(value) };
}

export function blockRecords(block: AssembledBlock, execution: ExecutionOutput | null, executor: ExecutorKind | null): ProduceRecord[] {
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
