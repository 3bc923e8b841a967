import { counter, type Registry } from '../obs/metrics.ts';
import type { Comparison, Mismatch } from './compare.ts';

/**
 * The checker's running counts: what `flashlog check-gateway` prints at the end and exports as
 * Prometheus metrics while it runs (so an operator can alert on `flashlog_checker_mismatches_total`).
 */
export interface Summary {
  /** Pending blocks whose answers were compared with the node's sealed block. */
  readonly blocks: number;
  /** Pending blocks the node sealed differently, which the gateway withdrew in time. */
  readonly replaced: number;
  /** Versions of pending blocks compared (a block being built has one per flashblock seen). */
  readonly versions: number;
  /** Of those, blocks being built (no hash yet): pre-confirmations ahead of the node. */
  readonly versionsBeingBuilt: number;
  /** Gateway answers recorded while their block was pending (and compared or judged). */
  readonly answers: number;
  readonly fieldsCompared: number;
  readonly mismatches: number;
  readonly mismatchesByField: Readonly<Record<string, number>>;
  /** The first mismatches of each field, with block and values, for the report. */
  readonly examples: readonly (Mismatch & { readonly block: string })[];
  readonly notCompared: Readonly<Record<string, string>>;
  /** Pending answers older than the gateway's latest, read just before: by what was read. */
  readonly pendingOlderThanLatest: Readonly<Record<string, number>>;
  /** Snapshots dropped because the pending block moved while they were read, or a call failed. */
  readonly skipped: Readonly<Record<string, number>>;
}

export interface Tally {
  addComparison(block: string, answers: number, comparison: Comparison, beingBuilt?: boolean): void;
  /** A block compared (once per height, whatever its snapshots). */
  blockCompared(): void;
  replaced(answers: number): void;
  /** A replaced block the gateway still served after the node sealed another: mismatches under `field`. */
  stillServed(block: string, field: string, gateway: unknown, node: unknown): void;
  pendingOlder(read: string): void;
  skipped(reason: string): void;
  summary(): Summary;
}

const EXAMPLES_PER_FIELD = 3;

export function createTally(registry?: Registry): Tally {
  const metrics = registry
    ? {
        blocks: counter(registry, 'flashlog_checker_blocks_total', 'pending blocks held against the node once sealed, by outcome', [
          'outcome',
        ]),
        answers: counter(registry, 'flashlog_checker_answers_total', 'gateway answers recorded while their block was pending and compared'),
        fields: counter(registry, 'flashlog_checker_fields_compared_total', 'fields compared with the node'),
        mismatches: counter(registry, 'flashlog_checker_mismatches_total', 'fields whose gateway answer differs from the node, by field', [
          'field',
        ]),
        older: counter(
          registry,
          'flashlog_checker_pending_older_than_latest_total',
          'pending answers older than the gateway latest read just before, by read',
          ['read'],
        ),
        skipped: counter(registry, 'flashlog_checker_skipped_total', 'snapshots not recorded or not judged, by reason', ['reason']),
      }
    : undefined;
  let blocks = 0;
  let replacedBlocks = 0;
  let answers = 0;
  let versions = 0;
  let versionsBeingBuilt = 0;
  let fieldsCompared = 0;
  let mismatches = 0;
  const byField: Record<string, number> = {};
  const examples: (Mismatch & { block: string })[] = [];
  const notCompared: Record<string, string> = {};
  const older: Record<string, number> = {};
  const skippedBy: Record<string, number> = {};
  const mismatch = (block: string, entry: Mismatch) => {
    mismatches++;
    byField[entry.field] = (byField[entry.field] ?? 0) + 1;
    if (byField[entry.field]! <= EXAMPLES_PER_FIELD) examples.push({ ...entry, block });
    metrics?.mismatches.inc({ field: entry.field });
  };
  return {
    addComparison(block, count, comparison, beingBuilt = false) {
      versions++;
      if (beingBuilt) versionsBeingBuilt++;
      answers += count;
      fieldsCompared += comparison.compared;
      metrics?.answers.inc(count);
      metrics?.fields.inc(comparison.compared);
      for (const entry of comparison.mismatches) mismatch(block, entry);
      for (const entry of comparison.notCompared) notCompared[entry.field] ??= entry.reason;
    },
    blockCompared() {
      blocks++;
      metrics?.blocks.inc({ outcome: 'compared' });
    },
    replaced(count) {
      replacedBlocks++;
      answers += count;
      metrics?.answers.inc(count);
      metrics?.blocks.inc({ outcome: 'replaced' });
    },
    stillServed(block, field, gateway, node) {
      fieldsCompared++;
      metrics?.fields.inc();
      mismatch(block, { field, gateway, node });
    },
    pendingOlder(read) {
      older[read] = (older[read] ?? 0) + 1;
      metrics?.older.inc({ read });
    },
    skipped(reason) {
      skippedBy[reason] = (skippedBy[reason] ?? 0) + 1;
      metrics?.skipped.inc({ reason });
    },
    summary: () => ({
      blocks,
      replaced: replacedBlocks,
      versions,
      versionsBeingBuilt,
      answers,
      fieldsCompared,
      mismatches,
      mismatchesByField: { ...byField },
      examples: [...examples],
      notCompared: { ...notCompared },
      pendingOlderThanLatest: { ...older },
      skipped: { ...skippedBy },
    }),
  };
}

const show = (value: unknown): string => {
  if (value === undefined) return '(absent)';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** What the checker reports while it runs. */
export interface Progress {
  readonly summary: Summary;
  /** Since the last height judged (or the start). */
  readonly idleMs: number;
  /** Whether the gateway and the node serve one chain, as last checked. */
  readonly chains: 'same' | 'different' | 'unknown';
}

/**
 * A progress report as one line a person reads:
 * `checker: 120 blocks compared (310 versions, 190 being built), 4 replaced | 5210 answers, 91034 fields | 0 mismatches`.
 */
export function formatProgress({ summary, idleMs, chains }: Progress): string {
  const parts = [
    `checker: ${summary.blocks} blocks compared (${summary.versions} versions, ${summary.versionsBeingBuilt} being built), ${summary.replaced} replaced`,
    `${summary.answers} answers, ${summary.fieldsCompared} fields`,
    summary.mismatches === 0 ? '0 mismatches' : `${summary.mismatches} MISMATCHES`,
  ];
  if (chains === 'different') parts.push('the gateway and the node serve different chains: nothing compared');
  else if (chains === 'unknown') parts.push('chains not compared yet (gateway or node unreachable)');
  if (idleMs >= 60_000) parts.push(`nothing judged for ${Math.floor(idleMs / 60_000)} min`);
  return parts.join(' | ');
}

/** The summary as a person reads it. */
export function formatSummary(summary: Summary): string {
  const lines = [
    `blocks compared: ${summary.blocks} (${summary.versions} versions, ${summary.versionsBeingBuilt} of them blocks being built), replaced before sealing and withdrawn: ${summary.replaced}`,
    `answers: ${summary.answers}, fields compared: ${summary.fieldsCompared}, mismatches: ${summary.mismatches}`,
  ];
  const fields = Object.entries(summary.mismatchesByField).sort((a, b) => b[1] - a[1]);
  if (fields.length > 0) {
    lines.push('mismatches by field:');
    for (const [field, count] of fields) lines.push(`  ${field}: ${count}`);
    lines.push('examples (gateway vs node):');
    const shown = new Set<string>();
    for (const example of summary.examples.filter((entry) => !shown.has(entry.field) && shown.add(entry.field)))
      lines.push(`  block ${example.block} ${example.field}: ${show(example.gateway)} vs ${show(example.node)}`);
  }
  const older = Object.entries(summary.pendingOlderThanLatest);
  lines.push(`pending older than latest: ${older.length === 0 ? 0 : older.map(([read, count]) => `${read} ${count}`).join(', ')}`);
  const notCompared = Object.entries(summary.notCompared);
  if (notCompared.length > 0) {
    lines.push('not compared:');
    for (const [field, reason] of notCompared) lines.push(`  ${field}: ${reason}`);
  }
  const skipped = Object.entries(summary.skipped);
  if (skipped.length > 0) lines.push(`skipped: ${skipped.map(([reason, count]) => `${reason} ${count}`).join(', ')}`);
  lines.push(summary.mismatches === 0 ? "OK: every compared answer was the node's" : `FAIL: ${summary.mismatches} mismatches`);
  return lines.join('\n');
}
