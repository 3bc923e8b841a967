import { readFileSync } from 'node:fs';
import { slice, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { l1InfoCalldata, parseL1Info } from './l1-info.ts';

/** The Bedrock-form L1-info deposit test/go/op-receipts built (test/fixtures/op-receipt-fees/SOURCE.md). */
const bedrockDeposit = (
  JSON.parse(readFileSync(new URL('../../test/fixtures/op-receipt-fees/receipt-fees.json', import.meta.url), 'utf8')) as {
    l1InfoDeposit?: Hex;
  }[]
).find((block) => block.l1InfoDeposit)!.l1InfoDeposit!;

describe('parseL1Info, Bedrock form', () => {
  it('reads the eight ABI words the generator wrote: the L1 base fee, the fee overhead and scalar', () => {
    const info = parseL1Info(l1InfoCalldata([bedrockDeposit]));
    expect(info).toMatchObject({ form: 'bedrock', l1BlockNumber: 20_000_000n, l1BaseFee: 20_834_824_449n, sequenceNumber: 3n });
    expect(info.overhead).toBe(188n);
    expect(info.scalar).toBe(684_000n);
    expect(info.batcherHash).toBe('0x0000000000000000000000006887246668a3b87f54deb3b94ba47a6f63f32985');
  });

  it('refuses a truncated Bedrock calldata, naming where and its length', () => {
    const data = l1InfoCalldata([bedrockDeposit]);
    expect(() => parseL1Info(slice(data, 0, 100), 'block 7: L1-info deposit')).toThrow(
      'block 7: L1-info deposit: bedrock calldata must be 8 ABI words after the selector, got 100 bytes',
    );
  });
});
