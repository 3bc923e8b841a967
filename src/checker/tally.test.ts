import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { compareValues, emptyComparison } from './compare.ts';
import { createTally, formatProgress, formatSummary } from './tally.ts';

describe('tally', () => {
  it('counts blocks, answers, fields and mismatches by field, in the summary and the metrics', async () => {
    const registry = createMetricsRegistry({ defaults: false });
    const tally = createTally(registry);
    const comparison = compareValues('eth_getBalance', '0x1', '0x2', undefined, emptyComparison());
    compareValues('eth_getTransactionCount', '0x3', '0x3', undefined, comparison);
    tally.addComparison('7 with 3 txs', 2, comparison);
    tally.blockCompared();
    tally.replaced(5);
    tally.pendingOlder('block number');
    tally.stillServed('8', 'replaced.eth_getTransactionByHash', '0xab in block 8', 'not in sealed 0xcd');
    const summary = tally.summary();
    expect(summary).toMatchObject({
      blocks: 1,
      replaced: 1,
      answers: 7,
      fieldsCompared: 3,
      mismatches: 2,
      mismatchesByField: { eth_getBalance: 1, 'replaced.eth_getTransactionByHash': 1 },
      pendingOlderThanLatest: { 'block number': 1 },
    });
    const text = await registry.metrics();
    expect(text).toMatch(/flashlog_checker_mismatches_total\{field="eth_getBalance"\} 1/);
    expect(text).toMatch(/flashlog_checker_blocks_total\{outcome="replaced"\} 1/);
    expect(text).toMatch(/flashlog_checker_fields_compared_total 3/);
    expect(text).toMatch(/flashlog_checker_pending_older_than_latest_total\{read="block number"\} 1/);
    const printed = formatSummary(summary);
    expect(printed).toContain('eth_getBalance: 1');
    expect(printed).toContain('block 7 with 3 txs eth_getBalance: 0x1 vs 0x2');
    expect(printed).toContain('pending older than latest: block number 1');
    expect(printed).toMatch(/FAIL: 2 mismatches$/);
  });

  it('says OK when nothing differed', () => {
    const tally = createTally();
    tally.addComparison('1', 1, compareValues('eth_getCode', '0x', '0x', undefined, emptyComparison()));
    expect(formatSummary(tally.summary())).toMatch(/^OK/m);
  });

  it('prints progress as a line a person reads, not JSON', () => {
    const tally = createTally();
    tally.addComparison('7 with 3 txs', 4, compareValues('eth_getBalance', '0x1', '0x2', undefined, emptyComparison()), true);
    tally.blockCompared();
    const line = formatProgress({ summary: tally.summary(), idleMs: 0, chains: 'same' });
    expect(line).toBe('checker: 1 blocks compared (1 versions, 1 being built), 0 replaced | 4 answers, 1 fields | 1 MISMATCHES');
    expect(formatProgress({ summary: createTally().summary(), idleMs: 360_000, chains: 'different' })).toBe(
      'checker: 0 blocks compared (0 versions, 0 being built), 0 replaced | 0 answers, 0 fields | 0 mismatches | the gateway and the node serve different chains: nothing compared | nothing judged for 6 min',
    );
  });
});
