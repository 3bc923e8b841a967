import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareHeaders } from '../../src/evm/op/compare.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { parseBlockFixture } from '../../src/prover/host/fixture.ts';
import { JOVIAN_BLOCK } from '../oracle/chain.ts';

/**
 * Blocks op-geth built (test/fixtures/op-geth, written by test/oracle/generate.ts) re-executed from
 * op-geth's own execution witness: Isthmus blocks 1-4, Jovian's activation block 5 and Jovian blocks
 * 6-9 (minBaseFee, the DA footprint, the Jovian operator fee). Every header field and the hash must be
 * op-geth's.
 */
const dir = fileURLToPath(new URL('../fixtures/op-geth/', import.meta.url));
const files = readdirSync(dir)
  .filter((name) => /^op-geth-\d+\.json$/.test(name))
  .sort((a, b) => Number(a.match(/\d+/)![0]) - Number(b.match(/\d+/)![0]));
const numberOf = (name: string) => BigInt(name.match(/\d+/)![0]);
const isthmus = files.filter((name) => numberOf(name) < JOVIAN_BLOCK);
const jovian = files.filter((name) => numberOf(name) >= JOVIAN_BLOCK);

async function reproduces(name: string) {
  const fixture = parseBlockFixture(JSON.parse(readFileSync(join(dir, name), 'utf8')), name);
  const executed = await executeBlock(fixture.block);
  expect(compareHeaders(executed.header, fixture.expectedHeader!).differing).toEqual([]);
  expect(executed.hash).toBe(fixture.expectedHash);
}

describe('re-executing the blocks op-geth built, from its debug_executionWitness', () => {
  it('has nine fixtures: four Isthmus blocks, the Jovian activation block and four Jovian blocks', () => {
    expect(isthmus).toHaveLength(4);
    expect(jovian).toHaveLength(5);
  });

  it('covers what the README says: minBaseFee in extraData, a clamped base fee, a DA-footprint-bound block, EIP-7702, deposits with mint', () => {
    const fixtures = files.map((name) => parseBlockFixture(JSON.parse(readFileSync(join(dir, name), 'utf8')), name));
    const header = (n: number) => fixtures[n - 1]!.expectedHeader!;
    // Version 1 extraData from the activation block on: 0x01 ‖ denominator ‖ elasticity ‖ minBaseFee.
    expect(header(4).extraData).toMatch(/^0x00[0-9a-f]{16}$/);
    expect(header(5).extraData).toMatch(/^0x01[0-9a-f]{32}$/);
    expect(BigInt(`0x${header(8).extraData.slice(-16)}`)).toBe(5_000_000_000n);
    expect(header(9).baseFeePerGas).toBe(5_000_000_000n);
    expect(header(7).blobGasUsed!).toBeGreaterThan(header(7).gasUsed);
    expect(header(8).baseFeePerGas!).toBeGreaterThan(header(7).baseFeePerGas!);
    // EIP-2718 types: deposits, EIP-1559, EIP-7702, and a legacy transaction (an RLP list, 0xc0 and up).
    const types = fixtures.flatMap((fixture) => fixture.block.attributes.transactions.map((raw) => raw.slice(0, 4)));
    expect(types).toEqual(expect.arrayContaining(['0x7e', '0x02', '0x04']));
    expect(types.some((type) => Number(type) >= 0xc0)).toBe(true);
  });

  it.each(isthmus)('%s (Isthmus) reproduces op-geth’s block hash', reproduces);

  it.each(jovian)('%s (Jovian) reproduces op-geth’s block hash', reproduces);
});
