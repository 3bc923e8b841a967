import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { keccak256 } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { outputRootV0 } from '../../src/prover/output-root.ts';
import { BASE_TIME_IMPLEMENTATION_CODE_HASH } from '../../src/op/basetime.ts';
import { encodeReceipt } from '../../src/evm/op/receipts.ts';
import { buildBaseDenimChain, config, fixtureJson, inputs, vectors, type BaseDenimBlock } from '../helpers/base-denim-native-chain.ts';

/**
 * Base's own Denim vectors (base/base `denim_native.rs`, test/fixtures/base-denim-native/SOURCE.md)
 * reproduced by flashlog's engine: the chain rebuilt from its inputs (chain.json) must give every
 * frozen value (block hash, state root, output root, BaseTime deposit and receipt bytes), and
 * `flashlog execute-block` re-executes each block from a witness of only the nodes it touches to
 * Base's block hash.
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

const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
let blocks: BaseDenimBlock[];
let dir: string;

beforeAll(async () => {
  ({ blocks } = await buildBaseDenimChain(() => states.at(-1) as MerkleStateManager));
  dir = mkdtempSync(join(tmpdir(), 'flashlog-base-denim-'));
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const frozen = vectors.blocks.map((block) => ({ ...block, name: `block ${block.number}` }));
const built = (n: number) => blocks.find((block) => block.number === BigInt(n))!;

describe("Base's denim_native.rs chain, rebuilt by flashlog's engine", () => {
  it('the inputs carry the code Base pins: the BaseTime implementation hashes to its code hash, the proxy to its own', () => {
    expect(keccak256(config.base_time_implementation_code as `0x${string}`)).toBe(BASE_TIME_IMPLEMENTATION_CODE_HASH);
    const proxy = inputs.l2GenesisAlloc['0x4200000000000000000000000000000000000030']!.code as `0x${string}`;
    // base/base `BaseTime::PROXY_CODE_HASH` (crates/common/evm/src/base_time.rs).
    expect(keccak256(proxy)).toBe('0xfa8c9db6c6cab7108dea276f4cd09d575674eb0852c0fa3187e59e98ef977998');
  });

  it('builds blocks 2-7, all Denim blocks, with the BaseTime deposit as tx[1]', () => {
    expect(blocks.map((block) => Number(block.number))).toEqual(vectors.blocks.map((block) => block.number));
    expect(blocks.map((block) => block.fork)).toEqual(Array(6).fill('denim'));
    for (const block of frozen) expect(built(block.number).attributes.transactions[1]).toBe(block.baseTimeTransaction);
  });

  it("the L1-info deposit is Bedrock's (no OP fork in the config) and fails under Denim's EVM, using its 150M gas", () => {
    for (const block of frozen) {
      const [l1Info, baseTime] = built(block.number).receipts;
      expect(l1Info).toMatchObject({ type: 0x7e, status: 0, gasUsed: 150_000_000n, cumulativeGasUsed: 150_000_000n });
      expect([l1Info!.depositNonce, baseTime!.depositNonce, baseTime!.depositReceiptVersion]).toEqual([undefined, undefined, undefined]);
      // The block's gasUsed is over its 30M limit: deposits are held to it only from Regolith on.
      expect(built(block.number).header.gasUsed).toBe(baseTime!.cumulativeGasUsed);
      expect(built(block.number).header.gasUsed).toBeGreaterThan(built(block.number).header.gasLimit);
    }
  });

  it.each(frozen)('$name: the state root is the frozen one', (block) => {
    expect(built(block.number).header.stateRoot).toBe(block.stateRoot);
  });

  it.each(frozen)('$name: the block hash is the frozen one', (block) => {
    expect(built(block.number).hash).toBe(block.blockHash);
  });

  it.each(frozen)('$name: the output root (state root, message-passer storage root, hash) is the frozen one', (block) => {
    const mine = built(block.number);
    expect(mine.messagePasserStorageRoot).toBe(vectors.chain.messagePasserStorageRoot);
    expect(outputRootV0(mine.header.stateRoot, mine.messagePasserStorageRoot, mine.hash)).toBe(block.outputRoot);
  });

  it.each(frozen)('$name: the BaseTime receipt is byte for byte the frozen one', (block) => {
    const receipt = built(block.number).receipts[1]!;
    expect(receipt.status).toBe(1);
    expect(encodeReceipt(receipt)).toBe(block.baseTimeReceipt);
  });

  it.each(frozen)(
    '$name: flashlog execute-block re-executes it from its own witness to the frozen hash',
    (block) => {
      const file = join(dir, `base-denim-native-${block.number}.json`);
      writeFileSync(file, JSON.stringify(fixtureJson(built(block.number), block.blockHash)));
      const out = spawnSync(process.execPath, [bin, 'execute-block', file, '--json'], { encoding: 'utf8' });
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      expect(JSON.parse(out.stdout)).toMatchObject({ matches: true, hash: block.blockHash, fork: 'denim', transactions: 2 });
    },
    30_000,
  );
});
