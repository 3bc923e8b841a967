import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The re-execution bench's peer (bench/peers/kona-reexec): kona's stateless OP Stack block builder
 * (`kona-executor` and the alloy/op-alloy crates it takes, released on crates.io) re-executing the
 * same fixture files. Built here with cargo into bench/.cache/ (cargo rebuilds only what changed),
 * or taken from FLASHLOG_BENCH_KONA (a binary path).
 */
const manifest = fileURLToPath(new URL('./kona-reexec/Cargo.toml', import.meta.url));
const target = fileURLToPath(new URL('../.cache/kona-reexec-target/', import.meta.url));

export interface KonaRun {
  readonly blocks: number;
  readonly mgas: number;
  readonly coldMgasPerS: number;
  readonly warmMgasPerS: number;
  readonly coldCpuMgasPerS: number;
  readonly warmCpuMgasPerS: number;
}

/** The binary, built when needed; why not, when it can't be had. */
export function konaBinary(): { binary: string } | { skipped: string } {
  const given = process.env.FLASHLOG_BENCH_KONA;
  if (given) return existsSync(given) ? { binary: given } : { skipped: `FLASHLOG_BENCH_KONA=${given}: no such file` };
  const built = spawnSync('nice', ['-n', '10', 'cargo', 'build', '--release', '--locked', '--manifest-path', manifest], {
    encoding: 'utf8',
    env: { ...process.env, CARGO_TARGET_DIR: target },
  });
  if (built.error) return { skipped: `cargo not available (${built.error.message})` };
  if (built.status !== 0) return { skipped: `cargo build failed: ${built.stderr.trim().split('\n').slice(-3).join(' / ')}` };
  return { binary: `${target}release/kona-reexec` };
}

/** Runs the peer on the fixture files: round 1 cold, the warm figure over the later rounds. */
export function runKona(binary: string, files: readonly string[], rounds = 3): KonaRun {
  const run = spawnSync(binary, ['--rounds', String(rounds), ...files], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`kona-reexec exited ${run.status}: ${(run.stderr || run.error?.message || '').trim()}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as KonaRun;
}
