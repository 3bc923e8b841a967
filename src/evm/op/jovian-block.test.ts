import { createBlockHeader } from '@ethereumjs/block';
import { Common, Mainnet } from '@ethereumjs/common';
import { LibZip } from 'solady';
import { bytesToHex, concat, numberToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  chainId,
  config,
  jovianTime,
  l1InfoCalldata,
  l1InfoDeposit,
  parentHeader,
  preState,
  userTx,
} from '../../../test/helpers/synthetic-op-block.ts';
import { executeBlock, type PayloadAttributes } from './execute-block.ts';
import type { BlockHeader } from '../../op/header.ts';

/**
 * Jovian blocks built by executeBlock on a small chain made from nothing (its whole state trie is
 * the witness): the header carries version-1 extraData, the DA footprint in blobGasUsed and the
 * clamped base fee, and hashes as an independent header encoder (ethereumjs) hashes the same fields.
 * Blocks made by op-geth itself are re-executed to their hashes by the op-geth fixture tests.
 */
const eip1559Params = concat([numberToHex(250, { size: 4 }), numberToHex(6, { size: 4 })]);
const jovianExtraData = (minBaseFee: bigint) => concat(['0x01', eip1559Params, numberToHex(minBaseFee, { size: 8 })]);

/** What op-geth's EstimatedDASize × scalar gives, written out from the spec's formula. */
const footprintOf = (raw: Hex, scalar: bigint) => {
  const fastLz = BigInt((LibZip.flzCompress(raw).length - 2) / 2);
  const scaled = 836_500n * fastLz - 42_585_600n;
  return ((scaled < 100_000_000n ? 100_000_000n : scaled) / 1_000_000n) * scalar;
};

/** The block hash ethereumjs computes for the same header fields (Prague layout). */
function ethereumjsHash(header: BlockHeader): Hex {
  const common = new Common({ chain: { ...Mainnet, chainId }, hardfork: 'prague' });
  const { sha3Uncles, miner, transactionsRoot, receiptsRoot, ...rest } = header;
  return bytesToHex(
    createBlockHeader(
      { ...rest, uncleHash: sha3Uncles, coinbase: miner, transactionsTrie: transactionsRoot, receiptTrie: receiptsRoot },
      { common, skipConsensusFormatValidation: true },
    ).hash(),
  );
}

async function attributes(over: Partial<PayloadAttributes>): Promise<PayloadAttributes> {
  return {
    timestamp: BigInt(jovianTime) + 2n,
    prevRandao: numberToHex(7, { size: 32 }),
    feeRecipient: '0x4200000000000000000000000000000000000011',
    gasLimit: 30_000_000n,
    parentBeaconBlockRoot: numberToHex(9, { size: 32 }),
    eip1559Params,
    minBaseFee: 0n,
    transactions: [],
    ...over,
  };
}

describe('executing Jovian blocks', () => {
  it('builds a Jovian block: extraData v1, blobGasUsed = DA footprint, base fee metered on the parent DA footprint', async () => {
    const { stateRoot, witness } = await preState();
    // A Jovian parent whose DA footprint (20M) is above its gas used (1M) and its 5M target.
    const parent = parentHeader(stateRoot, { gasUsed: 1_000_000n, blobGasUsed: 20_000_000n, extraData: jovianExtraData(0n) });
    const transactions = [l1InfoDeposit(l1InfoCalldata(400)), await userTx(0), await userTx(1, `0x${'5a'.repeat(40)}${'c3'.repeat(500)}`)];
    const executed = await executeBlock({ config, parent, witness, attributes: await attributes({ transactions, minBaseFee: 1_234n }) });

    expect(executed.rules.fork).toBe('jovian');
    expect(executed.header.extraData).toBe(jovianExtraData(1_234n));
    expect(executed.header.blobGasUsed).toBe(footprintOf(transactions[1]!, 400n) + footprintOf(transactions[2]!, 400n));
    expect(executed.header.blobGasUsed).not.toBe(executed.header.gasUsed);
    // 1,000,000 + 1,000,000 · (20M − 5M) / 5M / 250
    expect(executed.header.baseFeePerGas).toBe(1_000_000n + (1_000_000n * 15_000_000n) / 5_000_000n / 250n);
    expect(executed.receipts.map((receipt) => receipt.status)).toEqual([1, 1, 1]);
    expect(executed.hash).toBe(ethereumjsHash(executed.header));
  });

  it("clamps the base fee up to the parent's minBaseFee", async () => {
    const { stateRoot, witness } = await preState();
    const parent = parentHeader(stateRoot, { gasUsed: 0n, blobGasUsed: 0n, extraData: jovianExtraData(2_000_000_000n) });
    const transactions = [l1InfoDeposit(l1InfoCalldata(400)), await userTx(0)];
    const executed = await executeBlock({ config, parent, witness, attributes: await attributes({ transactions }) });
    expect(executed.header.baseFeePerGas).toBe(2_000_000_000n);
    expect(executed.header.extraData).toBe(jovianExtraData(0n));
  });

  it('charges the Jovian operator fee: gas used · scalar · 100 + constant', async () => {
    const { stateRoot, witness } = await preState({ scalar: 7, constant: 1_000n });
    const parent = parentHeader(stateRoot, { blobGasUsed: 0n, extraData: jovianExtraData(0n) });
    const transactions = [l1InfoDeposit(l1InfoCalldata(400, { operatorFeeScalar: 7, operatorFeeConstant: 1_000n })), await userTx(0)];
    const executed = await executeBlock({ config, parent, witness, attributes: await attributes({ transactions }) });
    const user = executed.receipts[1]!;
    expect(user.operatorFee).toBe(user.gasUsed * 7n * 100n + 1_000n);
  });

  it("the activation block: Isthmus-form L1-info, deposits only, blobGasUsed 0, no clamp from the payload's minBaseFee", async () => {
    const { stateRoot, witness } = await preState();
    // The parent is an Isthmus block (version-0 extraData); its blobGasUsed is not metered.
    const parent = parentHeader(stateRoot, {
      timestamp: BigInt(jovianTime) - 2n,
      gasUsed: 5_000_000n,
      blobGasUsed: 29_000_000n,
      extraData: concat(['0x00', eip1559Params]),
    });
    const transactions = [l1InfoDeposit(l1InfoCalldata()), l1InfoDeposit('0x')];
    const executed = await executeBlock({
      config,
      parent,
      witness,
      attributes: await attributes({ timestamp: BigInt(jovianTime), transactions, minBaseFee: 5_000_000_000n }),
    });
    expect(executed.rules.activationBlock('jovian')).toBe(true);
    expect(executed.header.blobGasUsed).toBe(0n);
    expect(executed.header.baseFeePerGas).toBe(1_000_000n);
    expect(executed.header.extraData).toBe(jovianExtraData(5_000_000_000n));

    const withUserTx = await attributes({ timestamp: BigInt(jovianTime), transactions: [transactions[0]!, await userTx(0)] });
    await expect(executeBlock({ config, parent, witness, attributes: withUserTx })).rejects.toThrow(
      'the Jovian activation block (Isthmus-form L1-info deposit) must hold only deposits',
    );
  });

  it('refuses a block whose DA footprint exceeds its gas limit, and a Jovian payload without minBaseFee', async () => {
    const { stateRoot, witness } = await preState();
    const parent = parentHeader(stateRoot, { blobGasUsed: 0n, extraData: jovianExtraData(0n) });
    const transactions = [l1InfoDeposit(l1InfoCalldata(20_000)), await userTx(0)];
    const footprint = footprintOf(transactions[1]!, 20_000n);
    await expect(
      executeBlock({ config, parent, witness, attributes: await attributes({ transactions, gasLimit: footprint - 1n }) }),
    ).rejects.toThrow(
      expect.objectContaining({
        code: 'BLOCK_INVALID',
        message: expect.stringContaining(`DA footprint ${footprint} exceeds the block gas limit`),
      }),
    );
    await expect(
      executeBlock({ config, parent, witness, attributes: await attributes({ transactions, minBaseFee: undefined }) }),
    ).rejects.toThrow('payload.minBaseFee');
  });
});
