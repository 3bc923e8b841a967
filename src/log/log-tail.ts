import { firstValueFrom, filter, takeWhile, timeout, toArray } from 'rxjs';
import { blockRecordSchema } from '../records/blocks.ts';
import { topics } from '../records/topics.ts';
import type { RpcLog } from '../records/logs.ts';
import type { Log, RecordPosition } from './port.ts';

/** A block record's place in the log, as read back (readBlocksTail). */
export interface LoggedBlock {
  readonly number: bigint;
  /** The block's hash (blocks source); null for a flashblocks pre-confirmation, which has none yet. */
  readonly hash: `0x${string}` | null;
  /** Its transactions so far, and the logs of the receipts the record carried (withdrawn if the node lost the block). */
  readonly transactions: readonly `0x${string}`[];
  readonly logs: readonly RpcLog[];
}

/**
 * The newest block records of flashlog.blocks, read back: the last `perPartition` records of each
 * partition, in log order per partition, as (number, hash). Where a restarted ingest resumes
 * (src/chain/resume.ts). A record that does not decode is skipped (an older or foreign writer);
 * the log being empty is an empty list.
 * @example resumeCandidates(await readBlocksTail(log, 64), 64)[0] // the newest block the log holds
 */
export async function readBlocksTail(log: Log, perPartition: number, waitMs = 30_000): Promise<LoggedBlock[]> {
  const ends = await log.endOffsets(topics.blocks);
  const seek: RecordPosition[] = ends.map((end) => ({
    topic: topics.blocks,
    partition: end.partition,
    offset: end.offset > BigInt(perPartition) ? end.offset - BigInt(perPartition) : 0n,
  }));
  // Read until every partition reached the end it had (not a count: retention may have removed the start).
  const pending = new Map(ends.filter((end, i) => end.offset > seek[i]!.offset).map((end) => [end.partition, end.offset]));
  if (pending.size === 0) return [];
  const consumer = log.consumer({ topics: [topics.blocks], seek });
  try {
    const records = await firstValueFrom(
      consumer.records$.pipe(
        filter((record) => record.topic === topics.blocks),
        takeWhile((record) => {
          const end = pending.get(record.partition);
          if (end !== undefined && record.offset + 1n >= end) pending.delete(record.partition);
          return pending.size > 0;
        }, true),
        toArray(),
        timeout(waitMs),
      ),
    );
    const blocks: LoggedBlock[] = [];
    for (const record of records) {
      let value: unknown;
      try {
        value = JSON.parse(record.value);
      } catch {
        continue;
      }
      const parsed = blockRecordSchema.safeParse(value);
      if (!parsed.success) continue;
      const { header, transactions, receipts } = parsed.data;
      blocks.push({
        number: BigInt(parsed.data.blockNumber),
        hash: header.hash ? (header.hash.toLowerCase() as `0x${string}`) : null,
        transactions: transactions.map((tx) => tx.hash.toLowerCase() as `0x${string}`),
        logs: (receipts ?? []).flatMap((receipt) => receipt.logs),
      });
    }
    return blocks;
  } finally {
    await consumer.close();
  }
}
