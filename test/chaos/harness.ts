import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { topics } from '../../src/records/topics.ts';
import { flashblockRecordSchema } from '../../src/records/flashblocks.ts';
import { decodeFrame } from '../../src/wire/frame.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * The fault-injection harness: real `flashlog` child processes (SIGKILL, SIGSTOP, SIGCONT), their
 * resident memory from /proc, a private Kafka broker that a scenario may kill, a recorder of what a
 * flashblocks feed sent, a dedup reader of what reached the log, and the report every scenario
 * appends a row to (written by report-setup.ts at the end of the run).
 */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const resultsDir = join(repoRoot, 'chaos/results');
export const rowsFile = join(resultsDir, 'rows.jsonl');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A TCP port nobody listens on right now (127.0.0.1). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resident set size of a process in MiB (VmRSS of /proc/<pid>/status), or NaN once it is gone. */
export function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Samples a process's RSS every `everyMs`; `stop()` returns the samples. */
export function sampleRss(pid: () => number | undefined, everyMs = 500): { samples: number[]; max(): number; stop(): number[] } {
  const samples: number[] = [];
  const take = () => {
    const value = rssMiB(pid());
    if (Number.isFinite(value)) samples.push(value);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    max: () => Math.max(...samples),
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** A `flashlog` child process the harness can restart with the same arguments. */
export interface Managed {
  current: FlashlogProcess;
  readonly pid: number | undefined;
  kill(signal?: NodeJS.Signals): Promise<void>;
  freeze(): void;
  thaw(): void;
  restart(): FlashlogProcess;
  stop(): Promise<void>;
}

const everything: Managed[] = [];

export function managed(args: readonly string[], env: Record<string, string> = {}): Managed {
  const start = () => spawnFlashlog(args, { FLASHLOG_LOG_LEVEL: 'info', ...env });
  const handle: Managed = {
    current: start(),
    get pid() {
      return handle.current.child.pid;
    },
    async kill(signal = 'SIGKILL') {
      const child = handle.current.child;
      if (child.exitCode === null && child.signalCode === null) {
        if (signal === 'SIGKILL') child.kill('SIGCONT');
        child.kill(signal);
      }
      await handle.current.exited;
    },
    freeze() {
      handle.current.child.kill('SIGSTOP');
    },
    thaw() {
      handle.current.child.kill('SIGCONT');
    },
    restart() {
      handle.current = start();
      return handle.current;
    },
    async stop() {
      const child = handle.current.child;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const exited = await Promise.race([handle.current.exited.then(() => true), sleep(5000).then(() => false)]);
      if (!exited) await handle.kill('SIGKILL');
    },
  };
  everything.push(handle);
  return handle;
}

/** Stops every process started through `managed` (afterAll). */
export async function stopAll(): Promise<void> {
  await Promise.all(everything.splice(0).map((handle) => handle.stop()));
}

/** Reads a pino field from the first log line matching `msg`. */
export async function lineField(proc: FlashlogProcess, msg: string, field: string, timeoutMs = 60_000): Promise<string> {
  const line = await proc.waitFor((candidate) => candidate.msg === msg, timeoutMs);
  return String(line[field]);
}

/** `flashlog devnet` as a child process on free ports; resolves with its URLs. */
export async function startDevnet(extra: readonly string[] = []): Promise<{ proc: Managed; rpc: string; ws: string }> {
  const proc = managed(['devnet', '--devnet-port', '0', '--devnet-ws-port', '0', '--metrics-port', '0', ...extra]);
  const line = await proc.current.waitFor((candidate) => candidate.msg === 'devnet started', 60_000);
  return { proc, rpc: String(line.rpc), ws: String(line.ws) };
}

// ---------------------------------------------------------------------------------------------
// A private Kafka broker (its own port and data directory), so a scenario can SIGKILL it without
// touching the shared broker on 9092.

export interface PrivateKafka {
  readonly port: number;
  readonly brokers: string;
  readonly pid: () => number;
  /** SIGKILL of the broker JVM (by the pid in its data directory). */
  kill(): Promise<void>;
  /** Starts it again on the same port and storage; resolves once it is ready. */
  start(): Promise<number>;
  /** Stops it and removes its data directory. */
  remove(): Promise<void>;
}

export async function startPrivateKafka(): Promise<PrivateKafka> {
  // The controller listens on port + 1: find a pair that is free.
  let port = 0;
  for (let attempt = 0; attempt < 20 && port === 0; attempt++) {
    const candidate = await freePort();
    if (candidate === 9092 || candidate === 9093 || candidate > 65000) continue;
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(candidate + 1, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) port = candidate;
  }
  if (port === 0) throw new Error('no free port pair for a private Kafka broker');
  const dataDir = mkdtempSync(join(tmpdir(), 'flashlog-chaos-kafka-'));
  const pidFile = join(dataDir, 'broker.pid');
  // The controller port is set, not inherited: a KAFKA_CONTROLLER_PORT exported for the shared
  // broker would otherwise make this one bind the shared broker's controller port.
  const env = {
    ...process.env,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(port + 1),
    KAFKA_DATA_DIR: dataDir,
    KAFKA_HEAP: '384m',
  };
  const start = async (): Promise<number> => {
    const began = Date.now();
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('bash', [join(repoRoot, 'infra/kafka/start.sh')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.on('exit', (code) => resolve({ code, output }));
    });
    if (result.code !== 0) throw new Error(`private Kafka on ${port} did not start: ${result.output}`);
    return Date.now() - began;
  };
  const pid = () => Number(readFileSync(pidFile, 'utf8').trim());
  const alive = (value: number) => {
    try {
      process.kill(value, 0);
      return true;
    } catch {
      return false;
    }
  };
  await start();
  return {
    port,
    brokers: `127.0.0.1:${port}`,
    pid,
    async kill() {
      const value = pid();
      if (port === 9092) throw new Error('refusing to kill the shared broker');
      if (alive(value)) process.kill(value, 'SIGKILL');
      while (alive(value)) await sleep(50);
    },
    start,
    async remove() {
      if (existsSync(pidFile)) {
        const value = pid();
        if (alive(value)) {
          process.kill(value, 'SIGTERM');
          const deadline = Date.now() + 10_000;
          while (alive(value) && Date.now() < deadline) await sleep(100);
          if (alive(value)) process.kill(value, 'SIGKILL');
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// What the feed sent, and what reached the log.

/** A flashblock's identity: `block/index`. */
export const fbKey = (block: bigint | number, index: number) => `${block}/${index}`;

export interface FeedRecorder {
  /** Keys in arrival order (each once), with their arrival times. */
  readonly keys: string[];
  readonly arrivedAt: Map<string, number>;
  /** Raw transactions (0x-hex) by flashblock key, for latency measurements. */
  readonly transactions: Map<string, readonly string[]>;
  readonly failures: string[];
  close(): void;
}

/** Connects to a flashblocks feed and records every flashblock it sends (decoded with flashlog's decoder). */
export async function recordFeed(url: string): Promise<FeedRecorder> {
  const keys: string[] = [];
  const arrivedAt = new Map<string, number>();
  const transactions = new Map<string, readonly string[]>();
  const failures: string[] = [];
  const socket = new WebSocket(url);
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    const now = Date.now();
    const decoded = decodeFrame(isBinary ? new Uint8Array(data) : data.toString('utf8'), { maxBytes: 16 * 1024 * 1024 });
    if (!decoded.ok) {
      failures.push(`${decoded.reason}: ${decoded.detail}`);
      return;
    }
    const key = fbKey(BigInt(decoded.flashblock.metadata.block_number), decoded.flashblock.index);
    if (arrivedAt.has(key)) return;
    keys.push(key);
    arrivedAt.set(key, now);
    transactions.set(key, decoded.flashblock.diff.transactions as readonly string[]);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { keys, arrivedAt, transactions, failures, close: () => socket.terminate() };
}

/** Every flashblock record in a Kafka log's flashlog.flashblocks, as keys in log order (duplicates kept). */
export async function readFlashblockKeys(brokers: string): Promise<string[]> {
  const kafka = new Kafka({ brokers: [brokers], clientId: `chaos-reader-${process.pid}`, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topics.flashblocks);
  await admin.disconnect();
  const total = ends.reduce((sum, end) => sum + Number(end.high) - Number(end.low), 0);
  const keys: string[] = [];
  if (total === 0) return keys;
  const consumer = kafka.consumer({ groupId: `chaos-reader-${process.pid}-${Date.now()}-${Math.random()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topics.flashblocks], fromBeginning: true });
  const remaining = new Map(ends.map((end) => [end.partition, BigInt(end.high)]));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${keys.length} of ${total} flashblock records in 60 s`)), 60_000);
    void consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          const record = flashblockRecordSchema.parse(JSON.parse(message.value!.toString('utf8')));
          keys.push(fbKey(BigInt(record.blockNumber), record.index));
          if (BigInt(message.offset) + 1n >= (remaining.get(partition) ?? 0n)) remaining.delete(partition);
          if (remaining.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return keys;
}

/**
 * What a reader that dedups by (block_number, index) makes of `logged`, against what the feed
 * sent: the keys it never sees (lost), the raw repeats it drops (rawDuplicates), and keys in the
 * window the feed never sent (unexpected; a dedup reader would pass those on, so they must be 0).
 */
export function compareKeys(
  expected: readonly string[],
  logged: readonly string[],
): { lost: string[]; rawDuplicates: number; unexpected: string[] } {
  const counts = new Map<string, number>();
  for (const key of logged) counts.set(key, (counts.get(key) ?? 0) + 1);
  const lost = expected.filter((key) => !counts.has(key));
  const rawDuplicates = [...counts.values()].reduce((sum, count) => sum + count - 1, 0);
  const sent = new Set(expected);
  const first = expected.length ? blockOf(expected[0]!) : 0n;
  const last = expected.length ? blockOf(expected[expected.length - 1]!) : -1n;
  const unexpected = [...counts.keys()].filter((key) => blockOf(key) >= first && blockOf(key) <= last && !sent.has(key));
  return { lost, rawDuplicates, unexpected };
}

/** Keys of the blocks fully inside (first, last]: the flashblocks of whole blocks the window saw from index 0. */
export function wholeBlocks(keys: readonly string[], after: bigint, upTo: bigint): string[] {
  return keys.filter((key) => {
    const block = BigInt(key.split('/')[0]!);
    return block > after && block <= upTo;
  });
}

export const blockOf = (key: string): bigint => BigInt(key.split('/')[0]!);

// ---------------------------------------------------------------------------------------------
// JSON-RPC helpers.

export async function rpcCall<T = unknown>(url: string, method: string, params: unknown[] = [], timeoutMs = 10_000): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw Object.assign(new Error(`${method}: ${body.error.code} ${body.error.message}`), { code: body.error.code });
  return body.result as T;
}

/** p-th percentile (0-100) of numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

// ---------------------------------------------------------------------------------------------
// The report.

export interface ReportRow {
  readonly scenario: string;
  readonly load: string;
  readonly faults: string;
  readonly lost: number | string;
  readonly duplicates: number | string;
  readonly recoveryMs: number | string;
  readonly rssBeforeMiB: number | string;
  readonly rssAfterMiB: number | string;
  readonly notes?: string;
}

/** Appends the row when the current test finishes, with its outcome (pass/fail). */
export function report(row: ReportRow): void {
  const startedAt = Date.now();
  onTestFinished((context) => {
    mkdirSync(resultsDir, { recursive: true });
    const state = (context.task.result?.state ?? 'unknown') as string;
    appendFileSync(rowsFile, `${JSON.stringify({ ...row, outcome: state, at: new Date(startedAt).toISOString() })}\n`);
  });
}
