import { encodeFunctionData } from 'viem';
import { describe, expect, it } from 'vitest';
import { BASE_TIME_PREDEPLOY, DEPOSITOR_ACCOUNT, baseTimeAbi, baseTimeMillisPart, timestampMs } from './basetime.ts';

const input = (millis: number) => encodeFunctionData({ abi: baseTimeAbi, functionName: 'setTimestampMillisPart', args: [millis] });

describe('BaseTime deposit', () => {
  it('reads the millisecond part of tx[1]', () => {
    expect(input(400).slice(0, 10)).toBe('0x86bdf394');
    expect(baseTimeMillisPart({ type: '0x7e', from: DEPOSITOR_ACCOUNT, to: BASE_TIME_PREDEPLOY, input: input(400) })).toBe(400);
    expect(timestampMs(1_700_000_000n, 400)).toBe(1_700_000_000_400n);
  });
  it('is null for anything else', () => {
    expect(baseTimeMillisPart(undefined)).toBeNull();
    expect(baseTimeMillisPart({ type: '0x2', from: DEPOSITOR_ACCOUNT, to: BASE_TIME_PREDEPLOY, input: input(400) })).toBeNull();
    expect(
      baseTimeMillisPart({ type: '0x7e', from: DEPOSITOR_ACCOUNT, to: '0x4200000000000000000000000000000000000015', input: input(400) }),
    ).toBeNull();
    expect(baseTimeMillisPart({ type: '0x7e', from: DEPOSITOR_ACCOUNT, to: BASE_TIME_PREDEPLOY, input: '0x86bdf394' })).toBeNull();
    expect(baseTimeMillisPart({ type: '0x7e', from: DEPOSITOR_ACCOUNT, to: BASE_TIME_PREDEPLOY, input: input(1200) })).toBeNull();
  });
});
