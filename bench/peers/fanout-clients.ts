import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The fan-out bench's subscriber processes (bench/fanout.ts), each holding up to `perProcess`
 * WebSocket connections to one server:
 * - `go`: bench/peers/fanout-client-go (gorilla/websocket, built here with `go build` into
 *   bench/.cache/), the default: a subscriber costs the two shared cores about a third of a Node one,
 *   so more of them are left to the server under test;
 * - `node`: bench/peers/fanout-client.ts (ws), what earlier rounds measured with.
 * Both do the same per message (parse the whole JSON message, read the µs stamp, record the
 * latency) and are used alike for every server, so the servers' figures stay comparable.
 */
export type ClientKind = 'go' | 'node';
/** What a client does on each connection: subscribe to a flashlog kind, or nothing (the proxy). */
export type ClientMode = 'pendingLogs' | 'logs' | 'proxy';

export interface Clients {
  /** Every latency (µs, sorted) and the client processes' CPU time (µs) since the last report. */
  report(): Promise<{ latencies: Float64Array; cpuUs: number }>;
  close(): void;
  readonly failed: number;
}

const nodeScript = fileURLToPath(new URL('./fanout-client.ts', import.meta.url));
const goSource = fileURLToPath(new URL('./fanout-client-go/', import.meta.url));
const goBinary = fileURLToPath(new URL('../.cache/fanout-client-go/fanout-client', import.meta.url));

/** Builds the Go client (modules from the Go module proxy); why not, when it can't. */
export function buildGoClient(): { skipped: string } | undefined {
  const built = spawnSync('go', ['build', '-o', goBinary, '.'], { cwd: goSource, encoding: 'utf8' });
  if (built.error) return { skipped: `go not found on PATH (${built.error.message})` };
  if (built.status !== 0) return { skipped: `go build failed: ${built.stderr.trim().split('\n').slice(-3).join(' / ')}` };
  return undefined;
}

/** One client process: `ready` once all its connections are subscribed, `report` its figures. */
interface ClientProcess {
  readonly ready: Promise<number>;
  report(): Promise<{ latencies: Float64Array; cpuUs: number }>;
  kill(): void;
}

function nodeClient(url: string, count: number, mode: ClientMode): ClientProcess {
  const child: ChildProcess = fork(nodeScript, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise<number>((resolve, reject) => {
    child.once('message', (message: { failed: number }) => resolve(message.failed));
    child.once('exit', (code) => reject(new Error(`client process exited (${code})`)));
  });
  child.send({ start: { url, count, mode } });
  return {
    ready,
    report: () =>
      new Promise((resolve) => {
        child.once('message', resolve);
        child.send({ report: true });
      }),
    kill: () => child.kill(),
  };
}

function goClient(url: string, count: number, mode: ClientMode): ClientProcess {
  const child = spawn(goBinary, [url, String(count), mode], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const ready = new Promise<number>((resolve, reject) => {
    void next().then((line) => resolve(Number(line.split(' ')[2])));
    child.once('exit', (code) => reject(new Error(`client process exited (${code})`)));
  });
  return {
    ready,
    async report() {
      const answer = next();
      child.stdin.write('report\n');
      const [cpu, list] = (await answer).split(' ');
      return { cpuUs: Number(cpu), latencies: list ? Float64Array.from(list.split(','), Number) : new Float64Array() };
    },
    kill: () => child.kill(),
  };
}

export async function startClients(kind: ClientKind, url: string, count: number, mode: ClientMode, perProcess: number): Promise<Clients> {
  const children: ClientProcess[] = [];
  for (let left = count; left > 0; left -= perProcess) {
    const size = Math.min(perProcess, left);
    children.push(kind === 'go' ? goClient(url, size, mode) : nodeClient(url, size, mode));
  }
  const failed = (await Promise.all(children.map((child) => child.ready))).reduce((sum, each) => sum + each, 0);
  return {
    failed,
    async report() {
      const parts = await Promise.all(children.map((child) => child.report()));
      const all = new Float64Array(parts.reduce((sum, part) => sum + part.latencies.length, 0));
      let at = 0;
      for (const part of parts) {
        all.set(part.latencies, at);
        at += part.latencies.length;
      }
      return { latencies: all.sort(), cpuUs: parts.reduce((sum, part) => sum + part.cpuUs, 0) };
    },
    close() {
      for (const child of children) child.kill();
    },
  };
}
