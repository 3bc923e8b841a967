import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));

export interface FlashlogProcess {
  readonly child: ChildProcess;
  /** Every JSON log line so far. */
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first log line (past or future) that `match` accepts. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** What it wrote to stderr so far. */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `node bin/flashlog.js ...args` as a real child process, parsing its pino JSON lines.
 * `binPath`: another tree's bin/flashlog.js (the soak's baseline runs).
 */
export function spawnFlashlog(args: readonly string[], env: Record<string, string> = {}, binPath = bin): FlashlogProcess {
  const child = spawn(process.execPath, [binPath, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ text });
      }
    }
    for (const wake of waiters) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(match);
          if (found) {
            done();
            resolve(found);
          } else if (child.exitCode !== null) {
            done();
            reject(new Error(`flashlog ${args[0]} exited ${child.exitCode} before the expected line; stderr: ${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `flashlog ${args[0]}: no matching line in ${timeoutMs} ms; stderr: ${stderr}; last lines: ${JSON.stringify(lines.slice(-5))}`,
            ),
          );
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Starts `flashlog enclave` on a free port; resolves once it listens. */
export async function startEnclaveProcess(
  extra: readonly string[] = [],
  listen = 'tcp://127.0.0.1:0',
): Promise<{ process: FlashlogProcess; url: string; signer: string }> {
  const proc = spawnFlashlog(['enclave', '--listen', listen, '--no-metrics', ...extra]);
  const line = await proc.waitFor((l) => l.msg === 'enclave listening');
  return { process: proc, url: String(line.listen), signer: String(line.signer) };
}

/** Runs `node bin/flashlog.js ...args` to its end: its exit code, stdout and stderr. */
export function runFlashlog(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
