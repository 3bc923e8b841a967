import { keccak256, pad, stringToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import type { L1Epoch } from '../../src/derive/attributes.ts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';
import { rollupJson } from './genesis.ts';
import type { L1BlockRef } from './l1.ts';
import type { OpGethNode, OpPayloadAttributes } from './node.ts';
import { createSequencer } from './sequencer.ts';

/**
 * The sequencer's op-node rules over a fake L1 and a fake engine API: an L1 origin per block (the
 * next L1 block once the L2 timestamp reaches it, one step at most), op-geth's txpool after the
 * forced transactions, and past the sequencer drift a block that keeps its origin and takes no
 * user transactions.
 */
const hash = (label: string) => keccak256(stringToHex(label));
const l1Blocks: L1BlockRef[] = [100n, 112n, 113n, 124n].map((timestamp, i) => ({
  number: BigInt(i),
  hash: hash(`l1 ${i}`),
  parentHash: i ? hash(`l1 ${i - 1}`) : hash('l1 parent'),
  timestamp,
}));
const l1 = {
  block: async (number: bigint) => l1Blocks[Number(number)] ?? null,
  epoch: async (number: bigint): Promise<L1Epoch> => {
    const block = l1Blocks[Number(number)]!;
    return {
      header: {
        hash: block.hash,
        number: block.number,
        timestamp: block.timestamp,
        baseFeePerGas: 7n,
        mixHash: hash(`mix ${number}`),
        parentBeaconBlockRoot: hash(`beacon ${number}`),
        blobBaseFee: 1n,
      },
      receipts: [],
    };
  },
};
const systemConfig: SystemConfig = {
  batcher: '0x00000000000000000000000000000000000ba7c4',
  overhead: pad('0x00', { size: 32 }),
  scalar: pad('0x01', { dir: 'right', size: 32 }),
  gasLimit: 30_000_000n,
  eip1559Params: '0x000000fa00000006',
  operatorFeeParams: pad('0x00', { size: 32 }),
  minBaseFee: 0n,
  daFootprintGasScalar: 0,
};
const rollup = parseRollupConfig(
  rollupJson({
    l2ChainId: 901,
    l1ChainId: 900,
    blockTime: 2,
    jovian: false,
    genesis: { l1: l1Blocks[0]!, l2: { hash: hash('l2 genesis'), number: 0n }, l2Time: 100n },
    systemConfig,
    batchInbox: '0xff00000000000000000000000000000000000901',
    portal: '0x0000000000000000000000000000000000042001',
    l1SystemConfig: '0x0000000000000000000000000000000000000000',
    seqWindowSize: 3600,
    maxSequencerDrift: 10,
    channelTimeout: 300,
  }),
);
const poolTransaction: Hex = '0x02f86b';

/** An engine API that builds the forced transactions and, unless noTxPool, one pool transaction after them. */
function fakeNode(options: { drop?: boolean } = {}) {
  const built: OpPayloadAttributes[] = [];
  let pending: OpPayloadAttributes | undefined;
  const node = {
    url: 'http://fake',
    rpc: async () => {
      throw new Error('no JSON-RPC here');
    },
    log: () => '',
    close: async () => undefined,
    async engine(method: string, params: readonly unknown[]) {
      if (method === 'engine_forkchoiceUpdatedV3') {
        if (params[1] === null) return { payloadStatus: { status: 'VALID' } };
        pending = params[1] as OpPayloadAttributes;
        built.push(pending);
        return { payloadStatus: { status: 'VALID' }, payloadId: '0x01' };
      }
      if (method === 'engine_getPayloadV4') {
        const forced = options.drop ? pending!.transactions.slice(1) : pending!.transactions;
        const transactions = [...forced, ...(pending!.noTxPool ? [] : [poolTransaction])];
        return { executionPayload: { blockHash: hash(`l2 ${pending!.timestamp}`), transactions } };
      }
      if (method === 'engine_newPayloadV4') return { status: 'VALID' };
      throw new Error(`unexpected ${method}`);
    },
  } as unknown as OpGethNode;
  return { node, built };
}

const start = (node: OpGethNode) =>
  createSequencer({
    l1,
    l2: node,
    rules: {
      rollup,
      depositContract: '0x0000000000000000000000000000000000042001',
      systemConfig: '0x0000000000000000000000000000000000000000',
    },
    genesis: { hash: hash('l2 genesis'), timestamp: 100n, l1Origin: l1Blocks[0]! },
    systemConfig,
    maxSequencerDrift: 10n,
    poolFillMs: 0,
  });

describe('the op-geth devnet sequencer', () => {
  it("moves to the next L1 origin once the L2 timestamp reaches it, one step a block, and takes op-geth's pool transactions after the forced ones", async () => {
    const { node, built } = fakeNode();
    const sequencer = start(node);
    const origins: bigint[] = [];
    for (const timestamp of [102n, 112n, 114n, 116n]) {
      const block = await sequencer.build(timestamp, [], { pool: true });
      origins.push(block.l1Origin.number);
      expect(block.userTransactions).toEqual([poolTransaction]);
      expect(block.transactions.at(-1)).toBe(poolTransaction);
    }
    // L1 block 1 (time 112) at L2 time 112; block 2 (113) at 114; block 3 (124) not before 124.
    expect(origins).toEqual([0n, 1n, 2n, 2n]);
    expect(sequencer.blocks.map((block) => block.sequenceNumber)).toEqual([1n, 0n, 0n, 1n]);
    expect(built.every((attributes) => !attributes.noTxPool)).toBe(true);
    expect(sequencer.head()).toMatchObject({ number: 4n, timestamp: 116n });
  });

  it('past the sequencer drift with no newer L1 block, keeps the origin and builds without the pool; refuses user transactions there', async () => {
    const { node, built } = fakeNode();
    const sequencer = start(node);
    // Origin 0 (time 100), drift 10: L2 time 110 is within it, 111 is past it (L1 block 1 is at 112).
    const within = await sequencer.build(110n, [], { pool: true });
    expect(within.userTransactions).toEqual([poolTransaction]);
    const past = await sequencer.build(111n, [], { pool: true });
    expect(past.l1Origin.number).toBe(0n);
    expect(past.userTransactions).toEqual([]);
    expect(built.at(-1)!.noTxPool).toBe(true);
    await expect(sequencer.build(111n, [poolTransaction])).rejects.toThrow(/past the sequencer drift of L1 origin 0/);
  });

  it('stops when op-geth builds a block without one of its forced transactions', async () => {
    const { node } = fakeNode({ drop: true });
    await expect(start(node).build(102n, [], { pool: true })).rejects.toThrow(
      /op-geth built L2 block 1 with .* not the 1 of its attributes/,
    );
  });
});
