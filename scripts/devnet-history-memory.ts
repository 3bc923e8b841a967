/**
 * `node scripts/devnet-history-memory.ts [--minutes 4] [--load 30] [--history 30] [--block-time-ms 2000]`:
 * the flashblocks devnet (the library, as `flashlog devnet` runs it) under its built-in load, with
 * and without a bounded history, side by side: two child processes at the same time, each
 * sampling its own RssAnon (/proc/self/status) and CPU every 10 s after a full collection. Prints,
 * per case, the RSS slope after warm-up (the first third, at least 60 s) in MB per minute
 * (least squares), the CPU in % of one core after warm-up, and the transactions the load got in.
 *
 * `--history` is the library's `historyBlocks`; the command takes at least 256 (BLOCKHASH), which
 * at 2 s blocks is a rollover every 8.5 minutes: a short run uses a smaller one to see several.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { createDevnet } from '../devnet/edr/devnet.ts';
import { releaseDroppedProviders } from '../src/evm/edr.ts';
import { leastSquaresSlope, selfAnonMiB } from './sample-process.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '4' },
    load: { type: 'string', default: '30' },
    history: { type: 'string', default: '30' },
    'block-time-ms': { type: 'string', default: '2000' },
    case: { type: 'string' },
  },
});
const minutes = Number(values.minutes);

async function child(historyBlocks: number): Promise<void> {
  const metrics = new Registry();
  const devnet = await createDevnet({ load: Number(values.load), blockTimeMs: Number(values['block-time-ms']), historyBlocks, metrics });
  const started = performance.now();
  const warmMs = Math.max(60_000, (minutes * 60_000) / 3);
  const samples: [number, number][] = [];
  let cpuAtWarm: NodeJS.CpuUsage | undefined;
  let txsAtWarm = 0;
  const txs = () => Object.values(devnet.load!.counts()).reduce((sum, n) => sum + n, 0);
  while (performance.now() - started < minutes * 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const at = performance.now() - started;
    if (at < warmMs) continue;
    if (!cpuAtWarm) {
      cpuAtWarm = process.cpuUsage();
      txsAtWarm = txs();
    }
    releaseDroppedProviders();
    samples.push([at / 60_000, selfAnonMiB()]);
  }
  const cpu = process.cpuUsage(cpuAtWarm);
  const afterWarmS = (performance.now() - started - warmMs) / 1000;
  const rollovers = (await metrics.getSingleMetric('flashlog_devnet_rollovers_total')?.get())?.values[0]?.value ?? 0;
  const answer = (await (
    await fetch(devnet.rpcUrl, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
  ).json()) as {
    result: string;
  };
  const head = BigInt(answer.result);
  console.log(
    JSON.stringify({
      case: historyBlocks ? `history ${historyBlocks}` : 'whole history',
      minutes,
      blocks: Number(head),
      txsAfterWarm: txs() - txsAtWarm,
      rollovers,
      rssAnonWarmMiB: Math.round(samples[0]![1]),
      rssAnonEndMiB: Math.round(samples.at(-1)![1]),
      rssSlopeMiBPerMin: +leastSquaresSlope(samples).toFixed(2),
      cpuPercentOfOneCore: Math.round(((cpu.user + cpu.system) / 1e6 / afterWarmS) * 100),
      samples: samples.map(([, mib]) => Math.round(mib)),
    }),
  );
  await devnet.close();
  process.exit(0);
}

if (values.case !== undefined) await child(Number(values.case));
else {
  const self = fileURLToPath(import.meta.url);
  const common = ['--minutes', values.minutes, '--load', values.load, '--block-time-ms', values['block-time-ms']];
  const runs = ['0', values.history].map(
    (history) =>
      new Promise<string>((resolve, reject) => {
        const proc = spawn(process.execPath, [self, ...common, '--case', history], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        proc.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`case ${history} exited ${code}`))));
      }),
  );
  for (const out of await Promise.all(runs)) process.stdout.write(out);
}
