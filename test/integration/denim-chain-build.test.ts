import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { decodeEventLog, hexToBigInt, slice, type Hex } from 'viem';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import {
  buildDenimChain,
  config,
  DENIM_BLOCK,
  EIP1559,
  fixtureJson,
  GAS_LIMIT,
  reader,
  readerAbi,
  type DenimChainBlock,
} from '../helpers/denim-chain.ts';

/**
 * A Base-ladder chain built by flashlog's stateless engine across Denim's activation
 * (test/helpers/denim-chain.ts), each block re-executed from a witness of only the nodes building it
 * read, to the same hash. The committed fixtures (test/fixtures/denim-chain/) must be this chain;
 * `WRITE_DENIM_CHAIN_FIXTURES=1 npx vitest run test/integration/denim-chain-build.test.ts` rewrites them.
 */

// The engine's state after a block is the next block's full witness: keep the state manager it made.
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

const dir = fileURLToPath(new URL('../fixtures/denim-chain/', import.meta.url));
let blocks: DenimChainBlock[];

beforeAll(async () => {
  ({ blocks } = await buildDenimChain(() => states.at(-1) as MerkleStateManager));
}, 120_000);

const byNumber = (n: bigint) => blocks.find((block) => block.number === n)!;
const reads = (block: DenimChainBlock) =>
  block.receipts
    .flatMap((receipt) => receipt.logs)
    .filter((log) => log.address === reader.toLowerCase())
    .map((log) => decodeEventLog({ abi: readerAbi, eventName: 'Read', data: log.data as Hex, topics: log.topics as [Hex] }).args)
    .map((args) => (args as { timestampMs: bigint }).timestampMs);

describe('a Denim chain built by the engine', () => {
  it('crosses the activation: Cobalt blocks 2 s apart, then five Denim blocks in one second at +200 ms, then the next second', () => {
    expect(blocks.map((block) => block.number)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n]);
    const forks = blocks.map((block) => block.fork);
    expect(forks).toEqual(['cobalt', 'cobalt', 'cobalt', ...Array(7).fill('denim')]);
    const ms = blocks.map((block) => block.header.timestamp * 1000n + BigInt(block.millisPart ?? 0));
    for (let i = DENIM_BLOCK; i < 10n; i++) expect(ms[Number(i)]! - ms[Number(i) - 1]!).toBe(200n);
    const second = blocks.filter((block) => block.header.timestamp === byNumber(DENIM_BLOCK).header.timestamp);
    expect(second.map((block) => block.millisPart)).toEqual([0, 200, 400, 600, 800]);
  });

  it('the first Denim block: gas limit ÷ 10 and denominator × 10 in its header; tx[1] succeeds in every Denim block', () => {
    const first = byNumber(DENIM_BLOCK);
    expect(byNumber(DENIM_BLOCK - 1n).header.gasLimit).toBe(GAS_LIMIT);
    expect(first.header.gasLimit).toBe(GAS_LIMIT / 10n);
    expect(hexToBigInt(slice(first.header.extraData, 1, 5))).toBe(BigInt(EIP1559.denominator * 10));
    expect(hexToBigInt(slice(first.header.extraData, 5, 9))).toBe(BigInt(EIP1559.elasticity));
    for (const block of blocks.filter((b) => b.millisPart !== undefined)) expect(block.receipts[1]!.status).toBe(1);
  });

  it('a contract reads BaseTime.timestampMs() = 1000 × timestamp + the millisecond part; before Denim the read reverts', () => {
    expect(byNumber(3n).receipts[1]!.status).toBe(0);
    for (const n of [4n, 6n, 8n, 9n]) {
      const block = byNumber(n);
      expect(reads(block)).toEqual([block.header.timestamp * 1000n + BigInt(block.millisPart!)]);
    }
  });

  it('every block re-executes from only the nodes it touched to the same hash, and not without one of them', async () => {
    for (const block of blocks) {
      expect(block.witness.size).toBeLessThan(block.fullStateSize);
      const again = await executeBlock({ config: config, parent: block.parent, attributes: block.attributes, witness: block.witness });
      expect(again.hash).toBe(block.hash);
      const [key] = [...block.witness.keys()].sort();
      const short = new Map(block.witness);
      short.delete(key!);
      await expect(
        executeBlock({ config: config, parent: block.parent, attributes: block.attributes, witness: short }),
      ).rejects.toMatchObject({ code: 'WITNESS_INCOMPLETE' });
    }
  }, 120_000);

  it('the activation block needs every node of its witness: without any one of them it is refused', async () => {
    const block = byNumber(DENIM_BLOCK);
    for (const key of block.witness.keys()) {
      const short = new Map(block.witness);
      short.delete(key);
      await expect(executeBlock({ config, parent: block.parent, attributes: block.attributes, witness: short })).rejects.toMatchObject({
        code: 'WITNESS_INCOMPLETE',
        message: expect.stringContaining(key),
      });
    }
  }, 60_000);

  it('test/fixtures/denim-chain holds this chain', () => {
    const write = process.env.WRITE_DENIM_CHAIN_FIXTURES === '1';
    if (write) mkdirSync(dir, { recursive: true });
    for (const block of blocks) {
      const file = join(dir, `denim-chain-${block.number}.json`);
      const json = `${JSON.stringify(fixtureJson(block), null, 2)}\n`;
      if (write) writeFileSync(file, json);
      expect(readFileSync(file, 'utf8')).toBe(json);
    }
  });
});
