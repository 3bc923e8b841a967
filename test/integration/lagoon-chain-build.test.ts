import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { buildLagoonChain, config, fixtureJson, LAGOON_BLOCK, type LagoonChainBlock } from '../helpers/lagoon-chain.ts';

/**
 * An OP-ladder chain built by flashlog's stateless engine across Lagoon's activation
 * (test/helpers/lagoon-chain.ts), each block re-executed from a witness of only the nodes building it
 * read, to the same hash. The committed fixtures (test/fixtures/lagoon-chain/) must be this chain;
 * `WRITE_LAGOON_CHAIN_FIXTURES=1 npx vitest run test/integration/lagoon-chain-build.test.ts` rewrites them.
 */
const states = vi.hoisted(() => [] as unknown[]);
vi.mock('../../src/evm/op/witness-state.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/evm/op/witness-state.ts')>();
  return {
    ...original,
    createWitnessState: (...args: Parameters<typeof original.createWitnessState>) => {
      const state = original.createWitnessState(...args);
      states.push(state);
      return state;
    },
  };
});

const dir = fileURLToPath(new URL('../fixtures/lagoon-chain/', import.meta.url));
let blocks: LagoonChainBlock[];

beforeAll(async () => {
  ({ blocks } = await buildLagoonChain(() => states.at(-1) as MerkleStateManager));
}, 120_000);

describe('a Lagoon chain built by the engine', () => {
  it('crosses the activation: Karst blocks 1-2, Lagoon from block 3; blocks 4-6 end with a post-exec transaction', () => {
    expect(blocks.map((block) => block.fork)).toEqual(['karst', 'karst', 'lagoon', 'lagoon', 'lagoon', 'lagoon']);
    expect(blocks.find((block) => block.number === LAGOON_BLOCK)!.receipts.at(-1)!.type).not.toBe(0x7d);
    for (const block of blocks.filter((b) => b.refunds.length)) {
      const receipts = block.receipts;
      expect(receipts.at(-1)).toMatchObject({ type: 0x7d, status: 1, gasUsed: 0n, logs: [] });
      expect(receipts.at(-1)!.cumulativeGasUsed).toBe(receipts.at(-2)!.cumulativeGasUsed);
      expect(block.header.gasUsed).toBe(receipts.at(-1)!.cumulativeGasUsed);
      for (const [index, refund] of block.refunds) expect(receipts[index]!.opGasRefund).toBe(refund);
    }
    // Block 5 refunds a transfer's whole 21,000 gas: its receipt reports 0.
    expect(blocks[4]!.receipts[1]!.gasUsed).toBe(0n);
    expect(blocks.every((block) => block.receipts.every((receipt) => receipt.status === 1))).toBe(true);
  });

  it('every block re-executes from only the nodes it touched to the same hash, and not without one of them', async () => {
    for (const block of blocks) {
      expect(block.witness.size).toBeLessThan(block.fullStateSize);
      const again = await executeBlock({ config, parent: block.parent, attributes: block.attributes, witness: block.witness });
      expect(again.hash).toBe(block.hash);
      const [key] = [...block.witness.keys()].sort();
      const short = new Map(block.witness);
      short.delete(key!);
      await expect(executeBlock({ config, parent: block.parent, attributes: block.attributes, witness: short })).rejects.toMatchObject({
        code: 'WITNESS_INCOMPLETE',
      });
    }
  }, 120_000);

  it('test/fixtures/lagoon-chain holds this chain', () => {
    const write = process.env.WRITE_LAGOON_CHAIN_FIXTURES === '1';
    if (write) mkdirSync(dir, { recursive: true });
    for (const block of blocks) {
      const file = join(dir, `lagoon-chain-${block.number}.json`);
      const json = `${JSON.stringify(fixtureJson(block), null, 2)}\n`;
      if (write) writeFileSync(file, json);
      expect(readFileSync(file, 'utf8')).toBe(json);
    }
  });
});
