import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareHeaders } from '../../src/stateless/compare.ts';
import { executeBlock } from '../../src/stateless/execute-block.ts';
import { parseBlockFixture } from '../../src/stateless/fixture.ts';
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

  it.each(isthmus)('%s (Isthmus) reproduces op-geth’s block hash', reproduces);

  it.each(jovian)('%s (Jovian) reproduces op-geth’s block hash', reproduces);
});
