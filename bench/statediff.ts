import WebSocket from 'ws';
import { extendBlock, startBlock, type AssembledBlock } from '../src/chain/assemble.ts';
import { createDevnet } from '../devnet/edr/devnet.ts';
import { createLocalExecutor, type LocalExecutor, type StateDiffMode } from '../src/execute/local.ts';
import { createLogger } from '../src/obs/logger.ts';
import { createMetricsRegistry } from '../src/obs/metrics.ts';
import { decodeFrame } from '../src/wire/frame.ts';

/**
 * The local executor's state diff modes on the same devnet feed, side by side in one run: the
 * devnet under its own load (BENCH_STATEDIFF_TPS, default 100 tx/s; 2 s blocks, 200 ms
 * flashblocks) is recorded from its flashblocks WebSocket for BENCH_STATEDIFF_SECONDS (default 20),
 * then every recorded flashblock is executed by one executor per mode (BENCH_STATEDIFF_MODES,
 * default `accounts,storage`), each with its own fork of the devnet's RPC, in turn: flashblock i
 * goes to every executor before flashblock i+1 (the order alternating), so machine noise falls on
 * all modes alike. Reported: time per flashblock (the executor's `execute`), per transaction, and
 * the ratio to the first mode. The first two blocks warm the forks and are not counted.
 */
const TPS = Number(process.env.BENCH_STATEDIFF_TPS ?? 100);
const SECONDS = Number(process.env.BENCH_STATEDIFF_SECONDS ?? 20);
const MODES = (process.env.BENCH_STATEDIFF_MODES ?? 'accounts,storage').split(',') as StateDiffMode[];
const WARMUP_BLOCKS = 2;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

/** Every flashblock of every complete block the feed sent while recording, as the executor gets it. */
async function record(url: string, ms: number): Promise<AssembledBlock[][]> {
  const socket = new WebSocket(url);
  const blocks = new Map<bigint, AssembledBlock[]>();
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    const decoded = decodeFrame(isBinary ? new Uint8Array(data) : data.toString('utf8'), { maxBytes: 16 * 1024 * 1024 });
    if (!decoded.ok) throw new Error(`devnet feed: ${decoded.reason}: ${decoded.detail}`);
    const flashblock = decoded.flashblock;
    const number = BigInt(flashblock.metadata.block_number);
    if (flashblock.index === 0) blocks.set(number, [startBlock(flashblock)]);
    else {
      const so = blocks.get(number);
      if (so) so.push(extendBlock(so.at(-1)!, flashblock));
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await new Promise((resolve) => setTimeout(resolve, ms));
  socket.close();
  // The last block may still be open: left out.
  const numbers = [...blocks.keys()].sort((a, b) => (a < b ? -1 : 1)).slice(0, -1);
  return numbers.map((number) => blocks.get(number)!);
}

export async function run(): Promise<Record<string, unknown>[]> {
  const devnet = await createDevnet({ load: TPS, blockTimeMs: 2000, flashblockMs: 200 });
  try {
    // Past the load's setup (deployments and token hand-outs) before recording.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const blocks = await record(devnet.wsUrl, SECONDS * 1000);
    const logger = createLogger({ level: 'warn', name: 'bench', destination: process.stderr as never });
    const executors: { mode: StateDiffMode; executor: LocalExecutor; times: number[]; perTx: number[]; txs: number; busyMs: number }[] = [];
    for (const mode of MODES) {
      const executor = await createLocalExecutor({
        upstreamUrl: devnet.rpcUrl,
        timeoutMs: 10_000,
        logger,
        metrics: createMetricsRegistry({ defaults: false }),
        stateDiff: mode,
      });
      executors.push({ mode, executor, times: [], perTx: [], txs: 0, busyMs: 0 });
    }
    let turn = 0;
    for (const [b, flashblocks] of blocks.entries()) {
      for (const block of flashblocks) {
        const order = turn++ % 2 === 0 ? executors : [...executors].reverse();
        for (const entry of order) {
          const started = performance.now();
          const output = await entry.executor.execute(block);
          const elapsed = performance.now() - started;
          if (b < WARMUP_BLOCKS || output.receipts.length === 0) continue;
          entry.times.push(elapsed);
          entry.perTx.push(elapsed / output.receipts.length);
          entry.txs += output.receipts.length;
          entry.busyMs += elapsed;
        }
      }
    }
    const rows = executors.map(({ mode, executor, times, txs, busyMs }) => {
      const sorted = [...times].sort((x, y) => x - y);
      return {
        stateDiff: mode,
        blocks: blocks.length - WARMUP_BLOCKS,
        flashblocks: times.length,
        'tx/flashblock': txs / times.length,
        'mean ms/flashblock': busyMs / times.length,
        'p50 ms': percentile(sorted, 50),
        'p99 ms': percentile(sorted, 99),
        'ms/tx': busyMs / txs,
        'tx/s (ingest)': txs / (busyMs / 1000),
        mismatches: executor.totals.mismatches,
        rebuilds: executor.totals.rebuilds,
      };
    });
    const first = rows[0]!;
    for (const row of rows)
      row[`vs ${first.stateDiff}` as never] = `${(row['mean ms/flashblock'] / first['mean ms/flashblock']).toFixed(2)}x` as never;
    for (const { executor } of executors) await executor.close();
    return rows;
  } finally {
    await devnet.close();
  }
}

if (import.meta.main) console.table(await run());
