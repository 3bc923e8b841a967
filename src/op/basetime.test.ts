import { encodeFunctionData, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import {
  BASE_TIME_PREDEPLOY,
  DEPOSITOR_ACCOUNT,
  baseTimeAbi,
  baseTimeDeposit,
  baseTimeMillisPart,
  baseTimeSourceHash,
  timestampMs,
} from './basetime.ts';

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

/** viem's parse of a deposit (its return type does not name the deposit fields). */
type Deposit = { sourceHash: Hex; from: Hex; to: Hex; mint?: bigint; value?: bigint; gas: bigint; isSystemTx?: boolean; data: Hex };

describe('baseTimeDeposit', () => {
  it("is Base's tx[1]: from the depositor to BaseTime, gas 1,000,000, no mint, no value, not a system tx, the setter's 36 bytes", () => {
    const tx = parseTransaction(baseTimeDeposit({ blockNumber: 9n, millisPart: 600 })) as unknown as Deposit;
    expect(tx).toMatchObject({ type: 'deposit', from: DEPOSITOR_ACCOUNT, to: BASE_TIME_PREDEPLOY, gas: 1_000_000n, data: input(600) });
    expect(tx.mint ?? 0n).toBe(0n);
    expect(tx.value ?? 0n).toBe(0n);
    expect(tx.isSystemTx ?? false).toBe(false);
    expect(tx.sourceHash).toBe(baseTimeSourceHash(9n));
    expect(baseTimeMillisPart({ type: '0x7e', from: tx.from, to: tx.to, input: tx.data })).toBe(600);
  });
  it('takes another sender (the devnet) and nothing else changes; one source hash per block number', () => {
    const devnet = parseTransaction(
      baseTimeDeposit({ blockNumber: 9n, millisPart: 600, from: '0xdeaddeaddeaddeaddeadba5e0000000000000009' }),
    );
    const base = parseTransaction(baseTimeDeposit({ blockNumber: 9n, millisPart: 600 })) as unknown as Deposit;
    expect({ ...devnet, from: base.from }).toEqual(base);
    expect(baseTimeSourceHash(10n)).not.toBe(baseTimeSourceHash(9n));
  });
});
