import { describe, expect, it } from 'vitest';
import { judgeCadence, sampleHead, type Head } from './cadence.ts';

const head = (number: number, timestampMs: number | null = 1_700_000_000_000 + number * 200): Head => ({ number, timestampMs });

describe('judgeCadence (the Denim rule)', () => {
  it('passes a head advancing about every 200 ms and reports the chain interval from timestampMs', () => {
    const cadence = judgeCadence({ first: head(100), last: head(110), elapsedMs: 2040, longestStallMs: 260, missingTimestampMs: false });
    expect(cadence).toMatchObject({ healthy: true, blocks: 10, meanIntervalMs: 204, chainIntervalMs: 200, timestampMs: true });
    expect(cadence.line).toBe(
      'cadence: ok, 10 blocks in 2.0 s, one every 204 ms (target 200 ms; chain time 200 ms per block), timestampMs on every block',
    );
  });

  it('fails a head that stays, goes back or moves once a second, naming which', () => {
    expect(
      judgeCadence({ first: head(100), last: head(100), elapsedMs: 2000, longestStallMs: 2000, missingTimestampMs: false }),
    ).toMatchObject({
      healthy: false,
      meanIntervalMs: null,
      line: 'cadence: FAIL, not advancing: the head stayed at block 100 for 2.0 s (a Denim node makes a block every 200 ms)',
    });
    expect(
      judgeCadence({ first: head(100), last: head(98), elapsedMs: 2000, longestStallMs: 0, missingTimestampMs: false }).line,
    ).toContain('went back from 100 to 98');
    const slow = judgeCadence({
      first: head(100, 1_000),
      last: head(102, 3_000),
      elapsedMs: 2100,
      longestStallMs: 1000,
      missingTimestampMs: false,
    });
    expect(slow).toMatchObject({ healthy: false, meanIntervalMs: 1050, chainIntervalMs: 1000 });
    expect(slow.line).toBe('cadence: FAIL, slow: 2 blocks in 2.1 s, one every 1050 ms (target 200 ms; chain time 1000 ms per block)');
  });

  it("passes a 200 ms head whose blocks lack timestampMs (optional in Base's docs), saying so, without a chain interval", () => {
    expect(
      judgeCadence({ first: head(100, null), last: head(110, null), elapsedMs: 2000, longestStallMs: 200, missingTimestampMs: true }),
    ).toMatchObject({
      healthy: true,
      timestampMs: false,
      chainIntervalMs: null,
      line: "cadence: ok, 10 blocks in 2.0 s, one every 200 ms (target 200 ms), timestampMs absent on some blocks (an optional field in Base's docs)",
    });
    // Present at both ends, missing in between: the chain interval is still reported.
    expect(
      judgeCadence({ first: head(100), last: head(110), elapsedMs: 2000, longestStallMs: 200, missingTimestampMs: true }),
    ).toMatchObject({ healthy: true, chainIntervalMs: 200, timestampMs: false });
  });
});

describe('sampleHead', () => {
  it('reads the head for the window and keeps the first and last reads and the longest stall', async () => {
    let clock = 0;
    const numbers = [5, 5, 6, 6, 6, 6, 7];
    let reads = 0;
    const sample = await sampleHead(
      async () => {
        const number = numbers[Math.min(reads++, numbers.length - 1)]!;
        return head(number, number === 6 ? null : 1000 * number);
      },
      300,
      1,
      () => (clock += 25),
    );
    expect(sample.first.number).toBe(5);
    expect(sample.last.number).toBe(7);
    expect(sample.missingTimestampMs).toBe(true);
    expect(sample.longestStallMs).toBeGreaterThanOrEqual(100);
  });
});
