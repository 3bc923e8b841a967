import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { createEmbeddedLog } from '../src/log/embedded.ts';
import { createKafkaLog } from '../src/log/kafka.ts';
import type { Log, ProduceRecord } from '../src/log/port.ts';
import { allTopics } from '../src/log/topics.ts';
import { createServe } from '../streams/serve.ts';
import { prefixedLog } from '../test/helpers/prefixed-log.ts';
import { createRpcStub } from '../test/helpers/rpc-stub.ts';
import { blockBuilder, signedTransfers } from '../test/helpers/view-records.ts';
import { benchContext } from './gateway.ts';

/**
 * Restart-to-serving (issue 17): a gateway started on a log of 1,000,000 records (embedded) and
 * 200,000 (Kafka, one local broker), from nothing (full replay) and from its view snapshot (taken
 * at the end of the previous run; 10,000 records appended since). Measured from createServe() to
 * the gateway listening (log opened, view replayed, ports bound). The records: blocks of 10
 * flashblocks x 2 transactions x 4 logs, i.e. 1 block record (all transactions so far, the new
 * receipts, a state diff) and 8 log records per flashblock.
 * Target: full replay >= 100,000 records/s.
 *   FLASHLOG_BENCH_REPLAY_RECORDS (default 1000000), FLASHLOG_BENCH_REPLAY_KAFKA_RECORDS (200000).
 */
type Row = Record<string, unknown>;
const emitters = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Hex);

async function fill(log: Log, records: number, firstBlock: bigint, pool: { hash: Hex; raw: Hex }[]): Promise<{ written: number; nextBlock: bigint }> {
  let written = 0;
  let number = firstBlock;
  let batch: ProduceRecord[] = [];
  while (written < records) {
    const block = blockBuilder(number++);
    for (let fb = 0; fb < 10 && written < records; fb++) {
      const flashblock = block.flashblock(pool.slice(fb * 2, fb * 2 + 2), { logsPerTx: 4, emitters, stateDiff: { [emitters[fb]!]: { balance: `0x${(fb + 1).toString(16)}` } } });
      batch.push(...flashblock);
      written += flashblock.length;
    }
    if (batch.length >= 900) {
      await log.produce(batch);
      batch = [];
    }
  }
  if (batch.length) await log.produce(batch);
  return { written, nextBlock: number };
}

async function measure(engine: string, open: () => Log, records: number, dir: string): Promise<Row[]> {
  const stub = await createRpcStub({ eth_blockNumber: () => '0x1' });
  const log = open();
  const rows: Row[] = [];
  try {
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    const pool = await signedTransfers(20);
    const filled = await fill(log, records, 10_000_000n, pool);
    const start = async (snapshot: boolean) => {
      const ctx = benchContext(dir, { viewSnapshot: snapshot ? join(dir, `${engine}.snapshot.json`) : 'off', viewSnapshotIntervalMs: 0 });
      const started = performance.now();
      const serve = await createServe(ctx, { log, rpcUrl: stub.url });
      const ms = performance.now() - started;
      const replayed = await serve.view.replayed;
      return { serve, ms, replayed };
    };
    // The first start replays everything and leaves a snapshot at the log's end.
    const first = await start(true);
    await first.serve.close();
    rows.push({ bench: 'restart to serving', engine, start: 'no snapshot (full replay)', 'records replayed': first.replayed.records, 'ms': first.ms, 'records/s': first.replayed.perSecond, 'x target (100,000/s)': first.replayed.perSecond / 100_000 });
    const tail = await fill(log, 10_000, filled.nextBlock, pool);
    const resumed = await start(true);
    await resumed.serve.close();
    rows.push({ bench: 'restart to serving', engine, start: `snapshot, ${tail.written} records after it`, 'records replayed': resumed.replayed.records, 'ms': resumed.ms, 'from snapshot': resumed.replayed.fromSnapshot, 'vs full replay (ms)': resumed.ms / first.ms });
  } catch (error) {
    rows.push({ bench: 'restart to serving', engine, error: error instanceof Error ? error.message : String(error) });
  } finally {
    await log.close();
    await stub.close();
  }
  return rows;
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-replay-'));
  try {
    const embeddedRecords = Number(process.env.FLASHLOG_BENCH_REPLAY_RECORDS ?? 1_000_000);
    const kafkaRecords = Number(process.env.FLASHLOG_BENCH_REPLAY_KAFKA_RECORDS ?? 200_000);
    const brokers = (process.env.FLASHLOG_TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
    const prefix = `replay${Date.now().toString(36)}-`;
    return [
      ...await measure('embedded', () => createEmbeddedLog({ path: join(dir, 'flashlog.db') }), embeddedRecords, dir),
      ...await measure('kafka', () => prefixedLog(createKafkaLog({ brokers, clientId: 'flashlog-bench-replay' }), prefix), kafkaRecords, dir),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
