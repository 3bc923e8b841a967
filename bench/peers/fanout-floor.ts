import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The fan-out bench's floor (bench/peers/fanout-floor-go, built here with `go build` into
 * bench/.cache/): a Go server that sends the same `pendingLogs` notifications as flashlog's gateway
 * with nothing else to do (no log, no view, no parsing, no filter), writing on one goroutine per
 * core. Its p99 is what this machine allows with the same client processes on the same cores.
 */
const source = fileURLToPath(new URL('./fanout-floor-go/', import.meta.url));
const binary = fileURLToPath(new URL('../.cache/fanout-floor-go/fanout-floor', import.meta.url));

export interface Floor {
  readonly url: string;
  /** Sends every subscriber the notification of one log (its JSON, the notification's `result`). */
  send(logJson: string): void;
  close(): void;
}

/** Builds the floor server (modules from the Go module proxy); why not, when it can't. */
export function buildFloor(): { skipped: string } | undefined {
  const built = spawnSync('go', ['build', '-o', binary, '.'], { cwd: source, encoding: 'utf8' });
  if (built.error) return { skipped: `go not found on PATH (${built.error.message})` };
  if (built.status !== 0) return { skipped: `go build failed: ${built.stderr.trim().split('\n').slice(-3).join(' / ')}` };
  return undefined;
}

export async function startFloor(): Promise<Floor> {
  const child: ChildProcess = spawn(binary, ['127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(Number(line.split(' ')[1])));
    child.once('exit', (code) => reject(new Error(`fanout-floor exited (${code})`)));
  });
  return {
    url: `ws://127.0.0.1:${port}/`,
    send: (logJson) => void child.stdin!.write(`${logJson}\n`),
    close: () => {
      child.stdin!.end();
      child.kill();
    },
  };
}
