import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * `run`, `ingest` and a separate `serve` given the same settings (flags or FLASHLOG_* variables)
 * decide the same source: the real commands, as processes, each reporting what it decided. Nothing
 * needs to listen at the URLs: the decision comes before any connection.
 */
const feed = 'ws://127.0.0.1:9/feed';
const node = 'http://127.0.0.1:9';
const dirs: { remove(): void }[] = [];
afterAll(() => dirs.forEach((dir) => dir.remove()));

async function decidedBy(command: 'run' | 'ingest' | 'serve', args: string[], env: Record<string, string>): Promise<unknown> {
  const dir = tempDir('flashlog-source-mode-');
  dirs.push(dir);
  const own = command === 'ingest' ? ['--no-metrics'] : ['--port', '0', '--no-metrics'];
  const proc: FlashlogProcess = spawnFlashlog([command, ...args, ...own, '--data-dir', dir.path], env);
  try {
    const line = await proc.waitFor((l) => l.msg === 'source decided', 30_000);
    return line.source;
  } finally {
    await proc.stop('SIGKILL');
  }
}

const cases: { settings: string; args: string[]; env?: Record<string, string>; expected: 'flashblocks' | 'blocks' }[] = [
  { settings: '--rpc only', args: ['--rpc', node], expected: 'blocks' },
  { settings: '--ws and --rpc', args: ['--ws', feed, '--rpc', node], expected: 'flashblocks' },
  { settings: '--source blocks beside --ws', args: ['--source', 'blocks', '--ws', feed, '--rpc', node], expected: 'blocks' },
  { settings: 'FLASHLOG_WS and FLASHLOG_RPC', args: [], env: { FLASHLOG_WS: feed, FLASHLOG_RPC: node }, expected: 'flashblocks' },
];

describe('the source is decided once: run, ingest and serve agree', () => {
  for (const { settings, args, env = {}, expected } of cases) {
    it(`${settings}: ${expected}`, async () => {
      const [run, ingest, serve] = await Promise.all([
        decidedBy('run', args, env),
        decidedBy('ingest', args, env),
        decidedBy('serve', args, env),
      ]);
      expect({ run, ingest, serve }).toEqual({ run: expected, ingest: expected, serve: expected });
    }, 120_000);
  }
});

describe('--network op-mainnet / op-sepolia: no public subblocks feed is documented', () => {
  for (const network of ['op-mainnet', 'op-sepolia']) {
    it(`${network} without --ws: run and ingest refuse in one line saying how to point --ws at a provider's feed`, async () => {
      const refusals = await Promise.all(
        (['run', 'ingest'] as const).map(async (command) => {
          const dir = tempDir('flashlog-op-preset-');
          dirs.push(dir);
          const own = command === 'ingest' ? ['--no-metrics'] : ['--port', '0', '--no-metrics'];
          const proc = spawnFlashlog([command, '--network', network, ...own, '--data-dir', dir.path]);
          const code = await proc.exited;
          const said = [proc.stderr(), ...proc.lines.map((line) => String(line.msg ?? line.text ?? ''))].join('\n');
          return { command, code, said };
        }),
      );
      for (const { command, code, said } of refusals) {
        expect(code, command).not.toBe(0);
        expect(said, command).toMatch(
          new RegExp(`--network ${network}: OP documents no public subblocks feed; give --ws \\(FLASHLOG_WS\\)`),
        );
      }
    }, 60_000);
  }
});
