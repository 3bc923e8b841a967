/**
 * `npm run bench`: runs every bench/*.ts that exports `run()`, side by side in one process, and
 * writes bench/results/bench.json and bench/results/bench.md. Figures from a noisy machine are
 * only comparable within one run; read the ratios.
 *   npm run bench                 all benchmarks
 *   npm run bench -- ingest log   only these
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';

type Row = Record<string, unknown>;
const here = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const names = readdirSync(here)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.endsWith('.test.ts'))
  .map((file) => file.slice(0, -3))
  .filter((name) => only.length === 0 || only.includes(name))
  .sort();

const results: Record<string, Row[] | { error: string }> = {};
for (const name of names) {
  const module = (await import(`./${name}.ts`)) as { run?: () => Promise<Row[]> };
  if (typeof module.run !== 'function') continue;
  process.stderr.write(`bench ${name}...\n`);
  const started = Date.now();
  try {
    results[name] = await module.run();
  } catch (error) {
    results[name] = { error: error instanceof Error ? error.message : String(error) };
  }
  process.stderr.write(`bench ${name}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

const table = (rows: Row[]): string => {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cell = (value: unknown) =>
    typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(2)) : String(value ?? '');
  return [
    `| ${columns.join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${columns.map((column) => cell(row[column])).join(' | ')} |`),
  ].join('\n');
};
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
const markdown = [
  `# flashlog benchmarks`,
  '',
  `${new Date().toISOString()} on ${machine}. Compare within a run: this machine is noisy.`,
  '',
  ...Object.entries(results).flatMap(([name, rows]) => [`## ${name}`, '', Array.isArray(rows) ? table(rows) : `failed: ${rows.error}`, '']),
].join('\n');
const out = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(out, { recursive: true });
writeFileSync(`${out}bench.json`, `${JSON.stringify({ at: new Date().toISOString(), machine, results }, null, 2)}\n`);
writeFileSync(`${out}bench.md`, markdown);
process.stdout.write(`${markdown}\nwritten: bench/results/bench.json, bench/results/bench.md\n`);
process.exit(Object.values(results).some((rows) => !Array.isArray(rows)) ? 1 : 0);
