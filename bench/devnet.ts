import { createDevnet } from '../devnet/edr/devnet.ts';

/**
 * The devnet under its own load at the default timing (2 s blocks, 200 ms flashblocks): how many
 * transactions a second it actually pre-confirms for a requested rate, the CPU it takes (main
 * thread and EDR together, % of one core), and how regular the flashblocks are (interval p50, p99,
 * max; the target is 200 ms). Each flashblock re-mines the block so far, so cost grows with the
 * block's size.
 */
export async function run(): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const tps of [50, 200, 400]) {
    const devnet = await createDevnet({ load: tps });
    const arrivals: number[] = [];
    let transactions = 0;
    devnet.onFlashblock((flashblock) => {
      arrivals.push(performance.now());
      transactions += flashblock.diff.transactions.length;
    });
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const cpu = process.cpuUsage(cpuBefore);
    const elapsed = performance.now() - started;
    await devnet.close();
    const gaps = arrivals
      .slice(1)
      .map((time, i) => time - arrivals[i]!)
      .sort((a, b) => a - b);
    const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))] ?? Number.NaN;
    rows.push({
      'requested tx/s': tps,
      'pre-confirmed tx/s': (transactions / elapsed) * 1000,
      'delivered / requested': ((transactions / elapsed) * 1000) / tps,
      'cpu % of a core': ((cpu.user + cpu.system) / 1000 / elapsed) * 100,
      'flashblock interval p50 ms': at(0.5),
      'p99 ms': at(0.99),
      'max ms': gaps.at(-1) ?? Number.NaN,
    });
  }
  return rows;
}
