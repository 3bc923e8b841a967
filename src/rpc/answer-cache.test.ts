import { describe, expect, it } from 'vitest';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';
import { handleText, rawText } from '../jsonrpc/protocol.ts';
import { apply, initialViewState, type PendingBlock, type ViewState } from '../view/state.ts';
import { pendingBlockAnswer, pendingLogsAnswer } from './answer-cache.ts';
import { createTransactionFormatter, formatPendingBlock } from './format.ts';

/**
 * The pending answers kept serialized per view version: the same held block object answers the
 * same bytes without formatting again; the next flashblock (a new block object) is formatted anew;
 * the bytes are what formatting gives, and the protocol writes them inside the envelope as they are.
 */
describe('answer cache', () => {
  async function twoSteps(): Promise<[PendingBlock, PendingBlock]> {
    const txs = await signedTransfers(2);
    const builder = blockBuilder(7n);
    let state: ViewState = initialViewState();
    const steps: PendingBlock[] = [];
    for (const tx of txs) {
      for (const record of builder.flashblock([tx]))
        state = apply(state, { type: 'record', record: { ...record, partition: 0, offset: 0n, timestamp: 0 } });
      steps.push(state.blocks.at(-1)!);
    }
    return [steps[0]!, steps[1]!];
  }

  it('one block object: formatted once, the same bytes as formatting; a new step: formatted again', async () => {
    const [first, second] = await twoSteps();
    expect(second).not.toBe(first);
    const formatter = createTransactionFormatter();
    const answer = await pendingBlockAnswer(first, false, formatter);
    expect(await pendingBlockAnswer(first, false, formatter)).toBe(answer);
    expect(JSON.parse(rawText(answer)!)).toEqual(JSON.parse(JSON.stringify(await formatPendingBlock(first, false, formatter))));
    const full = await pendingBlockAnswer(first, true, formatter);
    expect(full).not.toBe(answer);
    expect((JSON.parse(rawText(full)!) as { transactions: { hash: string }[] }).transactions[0]!.hash).toBe(first.transactions[0]!.hash);
    const next = JSON.parse(rawText(await pendingBlockAnswer(second, false, formatter))!) as { transactions: string[] };
    expect(next.transactions).toHaveLength(second.transactions.length);
    expect(next.transactions.length).toBeGreaterThan(first.transactions.length);
    // Another formatter (another gateway in the process) gets its own entry.
    expect(await pendingBlockAnswer(first, false, createTransactionFormatter())).not.toBe(answer);
  });

  it('logs: computed once per block object and filter text', async () => {
    const [first, second] = await twoSteps();
    let computed = 0;
    const logs = () => {
      computed += 1;
      return [{ logIndex: `0x${computed}` }];
    };
    const a = pendingLogsAnswer(first, '{"fromBlock":"pending"}', logs);
    expect(pendingLogsAnswer(first, '{"fromBlock":"pending"}', logs)).toBe(a);
    expect(computed).toBe(1);
    pendingLogsAnswer(first, '{"address":"0x01"}', logs);
    pendingLogsAnswer(second, '{"fromBlock":"pending"}', logs);
    expect(computed).toBe(3);
    expect(rawText(a)).toBe('[{"logIndex":"0x1"}]');
  });

  it('the protocol writes a raw result verbatim with the id, alone and in a batch; JSON.stringify still reads it', async () => {
    const [first] = await twoSteps();
    const answer = await pendingBlockAnswer(first, false, createTransactionFormatter());
    const single = await handleText('{"jsonrpc":"2.0","id":"x","method":"m"}', async () => answer, { maxBatch: 4 });
    expect(single).toBe(`{"jsonrpc":"2.0","id":"x","result":${rawText(answer)}}`);
    const batch = JSON.parse(
      (await handleText('[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","id":2,"method":"m"}]', async () => answer, {
        maxBatch: 4,
      }))!,
    ) as { id: number; result: unknown }[];
    expect(batch.map((response) => response.id)).toEqual([1, 2]);
    expect(batch[1]!.result).toEqual(JSON.parse(rawText(answer)!));
    expect(JSON.parse(JSON.stringify({ result: answer })).result).toEqual(JSON.parse(rawText(answer)!));
  });
});
