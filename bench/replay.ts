import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hex } from 'viem';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../src/log/kafka/kafka.ts';
import type { Log, ProduceRecord } from '../src/log/port.ts';
import { allTopics } from '../src/records/topics.ts';
import { prefixedLog } from '../test/helpers/prefixed-log.ts';
import { blockBuilder, signedTransfers } from '../test/helpers/view-records.ts';

/**
 * Restart-to-serving (issue 17): a gateway started on a log of 1,000,000 records, embedded and
 * Kafka (one local broker), from nothing (full replay) and from its view snapshot (taken at the end
 * of the full replay; 10,000 records appended since). Measured from createServe() to the gateway
 * listening (log opened, view replayed, ports bound). The records: blocks of 10 flashblocks x 2
 * transactions x 4 logs, i.e. 1 block record (all transactions so far, the new receipts, a state
 * diff) and 8 log records per flashblock. Target: full replay >= 100,000 records/s.
 * Side by side: this tree and a baseline commit (its files copied once into
 * bench/.cache/baseline-<sha> with `git archive`) each start in a child process on the same log,
 * with wall time and CPU time (the machine is shared: records per CPU-second is the steadier
 * figure). Full replays run twice per tree in the order A B B A and keep the faster.
 *   FLASHLOG_BENCH_REPLAY_RECORDS (default 1000000), FLASHLOG_BENCH_REPLAY_KAFKA_RECORDS (1000000; 0 skips),
 *   FLASHLOG_BENCH_REPLAY_BASELINE (a commit-ish, default main; off to skip).
 *   FLASHLOG_BENCH_REPLAY_NODE_FLAGS="--max-semi-space-size=16": instead of a baseline commit, this
 *   tree with Node's default flags against this tree started with these flags (issue 19: what V8's
 *   young-generation cap costs a replay); each row also has the process's peak RSS.
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

interface Started {
  records: number;
  ms: number;
  cpuMs: number;
  mainThreadCpuMs: number;
  fromSnapshot: boolean;
  invalid: number;
  /** Block records the replay never parsed (their block superseded before its end); 0 before deferral. */
  skipped: number;
  /** The child process's peak resident memory (absent from older trees' children). */
  peakRssMb?: number;
}

/** A gateway started on the log by the tree at `root` in its own process (bench/children/replay-view.ts). */
function startIn(
  tree: { root: string; flags: readonly string[] },
  engine: string,
  target: readonly [string, string],
  snapshot: string,
): Started {
  const { root, flags } = tree;
  const child = spawnSync(
    process.execPath,
    [...flags, join(repo, 'bench', 'children', 'replay-view.ts'), root, engine, ...target, snapshot],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{'))
    throw new Error(`start in ${root} failed: ${child.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return JSON.parse(line) as Started;
}

/**
 * Restart to serving on `records` records, by this tree and the baseline tree side by side: each
 * starts from nothing twice (full replays, the second leaving its snapshot at the log's end), then
 * 10,000 records are appended and each starts again from its snapshot.
 */
async function measure(engine: string, open: () => Log, records: number, dir: string, target: readonly [string, string]): Promise<Row[]> {
  const flags = process.env.FLASHLOG_BENCH_REPLAY_NODE_FLAGS?.split(' ').filter(Boolean);
  const ref = process.env.FLASHLOG_BENCH_REPLAY_BASELINE ?? 'main';
  const baseline = ref === 'off' || flags ? undefined : baselineTree(ref);
  const rows: Row[] = [];
  if (baseline && 'error' in baseline) rows.push({ bench: 'restart to serving', engine, error: baseline.error });
  const trees = flags
    ? [
        { tree: 'before (this tree, default flags)', root: repo, flags: [] },
        { tree: `after (this tree, node ${flags.join(' ')})`, root: repo, flags },
      ]
    : [
        ...(baseline && !('error' in baseline) ? [{ tree: `before (${ref} ${baseline.sha})`, root: baseline.root, flags: [] }] : []),
        { tree: 'after (this tree)', root: repo, flags: [] },
      ];
  const log = open();
  try {
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    const pool = await signedTransfers(20);
    const filled = await fill(log, records, 10_000_000n, pool);
    const snapshotOf = (index: number) => join(dir, `${engine}.${index}.snapshot.json`);
    // Each full replay twice per tree, in the order A B B A, keeping the faster of the two (by wall
    // time and by CPU time apart): the load of a shared machine changes within a run, and an order
    // that always put one tree first would hand it the quieter minute. The first of a tree's two
    // reads no snapshot and writes a throw-away one; the second (still no snapshot to read) leaves
    // the snapshot at the log's end that its restart below resumes from.
    const order = [...trees.keys(), ...[...trees.keys()].reverse()];
    const seen = new Set<number>();
    const runs = order.map((index) => {
      const snapshot = seen.has(index) ? snapshotOf(index) : join(dir, `${engine}.${index}.first.snapshot.json`);
      seen.add(index);
      return { index, started: startIn(trees[index]!, engine, target, snapshot) };
    });
    const full = trees.map((_, index): Started => {
      const own = runs.filter((run) => run.index === index).map((run) => run.started);
      return {
        ...own[0]!,
        ms: Math.min(...own.map((started) => started.ms)),
        cpuMs: Math.min(...own.map((started) => started.cpuMs)),
        mainThreadCpuMs: Math.min(...own.map((started) => started.mainThreadCpuMs)),
        peakRssMb: Math.max(...own.map((started) => started.peakRssMb ?? Number.NaN)),
      };
    });
    const tail = await fill(log, 10_000, filled.nextBlock, pool);
    // A restart from the snapshot leaves a new one at the log's end (a second restart would have
    // nothing to replay), so each tree restarts once.
    const resumed = trees.map((tree, index) => startIn(tree, engine, target, snapshotOf(index)));
    trees.forEach((tree, index) => {
      const started = full[index]!;
      const before = full[0]!;
      rows.push({
        bench: 'restart to serving',
        engine,
        start: 'no snapshot (full replay)',
        tree: tree.tree,
        'records replayed': started.records,
        invalid: started.invalid,
        'skipped (superseded)': started.skipped,
        ms: started.ms,
        'records/s': Math.round(started.records / (started.ms / 1000)),
        'records per CPU-second': Math.round(started.records / (started.cpuMs / 1000)),
        'records per main-thread CPU-second': Math.round(started.records / (started.mainThreadCpuMs / 1000)),
        'peak RSS MB': started.peakRssMb,
        'x target (100,000/s)': started.records / (started.ms / 1000) / 100_000,
        ...(index > 0
          ? {
              'x before (wall)': before.ms / started.ms,
              'x before (CPU)': before.cpuMs / started.cpuMs,
              'x before (main-thread CPU)': before.mainThreadCpuMs / started.mainThreadCpuMs,
            }
          : {}),
      });
    });
    trees.forEach((tree, index) => {
      const started = resumed[index]!;
      rows.push({
        bench: 'restart to serving',
        engine,
        start: `snapshot, ${tail.written} records after it`,
        tree: tree.tree,
        'records replayed': started.records,
        'from snapshot': started.fromSnapshot,
        ms: started.ms,
        'vs full replay (ms)': started.ms / full[index]!.ms,
        ...(index > 0
          ? {
              'x before (wall)': resumed[0]!.ms / started.ms,
              'x before (CPU)': resumed[0]!.cpuMs / started.cpuMs,
              'x before (main-thread CPU)': resumed[0]!.mainThreadCpuMs / started.mainThreadCpuMs,
            }
          : {}),
      });
    });
  } catch (error) {
    rows.push({ bench: 'restart to serving', engine, error: error instanceof Error ? error.message : String(error) });
  } finally {
    await log.close();
  }
  return rows;
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-replay-'));
  try {
    const embeddedRecords = Number(process.env.FLASHLOG_BENCH_REPLAY_RECORDS ?? 1_000_000);
    const kafkaRecords = Number(process.env.FLASHLOG_BENCH_REPLAY_KAFKA_RECORDS ?? 1_000_000);
    const brokers = (process.env.FLASHLOG_TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
    const prefix = `replay${Date.now().toString(36)}-`;
    // an engine given 0 records is skipped
    return [
      ...(embeddedRecords === 0
        ? []
        : await measure('embedded', () => createEmbeddedLog({ path: join(dir, 'flashlog.db') }), embeddedRecords, dir, [
            join(dir, 'flashlog.db'),
            '-',
          ])),
      ...(kafkaRecords === 0
        ? []
        : await measure(
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
