/**
 * Child process of bench/replay.ts: starts a gateway (createServe) on one log with the flashlog
 * tree at `root` (this tree, or an earlier commit checked out beside it) and measures restart to
 * serving, so two trees start on the same log side by side in one bench run. With a snapshot path,
 * the gateway resumes from that snapshot when it fits the log, and leaves one at the log's end.
 * Prints one JSON line: records replayed, wall ms (createServe to listening), CPU ms (the process's
 * and the main thread's), fromSnapshot.
 *   node bench/children/replay-view.ts <root> embedded <file> - <snapshot path|off>
 *   node bench/children/replay-view.ts <root> kafka <brokers> <topic prefix> <snapshot path|off>
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [root, engine, target, prefix, snapshot] = process.argv.slice(2) as [string, 'embedded' | 'kafka', string, string, string];
const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-replay-view-'));
const { createServe } = await import(join(root, 'streams/serve.ts'));
const { benchContext } = await import(join(root, 'bench/gateway.ts'));
const { createRpcStub } = await import(join(root, 'test/helpers/rpc-stub.ts'));
let log;
if (engine === 'embedded') {
  const { createEmbeddedLog } = await import(join(root, 'src/log/embedded/embedded.ts'));
  log = createEmbeddedLog({ path: target });
} else {
  const { createKafkaLog } = await import(join(root, 'src/log/kafka/kafka.ts'));
  const { prefixedLog } = await import(join(root, 'test/helpers/prefixed-log.ts'));
  log = prefixedLog(createKafkaLog({ brokers: target.split(','), clientId: 'flashlog-bench-replay-view' }), prefix);
}
const stub = await createRpcStub({ eth_blockNumber: () => '0x1' });
const ctx = benchContext(dir, { viewSnapshot: snapshot ?? 'off', viewSnapshotIntervalMs: 0 });
const cpuBefore = process.cpuUsage();
const threadCpuBefore = process.threadCpuUsage();
const started = performance.now();
const serve = await createServe(ctx, { log, rpcUrl: stub.url });
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
// The main thread's own CPU: what bounds the replay's wall time when the second core is free (a
// replay worker thread reads and decodes the log beside it; process CPU counts both).
const threadCpu = process.threadCpuUsage(threadCpuBefore);
const replayed = await serve.view.replayed;
const state = serve.view.current();
process.stdout.write(
  `${JSON.stringify({ records: replayed.records, ms, cpuMs: (cpu.user + cpu.system) / 1000, mainThreadCpuMs: (threadCpu.user + threadCpu.system) / 1000, fromSnapshot: replayed.fromSnapshot, applied: state.applied, invalid: state.invalid, skipped: replayed.skipped ?? 0, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
await serve.close();
await log.close();
await stub.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
