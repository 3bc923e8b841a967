import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Global setup of `npm run chaos`: clears the rows of the last run, and at the end turns the rows
 * every scenario appended (harness.ts `report`) into chaos/results/report.md and report.json, and
 * prints the table.
 */
const resultsDir = fileURLToPath(new URL('../../chaos/results/', import.meta.url));
const rowsFile = join(resultsDir, 'rows.jsonl');

const columns = [
  ['scenario', 'scenario'],
  ['outcome', 'outcome'],
  ['load', 'load'],
  ['faults', 'faults injected'],
  ['lost', 'records lost'],
  ['duplicates', 'duplicates'],
  ['recoveryMs', 'recovery (ms)'],
  ['rssBeforeMiB', 'RSS before (MiB)'],
  ['rssAfterMiB', 'RSS after (MiB)'],
  ['notes', 'notes'],
] as const;

export function renderReport(rows: readonly Record<string, unknown>[], startedAt: Date, ms: number): string {
  const cell = (value: unknown) =>
    String(value ?? '')
      .replaceAll('|', '\\|')
      .replaceAll('\n', ' ');
  const lines = [
    '# flashlog chaos report',
    '',
    `Run ${startedAt.toISOString()}, ${Math.round(ms / 1000)} s, ${rows.length} scenarios, ${rows.filter((row) => row.outcome === 'pass').length} passed.`,
    '"duplicates" counts raw repeats in the log, which a reader deduplicating by (block_number, index) drops;',
    '"records lost" counts what such a reader never sees.',
    '',
    `| ${columns.map(([, title]) => title).join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...[...rows]
      .sort((a, b) => String(a.scenario).localeCompare(String(b.scenario), 'en', { numeric: true }))
      .map((row) => `| ${columns.map(([key]) => cell(row[key])).join(' | ')} |`),
    '',
  ];
  return lines.join('\n');
}

export default function setup(): () => void {
  const startedAt = new Date();
  mkdirSync(resultsDir, { recursive: true });
  rmSync(rowsFile, { force: true });
  return () => {
    const rows = existsSync(rowsFile)
      ? readFileSync(rowsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
      : [];
    const markdown = renderReport(rows, startedAt, Date.now() - startedAt.getTime());
    writeFileSync(join(resultsDir, 'report.md'), markdown);
    writeFileSync(join(resultsDir, 'report.json'), `${JSON.stringify({ startedAt: startedAt.toISOString(), rows }, null, 2)}\n`);
    process.stdout.write(`\n${markdown}\nchaos report: ${join(resultsDir, 'report.md')}\n`);
  };
}
