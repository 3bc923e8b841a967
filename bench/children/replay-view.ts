/**
 * Child process of bench/replay.ts: replays the view of one log from nothing with the flashlog tree
 * at `root` (this tree, or an earlier commit checked out beside it), so two trees replay the same
 * log side by side in one bench run. Prints one JSON line: records, wall ms, CPU ms.
 *   node bench/children/replay-view.ts <root> embedded <file>
 *   node bench/children/replay-view.ts <root> kafka <brokers> <topic prefix>
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [root, engine, target, prefix] = process.argv.slice(2) as [string, 'embedded' | 'kafka', string, string | undefined];
const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-replay-view-'));
const { materialize } = await import(join(root, 'streams/materialize.ts'));
const { benchContext } = await import(join(root, 'bench/gateway.ts'));
let log;
if (engine === 'embedded') {
  const { createEmbeddedLog } = await import(join(root, 'src/log/embedded.ts'));
  log = createEmbeddedLog({ path: target });
} else {
  const { createKafkaLog } = await import(join(root, 'src/log/kafka.ts'));
  const { prefixedLog } = await import(join(root, 'test/helpers/prefixed-log.ts'));
  log = prefixedLog(createKafkaLog({ brokers: target.split(','), clientId: 'flashlog-bench-replay-view' }), prefix!);
}
const ctx = benchContext(dir, { viewSnapshot: 'off' });
const cpuBefore = process.cpuUsage();
const started = performance.now();
const view = await materialize(ctx, { log });
const replayed = await view.replayed;
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const state = view.current();
process.stdout.write(
  `${JSON.stringify({ records: replayed.records, ms, cpuMs: (cpu.user + cpu.system) / 1000, applied: state.applied, invalid: state.invalid })}\n`,
);
await view.close();
await log.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
