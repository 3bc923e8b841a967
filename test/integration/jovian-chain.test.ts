import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareHeaders } from '../../src/evm/op/compare.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { parseBlockFixture } from '../../src/prover/host/fixture.ts';

/**
 * Blocks op-geth v1.101702.3 built and accepted across the Jovian activation (test/fixtures/jovian-chain,
 * written by test/go/jovian-chain), re-executed from their witnesses: the rebuilt header must be op-geth's,
 * field by field, and hash to op-geth's block hash. One block op-geth refused (DA footprint over the gas
 * limit) must be refused here too.
 */
const dir = fileURLToPath(new URL('../fixtures/jovian-chain/', import.meta.url));
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort();
const raw = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, any>;
const accepted = files.filter((name) => !name.includes('over-da-limit'));

describe("re-executing op-geth's Jovian blocks", () => {
  it('has the 7 accepted blocks and the refused one', () => {
    expect(accepted).toHaveLength(7);
    expect(files).toContain('jovian-chain-over-da-limit-5.json');
  });

  it.each(accepted)('%s reproduces op-geth’s header and block hash', async (name) => {
    const fixture = parseBlockFixture(raw(name), name);
    const executed = await executeBlock(fixture.block);
    expect(compareHeaders(executed.header, fixture.expectedHeader).differing).toEqual([]);
    expect(executed.hash).toBe(fixture.expectedHash);
    expect(executed.rules.fork).toBe(fixture.block.attributes.timestamp >= 30n ? 'jovian' : 'isthmus');
  });

  it('the DA-footprint-bound block: blobGasUsed above gasUsed, and the next base fee metered on it', () => {
    const five = raw('jovian-chain-5.json').expected.header;
    const six = raw('jovian-chain-6.json');
    expect(BigInt(five.blobGasUsed)).toBeGreaterThan(BigInt(five.gasUsed));
    expect(BigInt(six.expected.header.baseFeePerGas)).toBeGreaterThan(BigInt(six.parentHeader.baseFeePerGas));
  });

  it('covers a revert, a contract creation and an EIP-7702 transaction, each with the Jovian operator fee', async () => {
    const four = await executeBlock(parseBlockFixture(raw('jovian-chain-4.json')).block);
    const five = await executeBlock(parseBlockFixture(raw('jovian-chain-5.json')).block);
    expect(four.receipts.map((receipt) => receipt.status)).toContain(0);
    expect(four.receipts.some((receipt) => receipt.logs.length === 1)).toBe(true);
    const setCode = five.receipts.find((receipt) => receipt.type === 4)!;
    expect(setCode.logs).toHaveLength(1); // the delegated code ran in the delegating account
    // operator fee scalar 7, constant 1,000 in L1Block (Jovian: gas · scalar · 100 + constant)
    expect(setCode.operatorFee).toBe(setCode.gasUsed * 7n * 100n + 1_000n);
  });

  it('refuses the block op-geth refused: DA footprint over the gas limit', async () => {
    const json = raw('jovian-chain-over-da-limit-5.json');
    expect(json.expected.refusedByOpGeth).toBe('DA footprint 79020000 exceeds block gas limit 30000000');
    await expect(executeBlock(parseBlockFixture(json).block)).rejects.toThrow(
      expect.objectContaining({
        code: 'BLOCK_INVALID',
        message: expect.stringContaining('DA footprint 79020000 exceeds the block gas limit 30000000'),
      }),
    );
  });
});
