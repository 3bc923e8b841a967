import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
 * Then the same full replay side by side: this tree and a baseline commit (its files copied once
 * into bench/.cache/baseline-<sha> with `git archive`), each in a child process on the same log, with
 * wall time and CPU time (the machine is shared: records per CPU-second is the steadier figure).
 *   FLASHLOG_BENCH_REPLAY_RECORDS (default 1000000), FLASHLOG_BENCH_REPLAY_KAFKA_RECORDS (200000),
 *   FLASHLOG_BENCH_REPLAY_BASELINE (a commit-ish, default main; off to skip).
 */
type Row = Record<string, unknown>;
const emitters = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Hex);

async function fill(
  log: Log,
  records: number,
  firstBlock: bigint,
  pool: { hash: Hex; raw: Hex }[],
): Promise<{ written: number; nextBlock: bigint }> {
  let written = 0;
  let number = firstBlock;
  let batch: ProduceRecord[] = [];
  while (written < records) {
    const block = blockBuilder(number++);
    for (let fb = 0; fb < 10 && written < records; fb++) {
      const flashblock = block.flashblock(pool.slice(fb * 2, fb * 2 + 2), {
        logsPerTx: 4,
        emitters,
        stateDiff: { [emitters[fb]!]: { balance: `0x${(fb + 1).toString(16)}` } },
      });
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

const repo = fileURLToPath(new URL('..', import.meta.url));

/** A checkout of `ref` beside this tree (made once), or a line saying why not. */
function baselineTree(ref: string): { root: string; sha: string } | { error: string } {
  try {
    const sha = execFileSync('git', ['-C', repo, 'rev-parse', '--short=12', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
    const root = join(repo, 'bench', '.cache', `baseline-${sha}`);
    if (!existsSync(join(root, 'streams'))) {
      // A plain copy of the commit's files (git archive), not a worktree: nothing is registered in the repository.
      mkdirSync(root, { recursive: true });
      execFileSync('sh', ['-c', 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"', repo, sha, root], { stdio: 'ignore' });
    }
    if (!existsSync(join(root, 'node_modules'))) symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
    return { root, sha };
  } catch (error) {
    return { error: `no baseline ${ref}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  }
}

/** Full replay of one log by the view of this tree and of the baseline tree, each in its own process. */
function sideBySide(engine: string, target: readonly string[]): Row[] {
  const ref = process.env.FLASHLOG_BENCH_REPLAY_BASELINE ?? 'main';
  if (ref === 'off') return [];
  const baseline = baselineTree(ref);
  if ('error' in baseline) return [{ bench: 'full replay side by side', engine, error: baseline.error }];
  const replay = (root: string) => {
    const child = spawnSync(process.execPath, [join(repo, 'bench', 'children', 'replay-view.ts'), root, engine, ...target], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    if (child.status !== 0 || !line.startsWith('{'))
      throw new Error(`replay in ${root} failed: ${child.stderr.trim().split('\n').slice(-3).join(' ')}`);
    return JSON.parse(line) as { records: number; ms: number; cpuMs: number; invalid: number };
  };
  try {
    const before = replay(baseline.root);
    const after = replay(repo);
    const row = (tree: string, result: typeof before) => ({
      bench: 'full replay side by side',
      engine,
      tree,
      'records replayed': result.records,
      invalid: result.invalid,
      ms: result.ms,
      'records/s': Math.round(result.records / (result.ms / 1000)),
      'records per CPU-second': Math.round(result.records / (result.cpuMs / 1000)),
    });
    return [
      row(`before (${ref} ${baseline.sha})`, before),
      {
        ...row('after (this tree)', after),
        'x before (wall)': before.ms / after.ms,
        'x before (CPU)': before.cpuMs / after.cpuMs,
        'x target (100,000/s)': after.records / (after.ms / 1000) / 100_000,
      },
    ];
  } catch (error) {
    return [{ bench: 'full replay side by side', engine, error: error instanceof Error ? error.message : String(error) }];
  }
}

async function measure(engine: string, open: () => Log, records: number, dir: string, target: readonly string[]): Promise<Row[]> {
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
    rows.push({
      bench: 'restart to serving',
      engine,
      start: 'no snapshot (full replay)',
      'records replayed': first.replayed.records,
      ms: first.ms,
      'records/s': first.replayed.perSecond,
      'x target (100,000/s)': first.replayed.perSecond / 100_000,
    });
    const tail = await fill(log, 10_000, filled.nextBlock, pool);
    const resumed = await start(true);
    await resumed.serve.close();
    rows.push({
      bench: 'restart to serving',
      engine,
      start: `snapshot, ${tail.written} records after it`,
      'records replayed': resumed.replayed.records,
      ms: resumed.ms,
      'from snapshot': resumed.replayed.fromSnapshot,
      'vs full replay (ms)': resumed.ms / first.ms,
    });
    rows.push(...sideBySide(engine, target));
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
      ...(await measure('embedded', () => createEmbeddedLog({ path: join(dir, 'flashlog.db') }), embeddedRecords, dir, [
        join(dir, 'flashlog.db'),
      ])),
      ...(await measure(
        'kafka',
        () => prefixedLog(createKafkaLog({ brokers, clientId: 'flashlog-bench-replay' }), prefix),
        kafkaRecords,
        dir,
        [brokers.join(','), prefix],
      )),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
