import type { Hex } from 'viem';
import type { AssembledBlock } from '../src/chain/assemble.ts';
import { blockRecords } from '../src/chain/records.ts';
import { createLocalExecutor } from '../src/evm/local.ts';
import { createEmbeddedLog } from '../src/log/embedded.ts';
import { allTopics } from '../src/log/topics.ts';
import { createLogger } from '../src/obs/logger.ts';
import { createMetricsRegistry } from '../src/obs/metrics.ts';
import { accounts, startOpUpstream } from '../test/helpers/op-upstream.ts';
import { createTxFactory } from '../test/helpers/tx-factory.ts';

/**
 * The local executor on the devnet workload mix (ETH transfers, log-heavy calls with a storage
 * write, reverting calls, deployments, user deposits), 200 transactions in one flashblock, warm
 * cache (the fork and its state are loaded by earlier blocks). Latency is flashblock handed to
 * the executor -> its block and log records appended to an embedded log. Log calls write one of
 * 64 slots, so a warm fork holds them; deployments and deposits (fresh senders) stay cold reads.
 * State diff modes side by side: none, accounts (balance/nonce/code), full (prestate tracer).
 * Targets (issue 3): >= 50 Mgas/s on one core, p99 <= 50 ms for a 200-tx flashblock.
 */
const TXS_PER_FLASHBLOCK = 200;
const BLOCKS = Number(process.env.BENCH_EXECUTOR_BLOCKS ?? 12);
const WARMUP_BLOCKS = 2;

async function workload(): Promise<{ upstreamUrl: string; blocks: AssembledBlock[][]; close: () => Promise<void> }> {
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
    const chunk: Hex[] = [];
    for (let i = 0; i < TXS_PER_FLASHBLOCK; i++) {
      const sender = i % 10;
      const kind = i % 20;
      if (kind < 8) chunk.push(await txs.transfer(sender, accounts[(sender + 1) % 10]!.address));
      else if (kind < 15) chunk.push(await txs.log(sender, contracts[i % 4]!, ++word % 64n));
      else if (kind < 17) chunk.push(await txs.revert(sender, contracts[i % 4]!));
      else if (kind < 18) chunk.push((await txs.deploy(sender)).raw);
      else chunk.push(txs.deposit(contracts[i % 4]!, ++word));
    }
    // Index 0 (L1 attributes only), then one flashblock of 200 transactions.
    blocks.push(await upstream.produceBlock([[], chunk]));
  }
  return { upstreamUrl: upstream.url, blocks, close: () => upstream.close() };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function run(): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  const { upstreamUrl, blocks, close } = await workload();
  try {
    for (const stateDiff of ['none', 'accounts', 'full'] as const) {
      const logger = createLogger({ level: 'warn', name: 'bench', destination: process.stderr as never });
      const executor = await createLocalExecutor({ upstreamUrl, timeoutMs: 10_000, logger, metrics: createMetricsRegistry({ defaults: false }), stateDiff });
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
          if (b > WARMUP_BLOCKS && block.transactions.length - block.firstNew === TXS_PER_FLASHBLOCK) {
            latencies.push(elapsed);
            gas += executor.totals.gasUsed - gasBefore;
            txCount += output.receipts.length;
            busyMs += elapsed;
          }
        }
      }
      latencies.sort((x, y) => x - y);
      rows.push({
        executor: 'local',
        stateDiff,
        flashblocks: latencies.length,
        txPerFlashblock: TXS_PER_FLASHBLOCK,
        'Mgas/s': Number(gas) / 1e6 / (busyMs / 1000),
        'tx/s': txCount / (busyMs / 1000),
        'p50 ms': percentile(latencies, 50),
        'p99 ms': percentile(latencies, 99),
        'target p99 ms': 50,
        mismatches: executor.totals.mismatches,
        'cache hits/misses': `${executor.forkCache?.stats.hits}/${executor.forkCache?.stats.misses}`,
      });
      await log.close();
      await executor.close();
    }
  } finally {
    await close();
  }
  const none = rows[0]!;
  for (const row of rows) row['p50 vs none'] = `${((row['p50 ms'] as number) / (none['p50 ms'] as number)).toFixed(2)}x`;
  return rows;
}

if (import.meta.main) console.table(await run());
