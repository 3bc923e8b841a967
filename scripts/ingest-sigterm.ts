/**
 * `node scripts/ingest-sigterm.ts [--attempts 20] [--executor local] [--load 30] [--report DIR]`: how long `ingest`
 * takes to exit after SIGTERM at a random moment under load (issue 19: one ingest did not exit
 * within 20 s in a soak). One devnet at --load; each attempt starts `ingest` against it, waits a
 * random 2-12 s, sends SIGTERM and times the exit (SIGKILL after 30 s, counted as a hang). Bounded:
 * attempts x (12 s + start + at most 30 s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnFlashlog } from '../test/helpers/flashlog-process.ts';

const { values } = parseArgs({
  options: {
    attempts: { type: 'string', default: '20' },
    executor: { type: 'string', default: 'local' },
    load: { type: 'string', default: '30' },
    /** A directory for a Node diagnostic report of each hung ingest (taken on SIGUSR2). */
    report: { type: 'string' },
  },
});
const attempts = Number(values.attempts);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const hangMs = 30_000;

const devnet = spawnFlashlog(['devnet', '--load', values.load, '--devnet-port', '0', '--devnet-ws-port', '0', '--no-metrics']);
const started = await devnet.waitFor((line) => line.msg === 'devnet started', 120_000);
const exits: number[] = [];
let hangs = 0;
try {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'ingest-sigterm-'));
    const ingest = spawnFlashlog(
      [
        'ingest',
        '--ws',
        String(started.ws),
        '--rpc',
        String(started.rpc),
        '--executor',
        values.executor,
        '--no-metrics',
        '--data-dir',
        dir,
      ],
      values.report
        ? { NODE_OPTIONS: `--report-on-signal --report-signal=SIGUSR2 --report-directory=${values.report}`, FLASHLOG_LOG_LEVEL: 'debug' }
        : {},
    );
    await ingest.waitFor((line) => line.msg === 'ingest started', 60_000);
    const waitMs = 2000 + Math.round(Math.random() * 10_000);
    await sleep(waitMs);
    const at = Date.now();
    ingest.child.kill('SIGTERM');
    const exited = await Promise.race([ingest.exited.then(() => true), sleep(hangMs).then(() => false)]);
    const ms = Date.now() - at;
    if (!exited) {
      hangs++;
      // What it was doing: a diagnostic report (JS stack, libuv handles) when --report is given, and its last lines.
      if (values.report) {
        ingest.child.kill('SIGUSR2');
        await sleep(3000);
      }
      process.stdout.write(
        `  last lines: ${ingest.lines
          .slice(-12)
          .map((line) => JSON.stringify(line))
          .join('\n  ')}\n`,
      );
      await ingest.stop('SIGKILL');
    }
    exits.push(ms);
    const notes = ingest.lines.filter((line) => line.level === 40 || line.level === 50).map((line) => String(line.msg));
    process.stdout.write(
      `attempt ${attempt}: SIGTERM after ${waitMs} ms; ${exited ? `exited in ${ms} ms (code ${ingest.child.exitCode})` : `HUNG, killed after ${ms} ms`}${notes.length ? `; warnings: ${[...new Set(notes)].join(' | ')}` : ''}\n`,
    );
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  await devnet.stop();
}
exits.sort((a, b) => a - b);
process.stdout.write(
  `${attempts} attempts: ${hangs} hung (> ${hangMs} ms); exit time median ${exits[Math.floor(exits.length / 2)]} ms, max ${exits[exits.length - 1]} ms\n`,
);
process.exitCode = hangs > 0 ? 1 : 0;
