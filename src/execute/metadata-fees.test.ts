import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { keccak256, numberToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { startBlock, type AssembledBlock } from '../chain/assemble.ts';
import { parseRollupConfig, type RollupConfig } from '../op/rollup-config.ts';
import { flashblockSchema } from '../schemas/flashblock.ts';
import { sharedPath } from '../../test/helpers/shared.ts';
import { createMetadataExecutor } from './metadata.ts';

/**
 * The OP fee fields op-geth v1.101702.3 gives the receipts of real OP Sepolia (Holocene, Fjord's L1
 * fee) and OP Mainnet (Ecotone) blocks, and of op-geth's own Isthmus and Jovian blocks: written by
 * test/go/op-receipts from the block fixtures (test/fixtures/op-receipt-fees/SOURCE.md).
 */
interface Expected {
  fixture: string;
  /**
   * The generator's L1-info deposit in place of the block's: a Bedrock-form one read before Ecotone
   * or in Ecotone's activation block, or an Ecotone-form one with both fee scalars zero.
   */
  mode?: 'pre-ecotone' | 'ecotone-activation' | 'ecotone-zero-scalars';
  l1InfoDeposit?: Hex;
  ecotoneTime?: number;
  blockNumber: number;
  receipts: { index: number; transactionHash: Hex; fields: Record<string, string> }[] | null;
}
const expected = JSON.parse(
  readFileSync(new URL('../../test/fixtures/op-receipt-fees/receipt-fees.json', import.meta.url), 'utf8'),
) as Expected[];

interface BlockFixture {
  chainId: number;
  blockNumber: number;
  rollupConfig: unknown;
  parentHeader: { baseFeePerGas: Hex };
  payload: { timestamp: Hex; transactions: Hex[] };
}
const fixturePath = (name: string) =>
  name.startsWith('jovian-chain')
    ? new URL(`../../test/fixtures/jovian-chain/${name}`, import.meta.url)
    : sharedPath(`fixtures/op-blocks/${name}`);

/** A real flashblock made over: the fixture's block as one index-0 flashblock whose metadata holds a receipt per transaction. */
const template = (() => {
  const message = (
    JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/unichain-sepolia-35535698-with-receipts.json'), 'utf8')) as unknown[]
  ).map((m) => flashblockSchema.parse(m))[0]!;
  return startBlock(message);
})();
function assembled(fixture: BlockFixture): AssembledBlock {
  const transactions = fixture.payload.transactions.map((raw) => ({ hash: keccak256(raw), raw }));
  const metadataReceipts = Object.fromEntries(
    transactions.map((tx, i) => [
      tx.hash,
      {
        type: numberToHex(Number.parseInt(tx.raw.slice(2, 4), 16) < 0x7f ? Number.parseInt(tx.raw.slice(2, 4), 16) : 0),
        status: '0x1',
        cumulativeGasUsed: numberToHex(21_000 * (i + 1)),
        logs: [],
      },
    ]),
  ) as unknown as AssembledBlock['metadataReceipts'];
  return {
    ...template,
    blockNumber: BigInt(fixture.blockNumber),
    header: { ...template.header, number: numberToHex(fixture.blockNumber), timestamp: fixture.payload.timestamp },
    transactions,
    firstNew: 0,
    index: 0,
    metadataReceipts,
  };
}

/** The block as the generator read it in a mode: its deposit replaced; for the Bedrock form, Ecotone not yet or just active. */
function withMode(fixture: BlockFixture, block: Expected): BlockFixture {
  if (!block.mode) return fixture;
  const transactions = [block.l1InfoDeposit!, ...fixture.payload.transactions.slice(1)];
  if (block.mode === 'ecotone-zero-scalars') return { ...fixture, payload: { ...fixture.payload, transactions } };
  const config = { ...(fixture.rollupConfig as Record<string, unknown>) };
  for (const fork of ['ecotone', 'fjord', 'granite', 'holocene', 'isthmus', 'jovian']) delete config[`${fork}_time`];
  if (block.mode === 'ecotone-activation') config.ecotone_time = block.ecotoneTime;
  return { ...fixture, rollupConfig: config, payload: { ...fixture.payload, transactions } };
}

const feeKeys = /^(l1|operatorFee|daFootprint|blobGasUsed)/;
const feeFields = (receipt: Record<string, unknown>) => Object.fromEntries(Object.entries(receipt).filter(([key]) => feeKeys.test(key)));

describe("metadata executor: OP fee fields of receipts, against op-geth and the chains' explorers", () => {
  it('gives every non-deposit receipt the fields op-geth derives, and deposits none, in 23 blocks from Bedrock to Jovian', async () => {
    let compared = 0;
    const forms = new Set<string>();
    for (const block of expected) {
      const fixture = withMode(JSON.parse(readFileSync(fixturePath(block.fixture), 'utf8')) as BlockFixture, block);
      // The OP chains' rules come from the built-in configs (by the transactions' chain id); the
      // jovian chain (901) is not one of them, and the Bedrock-form variants change the fork times,
      // so those are given their own.
      const rollupConfig: RollupConfig | undefined =
        fixture.chainId === 901 || block.mode ? parseRollupConfig(fixture.rollupConfig) : undefined;
      const executor = createMetadataExecutor(rollupConfig ? { rollupConfig } : {});
      const { receipts } = await executor.execute(assembled(fixture));
      expect(receipts, block.fixture).toHaveLength(fixture.payload.transactions.length);
      const byIndex = new Map((block.receipts ?? []).map((r) => [r.index, r]));
      receipts.forEach((receipt, index) => {
        const want = byIndex.get(index);
        const where = `${basename(block.fixture)} tx ${index}`;
        if (!want) {
          expect(receipt.type, where).toBe('0x7e');
          expect(feeFields(receipt), where).toEqual({});
          return;
        }
        expect(receipt.transactionHash, where).toBe(want.transactionHash);
        expect(feeFields(receipt), where).toEqual(want.fields);
        forms.add(Object.keys(want.fields).sort().join(','));
        compared++;
      });
    }
    // Bedrock-form receipts (l1FeeScalar), Ecotone/Fjord ones, Isthmus ones with the operator fee,
    // Jovian ones with the DA footprint.
    expect(forms.size).toBe(4);
    expect(expected.filter((block) => block.mode).map((block) => block.mode)).toEqual([
      'pre-ecotone',
      'ecotone-activation',
      'ecotone-zero-scalars',
    ]);
    expect(compared).toBe(expected.reduce((sum, block) => sum + (block.receipts?.length ?? 0), 0));
    expect(compared).toBeGreaterThan(200);
  });

  it('gives the fields OP Mainnet and Base mainnet receipts show on their explorers (Fjord, Granite)', async () => {
    const { blocks } = JSON.parse(
      readFileSync(new URL('../../test/fixtures/op-receipt-fees/explorer-receipts.json', import.meta.url), 'utf8'),
    ) as {
      blocks: {
        name: string;
        chainId: number;
        blockNumber: number;
        timestamp: number;
        transactions: Hex[];
        transactionHashes: Hex[];
        receipt: { index: number } & Record<string, number>;
      }[];
    };
    expect(blocks).toHaveLength(2);
    for (const block of blocks) {
      expect(
        block.transactions.map((raw) => keccak256(raw)),
        block.name,
      ).toEqual(block.transactionHashes);
      const fixture: BlockFixture = {
        chainId: block.chainId,
        blockNumber: block.blockNumber,
        rollupConfig: undefined,
        parentHeader: { baseFeePerGas: '0x0' },
        payload: { timestamp: numberToHex(block.timestamp), transactions: block.transactions },
      };
      // No rollup config given: the built-in OP Mainnet and Base mainnet ones, by the transactions' chain id.
      const { receipts } = await createMetadataExecutor().execute(assembled(fixture));
      const { index, ...fields } = block.receipt;
      expect(feeFields(receipts[index]!), block.name).toEqual(
        Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, numberToHex(value)])),
      );
    }
  });

  it('keeps the schema order of the fields the log knows, so the fast record check holds', async () => {
    const block = expected.find((b) => b.fixture === 'op-sepolia-26207962.json')!;
    const fixture = JSON.parse(readFileSync(fixturePath(block.fixture), 'utf8')) as BlockFixture;
    const { receipts } = await createMetadataExecutor().execute(assembled(fixture));
    const keys = Object.keys(receipts[1]!);
    expect(keys.slice(keys.indexOf('type'))).toEqual([
      'type',
      'l1Fee',
      'l1GasPrice',
      'l1GasUsed',
      'l1BaseFeeScalar',
      'l1BlobBaseFee',
      'l1BlobBaseFeeScalar',
    ]);
  });

  it('refuses a block whose first transaction is not the L1-info deposit, naming it', async () => {
    const block = expected.find((b) => b.fixture === 'op-sepolia-26207960.json')!;
    const fixture = JSON.parse(readFileSync(fixturePath(block.fixture), 'utf8')) as BlockFixture;
    const withoutDeposit = { ...fixture, payload: { ...fixture.payload, transactions: fixture.payload.transactions.slice(1) } };
    await expect(createMetadataExecutor().execute(assembled(withoutDeposit))).rejects.toThrow(
      "block 26207960 index 0: the receipts' fee fields need the block's L1-info deposit: payload.transactions[0]: the L1-info deposit is missing",
    );
  });

  it("reads a chain it does not know (and is not told) at the forks its L1-info deposit's form names", async () => {
    // chain 901: Isthmus-form deposits in blocks 1–2 (Isthmus rules), Jovian-form ones from block 4.
    let compared = 0;
    for (const block of expected.filter((b) => b.fixture.startsWith('jovian-chain') && b.receipts)) {
      const fixture = JSON.parse(readFileSync(fixturePath(block.fixture), 'utf8')) as BlockFixture;
      const { receipts } = await createMetadataExecutor().execute(assembled(fixture));
      for (const want of block.receipts!) {
        expect(feeFields(receipts[want.index]!), `${block.fixture} tx ${want.index}`).toEqual(want.fields);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(30);
  });
});
