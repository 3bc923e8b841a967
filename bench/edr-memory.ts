import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Where a bare EDR provider (the devnet's engine, devnet/edr/edr-chain.ts) keeps native memory, one
 * way of mining at a time, with EDR's own bound on its block state cache (100,000 states: in effect
 * none) and with the devnet's (DEVNET_MAX_CACHED_STATES, which createEngine sets): the own memory
 * (RssAnon) grown after a warm-up, in MiB per 1,000 transactions executed. Each case is a child
 * process of its own (bench/children/edr-memory.ts), one after the other.
 *   FLASHLOG_BENCH_EDR_MEMORY_BLOCKS=300   blocks per case (a fifth of them warm up)
 *   FLASHLOG_BENCH_EDR_MEMORY_TXS=20       ETH transfers per block
 *   FLASHLOG_BENCH_EDR_MEMORY_BOUND=16     also each way at this bound
 */
const child = fileURLToPath(new URL('./children/edr-memory.ts', import.meta.url));
const run$ = promisify(execFile);

export async function run(): Promise<Record<string, unknown>[]> {
  const blocks = Number(process.env.FLASHLOG_BENCH_EDR_MEMORY_BLOCKS ?? 300);
  const txs = Number(process.env.FLASHLOG_BENCH_EDR_MEMORY_TXS ?? 20);
  const bounds: { name: string; states: string | undefined }[] = [
    { name: "EDR's (100,000 states)", states: '100000' },
    { name: "the devnet's", states: undefined },
    ...(process.env.FLASHLOG_BENCH_EDR_MEMORY_BOUND
      ? [{ name: `${process.env.FLASHLOG_BENCH_EDR_MEMORY_BOUND} states`, states: process.env.FLASHLOG_BENCH_EDR_MEMORY_BOUND }]
      : []),
  ];
  const rows: Record<string, unknown>[] = [];
  for (const pattern of ['plain', 'snapshot', 'devnet'] as const)
    for (const bound of bounds) {
      const env = { ...process.env };
      if (bound.states === undefined) delete env.__EDR_MAX_CACHED_STATES;
      else env.__EDR_MAX_CACHED_STATES = bound.states;
      const { stdout } = await run$(process.execPath, ['--expose-gc', child, pattern, String(blocks), String(txs)], {
        env,
        maxBuffer: 1 << 20,
      });
      const row = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, number>;
      rows.push({
        mined: pattern,
        'state cache bound': bound.name,
        'blocks × txs': `${blocks} × ${txs}`,
        'RssAnon after warm-up MiB': row.warmMiB,
        'RssAnon at end MiB': row.endMiB,
        'MiB per 1,000 txs executed': row.miBPerThousandTxs,
        'txs/s': row.txsPerS,
      });
    }
  return rows;
}
