import { keccak256, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { blockRecords, blockRecordSchema, isBlockRecordValue } from '../records/blocks.ts';
import { createTransactionFormatter } from '../rpc/format.ts';
import { apply, initialViewState } from '../view/state.ts';
import { nodeBlockSchema, toAssembledBlock } from './node-block.ts';

const zero: Hex = `0x${'0'.repeat(64)}`;
const everest: Hex = '0x79c9018203e8c4c3800102'; // Base Everest's 0x79 "Base Transactions": a type flashlog does not know

/** A node's 200 ms block holding one 0x79 transaction, as the node answers it (its own fields for the type). */
const nodeBlock = () => {
  const hash = keccak256('0x01');
  const tx = {
    type: '0x79',
    hash: keccak256(everest),
    blockHash: hash,
    blockNumber: '0x64',
    transactionIndex: '0x0',
    from: '0x00000000000000000000000000000000000000aa',
    calls: [{ to: '0x00000000000000000000000000000000000000bb', value: '0x1', input: '0x' }],
    nonce: '0x1',
  };
  return nodeBlockSchema.parse({
    number: '0x64',
    hash,
    parentHash: zero,
    timestamp: '0x10',
    timestampMs: '0x3e80',
    miner: '0x4200000000000000000000000000000000000011',
    mixHash: zero,
    gasLimit: '0x1c9c380',
    gasUsed: '0x5208',
    extraData: '0x',
    baseFeePerGas: '0x1',
    receiptsRoot: zero,
    stateRoot: zero,
    logsBloom: `0x${'0'.repeat(512)}`,
    transactionsRoot: zero,
    size: '0x300',
    transactions: [tx],
  });
};

describe('a blocks source block holding a transaction of a type flashlog does not know', () => {
  it("keeps the node's JSON beside the bytes in the log, and the gateway serves the node's JSON", async () => {
    const block = nodeBlock();
    const asked: Hex[] = [];
    const assembled = await toAssembledBlock(block, async (hash) => {
      asked.push(hash);
      return everest;
    });
    // viem cannot serialize it from JSON: the bytes come from the node (eth_getRawTransactionByHash).
    expect(asked).toEqual([keccak256(everest)]);
    expect(assembled.transactions).toEqual([{ hash: keccak256(everest), raw: everest, rpc: block.transactions[0] }]);

    const [record] = blockRecords(assembled, { receipts: [], stateDiff: null }, 'node');
    const value = JSON.parse(record!.value) as unknown;
    expect(isBlockRecordValue(value)).toBe(true);
    expect(blockRecordSchema.parse(value).transactions[0]!.rpc).toEqual(block.transactions[0]);

    const state = apply(initialViewState(), { type: 'record', record: { ...record!, partition: 0, offset: 0n, timestamp: 0 } });
    const served = await createTransactionFormatter().transaction(state.blocks[0]!, 0);
    expect(served).toEqual(block.transactions[0]);
  });
});
