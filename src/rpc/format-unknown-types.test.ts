import { keccak256, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { apply, initialViewState, type PendingBlock } from '../view/state.ts';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';
import { createTransactionFormatter, formatPendingBlock, formatUnknownTransaction, type RpcObject } from './format.ts';

describe('transactions of a type flashlog does not know', () => {
  const signedTransfer = async (): Promise<Hex> => (await signedTransfers(1, 0))[0]!.raw;
  /** Typed envelopes of unknown types: a type byte and an RLP list nobody here can read. */
  const postExec: Hex = '0x7dc801820400c3c20105'; // Lagoon's 0x7D, read as unknown until its codec lands
  const everest: Hex = '0x79c9018203e8c4c3800102'; // Base Everest's 0x79 "Base Transactions": unknown here

  async function blockWith(raws: Hex[]): Promise<PendingBlock> {
    const records = blockBuilder(42n).flashblock(raws.map((raw) => ({ hash: keccak256(raw), raw })));
    const state = apply(initialViewState(), { type: 'record', record: { ...records[0]!, partition: 0, offset: 0n, timestamp: 0 } });
    return state.blocks[0]!;
  }

  it('0x79 passes through a flashblocks block: every field readable without the type, and the raw bytes; never a crash', async () => {
    const transfer = await signedTransfer();
    const block = await blockWith([transfer, everest]);
    const formatter = createTransactionFormatter();
    const tx = await formatter.transaction(block, 1);
    expect(tx).toEqual({
      type: '0x79',
      hash: keccak256(everest),
      blockHash: null,
      blockNumber: '0x2a',
      transactionIndex: '0x1',
      // The executor's receipt names sender and recipient; nothing is read from the payload.
      from: block.receipts[1]!.from,
      to: block.receipts[1]!.to,
      raw: everest,
    });
    const full = await formatPendingBlock(block, true, formatter);
    expect((full.transactions as RpcObject[]).map((t) => t.type)).toEqual(['0x2', '0x79']);
    expect(await formatPendingBlock(block, false, formatter)).toMatchObject({ transactions: [keccak256(transfer), keccak256(everest)] });
  });

  it("0x7D is known (Lagoon's post-exec transaction): served in its own shape, not as an unknown type", async () => {
    const block = await blockWith([postExec]);
    const tx = await createTransactionFormatter().transaction(block, 0);
    expect(tx).toMatchObject({
      hash: keccak256(postExec),
      transactionIndex: '0x0',
      type: '0x7d',
      gas: '0x0',
      value: '0x0',
      from: '0x0000000000000000000000000000000000000000',
      input: `0x${postExec.slice(4)}`,
    });
    expect(tx.raw).toBeUndefined();
  });

  it("a blocks source's node JSON is served as the node gave it, in the block's place", async () => {
    const nodeJson = { type: '0x79', hash: keccak256(everest), from: '0x00000000000000000000000000000000000000aa', calls: [{ to: null }] };
    const tx = formatUnknownTransaction({ hash: keccak256(everest), raw: everest }, 0x79, {
      blockHash: `0x${'ab'.repeat(32)}`,
      blockTimestamp: '0x10',
      blockNumber: 42n,
      position: 3,
      nodeJson,
    });
    expect(tx).toEqual({ ...nodeJson, blockHash: `0x${'ab'.repeat(32)}`, blockNumber: '0x2a', transactionIndex: '0x3' });
  });
});
