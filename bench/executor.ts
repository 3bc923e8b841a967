import type { Hex } from 'viem';
import type { AssembledBlock } from '../src/chain/assemble.ts';
import { blockRecords } from '../src/records/blocks.ts';
import { createLocalExecutor } from '../src/execute/local.ts';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { allTopics } from '../src/records/topics.ts';
import { createLogger } from '../src/obs/logger.ts';
import { createMetricsRegistry } from '../src/obs/metrics.ts';
import { accounts, startOpUpstream } from '../test/helpers/op-upstream.ts';
import { createTxFactory } from '../test/helpers/tx-factory.ts';

/**
 * The local executor on the devnet workload mix (40% ETH transfers, 35% log calls with a storage
 * write, 10% reverting calls, 5% deployments, 10% user deposits from fresh senders), warm cache
 * (the fork and its state loaded by two earlier blocks). Latency is flashblock handed to the
 * executor -> its block and log records appended to an embedded log. Log calls write one of 64
 * slots, so a warm fork holds them; deployments and deposits stay cold reads by nature.
 * Two block shapes (one 200-tx flashblock; ten 20-tx flashblocks, each re-mining the block so far)
 * and the state diff modes side by side: none, accounts (balance/nonce/code), storage (accounts and
 * changed slots, each new tx traced alone in a scratch block), full (prestate tracer in the block).
 * Targets (issue 3): >= 50 Mgas/s on one core, p99 <= 50 ms for a 200-tx flashblock.
 */
const BLOCKS = Number(process.env.BENCH_EXECUTOR_BLOCKS ?? 8);
const WARMUP_BLOCKS = 2;
type Mode = 'none' | 'accounts' | 'storage' | 'full';
/** The state diff modes to run, side by side (BENCH_EXECUTOR_MODES=accounts,storage for two). */
const MODES = (process.env.BENCH_EXECUTOR_MODES ?? 'none,accounts,storage,full').split(',') as Mode[];

/** Two shapes of block: one 200-tx flashblock (the target case), or ten of 20 txs (a devnet-like block). */
interface Shape {
  readonly name: string;
  readonly flashblocks: number;
  readonly txsPerFlashblock: number;
}
const shapes: readonly Shape[] = [
  { name: '1 x 200 tx', flashblocks: 1, txsPerFlashblock: 200 },
  { name: '10 x 20 tx', flashblocks: 10, txsPerFlashblock: 20 },
];

async function workload(shape: Shape): Promise<{ upstreamUrl: string; blocks: AssembledBlock[][]; close: () => Promise<void> }> {
  const upstream = await startOpUpstream();
  const txs = createTxFactory(upstream.chainId);
  const contracts: Hex[] = [];
  const deployments: Hex[] = [];
  for (let i = 0; i < 4; i++) {
    const deployed = await txs.deploy(i);
    contracts.push(deployed.address);
    deployments.push(deployed.raw);
  }
  const blocks: AssembledBlock[][] = [await upstream.produceBlock([deployments])];
  let word = 0n;
  for (let b = 0; b < BLOCKS; b++) {
    // Index 0 (L1 attributes only), then the block's flashblocks.
    const chunks: Hex[][] = [[]];
    for (let f = 0; f < shape.flashblocks; f++) {
      const chunk: Hex[] = [];
      for (let i = 0; i < shape.txsPerFlashblock; i++) {
        const sender = i % 10;
        const kind = (f * shape.txsPerFlashblock + i) % 20;
        if (kind < 8) chunk.push(await txs.transfer(sender, accounts[(sender + 1) % 10]!.address));
        else if (kind < 15) chunk.push(await txs.log(sender, contracts[i % 4]!, ++word % 64n));
        else if (kind < 17) chunk.push(await txs.revert(sender, contracts[i % 4]!));
        else if (kind < 18) chunk.push((await txs.deploy(sender)).raw);
        else chunk.push(txs.deposit(contracts[i % 4]!, ++word));
      }
      chunks.push(chunk);
    }
    blocks.push(await upstream.produceBlock(chunks));
  }
  return { upstreamUrl: upstream.url, blocks, close: () => upstream.close() };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function run(): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const shape of shapes) {
    const { upstreamUrl, blocks, close } = await workload(shape);
    try {
      const modes = MODES;
      for (const stateDiff of modes) {
        const logger = createLogger({ level: 'warn', name: 'bench', destination: process.stderr as never });
        const executor = await createLocalExecutor({
          upstreamUrl,
          timeoutMs: 10_000,
          logger,
          metrics: createMetricsRegistry({ defaults: false }),
          stateDiff,
        });
        const log = createEmbeddedLog({ path: ':memory:' });
        await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
        const latencies: number[] = [];
        let gas = 0n;
        let txCount = 0;
        let busyMs = 0;
        for (const [b, flashblocks] of blocks.entries()) {
          // The traced diff takes seconds per flashblock: two measured blocks are enough to show it.
          if (stateDiff === 'full' && b > WARMUP_BLOCKS + 2) break;
          for (const block of flashblocks) {
            const gasBefore = executor.totals.gasUsed;
            const started = performance.now();
            const output = await executor.execute(block);
            await log.produce(blockRecords(block, output, 'local'));
            const elapsed = performance.now() - started;
            if (b > WARMUP_BLOCKS && block.transactions.length > block.firstNew) {
              latencies.push(elapsed);
              gas += executor.totals.gasUsed - gasBefore;
              txCount += output.receipts.length;
              busyMs += elapsed;
            }
          }
        }
        latencies.sort((x, y) => x - y);
        rows.push({
          block: shape.name,
          stateDiff,
          flashblocks: latencies.length,
          'Mgas/s': Number(gas) / 1e6 / (busyMs / 1000),
          'tx/s': txCount / (busyMs / 1000),
          'p50 ms': percentile(latencies, 50),
          'p99 ms': percentile(latencies, 99),
          'target p99 ms': shape.flashblocks === 1 ? 50 : '',
          mismatches: executor.totals.mismatches,
          'fork cache hits/misses': `${executor.forkCache?.stats.hits}/${executor.forkCache?.stats.misses}`,
        });
        await log.close();
        await executor.close();
      }
    } finally {
      await close();
    }
  }
  for (const row of rows) {
    for (const against of ['none', 'accounts'] as const) {
      const other = rows.find((candidate) => candidate.block === row.block && candidate.stateDiff === against);
      if (other) row[`p50 vs ${against}`] = `${((row['p50 ms'] as number) / (other['p50 ms'] as number)).toFixed(2)}x`;
    }
  }
  return rows;
}

if (import.meta.main) console.table(await run());
