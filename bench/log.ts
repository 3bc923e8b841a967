import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, take, toArray } from 'rxjs';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../src/log/kafka/kafka.ts';
import type { Log } from '../src/log/port.ts';

/**
 * Append and consume throughput of the two log engines side by side: 50,000 records of ~1 KiB
 * (a typical flashlog.logs value), appended in batches of 500 as the publisher does, then read
 * back from the beginning. Target: >= 20,000 records/s appended to the embedded log.
 */
export async function run(): Promise<Record<string, unknown>[]> {
  const total = 50_000;
  const batch = 500;
  const value = JSON.stringify({
    v: 1,
    index: 3,
    address: `0x${'ab'.repeat(20)}`,
    topics: [`0x${'11'.repeat(32)}`, `0x${'22'.repeat(32)}`],
    data: `0x${'00'.repeat(400)}`,
    blockNumber: '0x1fe4052',
    blockHash: `0x${'0'.repeat(64)}`,
    blockTimestamp: '0x690fdf84',
    transactionHash: `0x${'33'.repeat(32)}`,
    transactionIndex: '0x5',
    logIndex: '0x9',
    removed: false,
  });
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-'));
  const engines: { name: string; open: () => Log }[] = [
    { name: 'embedded (node:sqlite)', open: () => createEmbeddedLog({ path: join(dir, 'bench.db') }) },
    {
      name: 'kafka (kafkajs, 1 broker)',
      open: () =>
        createKafkaLog({ brokers: (process.env.FLASHLOG_TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'flashlog-bench' }),
    },
  ];
  const rows: Record<string, unknown>[] = [];
  try {
    for (const engine of engines) {
      const log = engine.open();
      const topic = `bench.${randomUUID().slice(0, 8)}`;
      try {
        await log.ensureTopics([{ name: topic, retentionMs: 3_600_000 }]);
        const appendStarted = performance.now();
        for (let i = 0; i < total; i += batch) {
          await log.produce(Array.from({ length: batch }, () => ({ topic, key: `0x${'ab'.repeat(20)}`, value })));
        }
        const appendSeconds = (performance.now() - appendStarted) / 1000;
        const consumer = log.consumer({ topics: [topic] });
        const consumeStarted = performance.now();
        await lastValueFrom(consumer.records$.pipe(take(total), toArray()));
        const consumeSeconds = (performance.now() - consumeStarted) / 1000;
        await consumer.close();
        rows.push({
          engine: engine.name,
          records: total,
          'append records/s': Math.round(total / appendSeconds),
          'consume records/s': Math.round(total / consumeSeconds),
        });
      } catch (error) {
        rows.push({ engine: engine.name, error: error instanceof Error ? error.message : String(error) });
      } finally {
        await log.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const embedded = rows[0]!;
  for (const row of rows) {
    if (typeof row['append records/s'] === 'number' && typeof embedded['append records/s'] === 'number') {
      row['append vs embedded'] = (row['append records/s'] as number) / (embedded['append records/s'] as number);
      row['x target (20,000/s)'] = (row['append records/s'] as number) / 20_000;
    }
  }
  return rows;
}
