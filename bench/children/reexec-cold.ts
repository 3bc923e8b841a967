/**
 * Child process of bench/reexec.ts: the cold figure. Parses the fixtures (not timed), then imports
 * the stateless executor and runs each fixture once, timing from the import on: module loading,
 * WebAssembly compilation and an unwarmed JIT included, process start and parsing excluded.
 * Prints one JSON line: gas, wall ms, CPU ms.
 *   node bench/children/reexec-cold.ts <fast|reference> <fixture.json>...
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseBlockFixture } from '../../src/prover/host/fixture.ts';

const [mode, ...files] = process.argv.slice(2);
const fixtures = files.map((file) => parseBlockFixture(JSON.parse(readFileSync(file, 'utf8')), basename(file)));
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const { executeBlock } = await import('../../src/evm/op/execute-block.ts');
let gas = 0n;
for (const fixture of fixtures) {
  const executed = await executeBlock(fixture.block, { reference: mode === 'reference' });
  if (executed.hash !== fixture.expectedHash) throw new Error(`block ${executed.header.number}: hash differs`);
  gas += executed.header.gasUsed;
}
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ gas: Number(gas), ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
