import { readFileSync } from 'node:fs';
import { keccak256, numberToHex, parseTransaction, type Hex, type TransactionSerialized } from 'viem';
import { describe, expect, it } from 'vitest';
import { extendBlock, startBlock, type AssembledBlock } from '../chain/assemble.ts';
import { flashblockSchema } from '../schemas/flashblock.ts';
import { rpcReceiptSchema } from '../records/blocks.ts';
import { sharedPath } from '../../test/helpers/shared.ts';
import { createMetadataExecutor } from './metadata.ts';

/** The real Unichain Sepolia sequence with era A metadata (5 flashblocks, 6 transactions). */
const messages = () =>
  (JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/unichain-sepolia-35535698-with-receipts.json'), 'utf8')) as unknown[]).map(
    (m) => flashblockSchema.parse(m),
  );
function assembled(): AssembledBlock[] {
  const all = messages();
  const blocks = [startBlock(all[0]!)];
  for (const message of all.slice(1)) blocks.push(extendBlock(blocks.at(-1)!, message));
  return blocks;
}

describe('metadata executor on real era A flashblocks', () => {
  it('completes receipts whose gas adds up to gas_used and whose blooms OR to the logs_bloom of every flashblock', async () => {
    const executor = createMetadataExecutor();
    const receipts = [];
    for (const block of assembled()) {
      const output = await executor.execute(block);
      expect(output.receipts.map((r) => r.transactionHash)).toEqual(block.transactions.slice(block.firstNew).map((tx) => tx.hash));
      receipts.push(...output.receipts);
      // Balances from new_account_balances (every account touched in the block so far), and each
      // sender's nonce after its last transaction so far (a deposit's from its receipt's depositNonce).
      const balances = messages()[block.index]!.metadata.new_account_balances!;
      const nonces = new Map<string, string>();
      receipts.forEach((receipt, i) => {
        const raw = block.transactions[i]!.raw;
        const nonce = raw.startsWith('0x7e')
          ? BigInt(receipt.depositNonce!)
          : BigInt(parseTransaction(raw as TransactionSerialized).nonce!);
        nonces.set(receipt.from, numberToHex(nonce + 1n));
      });
      expect(nonces.size).toBeGreaterThan(0);
      const expected: Record<string, { balance?: string; nonce?: string }> = {};
      for (const [address, balance] of Object.entries(balances)) expected[address] = { balance };
      for (const [address, nonce] of nonces) expected[address] = { ...expected[address], nonce };
      expect(output.stateDiff).toEqual(expected);
      // Running fields of the feed: cumulative gas and the block bloom so far.
      expect(receipts.reduce((sum, r) => sum + BigInt(r.gasUsed), 0n)).toBe(BigInt(block.header.gasUsed));
      const bloom = receipts.reduce((acc, r) => acc | BigInt(r.logsBloom), 0n);
      expect(bloom).toBe(BigInt(block.header.logsBloom));
    }
    expect(receipts).toHaveLength(6);
    receipts.forEach((receipt, i) => {
      rpcReceiptSchema.parse(receipt);
      expect(BigInt(receipt.transactionIndex)).toBe(BigInt(i));
      expect(receipt.from).toMatch(/^0x[0-9a-f]{40}$/);
    });
    const logIndexes = receipts.flatMap((r) => r.logs.map((log) => Number(BigInt(log.logIndex))));
    expect(logIndexes).toEqual(logIndexes.map((_, i) => i));
    expect(receipts[0]!.type).toBe('0x7e');
    expect(receipts[0]!.from).toBe('0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001');
  });

  it('refuses a block joined after index 0, and an era C flashblock, with the reason', async () => {
    const blocks = assembled();
    await expect(createMetadataExecutor().execute(blocks[2]!)).rejects.toThrow(/from index 0/);
    const eraC = { ...blocks[0]!, metadataReceipts: null };
    await expect(createMetadataExecutor().execute(eraC)).rejects.toThrow(/metadata.receipts is absent/);
  });
});

describe('metadata executor and a transaction of a type flashlog does not know', () => {
  // Base Everest's 0x79 (unknown here), and Lagoon's 0x7d streamed among the transactions instead of
  // in diff.post_exec_tx (known, but with no receipt of its own to summarize).
  it.each([
    ['0x79c9018203e8c4c3800102', 'an unknown 0x79'],
    ['0x7dc801820400c3c20105', 'a post-exec 0x7d among the transactions'],
  ] as const)('keeps the block going: receipts stop at %s (%s), a prefix, never a failed flashblock', async (raw: Hex, _what: string) => {
    const everest = raw;
    const blocks = assembled();
    const at = blocks.findIndex((block) => block.index > 0 && block.transactions.length > block.firstNew);
    const original = blocks[at]!;
    const replaced = original.transactions[original.firstNew]!;
    const hash = keccak256(everest);
    const withUnknown: AssembledBlock = {
      ...original,
      transactions: original.transactions.map((tx) => (tx === replaced ? { hash, raw: everest } : tx)),
      metadataReceipts: { ...original.metadataReceipts, [hash]: original.metadataReceipts![replaced.hash]! },
    };
    const executor = createMetadataExecutor();
    const outputs = [];
    for (const block of blocks.map((b, i) => (i === at ? withUnknown : b))) outputs.push(await executor.execute(block));
    // Before it: every receipt; from it on in this block: none (receipts cover a prefix of the transactions).
    for (const [i, output] of outputs.entries()) {
      const expected = i < at ? blocks[i]!.transactions.length - blocks[i]!.firstNew : 0;
      expect(output.receipts, `flashblock ${i}`).toHaveLength(expected);
    }
    // The next block starts over at index 0 with receipts again.
    expect((await executor.execute(blocks[0]!)).receipts.length).toBeGreaterThan(0);
  });
});

describe('receipts from other producers through the auto executor (as ingest runs it)', () => {
  it('op-rbuilder frames (receipts keyed in hash order): metadata receipts in block order, gas adding up to gas_used', async () => {
    const { opRbuilderMessages } = await import('../../test/helpers/feed-formats.ts');
    const { createExecutor } = await import('./create.ts');
    const { createLogger } = await import('../obs/logger.ts');
    const { createMetricsRegistry } = await import('../obs/metrics.ts');
    const frames = opRbuilderMessages() as { metadata: { receipts: Record<string, unknown> } }[];
    // A BTreeMap orders receipts by hash, not by position; here index 0's two happen to sort in block
    // order, so reverse them: the executor must look receipts up by transaction hash.
    frames[0]!.metadata.receipts = Object.fromEntries(Object.entries(frames[0]!.metadata.receipts).reverse());
    const messages = frames.map((m) => flashblockSchema.parse(m));
    expect(Object.keys(messages[0]!.metadata.receipts!)).toEqual(
      messages[0]!.diff.transactions.map((raw) => keccak256(raw as `0x${string}`)).reverse(),
    );
    const executor = await createExecutor('auto', {
      rpcUrl: undefined,
      timeoutMs: 1000,
      logger: createLogger({ level: 'silent', name: 'test' }),
      metrics: createMetricsRegistry({ defaults: false }),
    });
    let block = startBlock(messages[0]!);
    const receipts = [];
    for (const [position, message] of messages.entries()) {
      if (position > 0) block = extendBlock(block, message);
      const output = await executor.execute(block);
      expect(executor.kind).toBe('metadata');
      expect(output.receipts.map((r) => r.transactionHash)).toEqual(block.transactions.slice(block.firstNew).map((tx) => tx.hash));
      receipts.push(...output.receipts);
      expect(receipts.reduce((sum, r) => sum + BigInt(r.gasUsed), 0n)).toBe(BigInt(block.header.gasUsed));
    }
    expect(receipts.map((r) => r.type)).toEqual(['0x7e', '0x2', '0x2', '0x2', '0x2', '0x2']);
    expect(receipts.flatMap((r) => r.logs).length).toBe(4);
    await executor.close();
  });

  it('OP-specs frames carry no receipts: auto without --rpc says so instead of guessing', async () => {
    const { opSpecsMessages } = await import('../../test/helpers/feed-formats.ts');
    const { createExecutor } = await import('./create.ts');
    const { createLogger } = await import('../obs/logger.ts');
    const { createMetricsRegistry } = await import('../obs/metrics.ts');
    const first = flashblockSchema.parse((await opSpecsMessages())[0]);
    const executor = await createExecutor('auto', {
      rpcUrl: undefined,
      timeoutMs: 1000,
      logger: createLogger({ level: 'silent', name: 'test' }),
      metrics: createMetricsRegistry({ defaults: false }),
    });
    await expect(executor.execute(startBlock(first))).rejects.toThrow(
      /no receipts in the feed \(era C, or the OP-specs format\) and no --rpc/,
    );
    await expect(createMetadataExecutor().execute(startBlock(first))).rejects.toThrow(/OP-specs format, whose metadata has no logs/);
  });
});

describe("the metadata receipts are checked against the feed's own receipts_root and gas_used", () => {
  it('the real Unichain receipts give the real receipts_root at every index (deposit and EIP-1559 encodings, OP trie)', async () => {
    const { createMetricsRegistry } = await import('../obs/metrics.ts');
    const metrics = createMetricsRegistry({ defaults: false });
    const executor = createMetadataExecutor({ metrics });
    for (const block of assembled()) await executor.execute(block);
    const checks = await metrics.getSingleMetric('flashlog_executor_checks_total')!.get();
    expect(checks.values.map((sample) => [sample.labels.result, sample.value])).toEqual([['match', 5]]);
  });

  it('a tampered receipt is counted as a mismatch by field and logged once; its receipts are still published', async () => {
    const { createMetricsRegistry } = await import('../obs/metrics.ts');
    const metrics = createMetricsRegistry({ defaults: false });
    const warnings: unknown[] = [];
    const logger = { warn: (fields: unknown) => warnings.push(fields) } as unknown as import('../obs/logger.ts').Logger;
    const executor = createMetadataExecutor({ metrics, logger });
    const blocks = assembled();
    await executor.execute(blocks[0]!);
    // Index 1's one receipt with its log's data changed: gas still adds up, the root does not.
    const [hash, receipt] = Object.entries(blocks[1]!.metadataReceipts!)[0]!;
    const tampered = {
      ...blocks[1]!,
      metadataReceipts: { [hash]: { ...receipt, logs: receipt.logs.map((log) => ({ ...log, data: `0x${'ff'.repeat(32)}` })) } },
    };
    const output = await executor.execute(tampered);
    expect(output.receipts).toHaveLength(1);
    const mismatches = await metrics.getSingleMetric('flashlog_executor_mismatches_total')!.get();
    expect(mismatches.values.map((sample) => [sample.labels.field, sample.value])).toEqual([['receipts_root', 1]]);
    expect(warnings).toEqual([
      expect.objectContaining({
        fields: ['receipts_root'],
        index: 1,
        expected: expect.objectContaining({ receiptsRoot: blocks[1]!.header.receiptsRoot }),
      }),
    ]);
  });
});
