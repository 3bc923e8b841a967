import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAccount, createAddressFromString } from '@ethereumjs/util';
import { concat, numberToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  config as jovianConfig,
  jovianTime,
  l1InfoCalldata,
  l1InfoDeposit,
  parentHeader,
  preState,
  sender,
  userTx,
} from '../../../test/helpers/synthetic-op-block.ts';
import { executeBlock, type PayloadAttributes } from './execute-block.ts';
import { feeVaults } from '../../op/l1-cost.ts';
import { encodePostExecTx } from '../../op/post-exec.ts';
import { parseRollupConfig } from '../../op/rollup-config.ts';
import { settleRefund } from './transactions.ts';

/**
 * Lagoon blocks built by executeBlock on the synthetic chain (test/helpers/synthetic-op-block.ts)
 * with Karst and Lagoon from the Jovian time on: Sequencer-Defined Metering refunds lower the
 * receipts' and the block's gas (specs lagoon/sdm.md § Canonical Gas), the post-exec transaction
 * gets the receipt post-exec.md § Receipt gives it, and the block rules refuse what they forbid.
 * No Lagoon client runs here: the expected values are the spec's formulas, written out.
 */
const config = parseRollupConfig({ ...jovianConfig, karst_time: jovianTime, lagoon_time: jovianTime + 2 });
const eip1559Params = concat([numberToHex(250, { size: 4 }), numberToHex(6, { size: 4 })]);
const extraData = concat(['0x01', eip1559Params, numberToHex(0n, { size: 8 })]);
const feeRecipient = '0x4200000000000000000000000000000000000011';

const attributes = (transactions: Hex[], timestamp = BigInt(jovianTime) + 4n): PayloadAttributes => ({
  timestamp,
  prevRandao: numberToHex(7, { size: 32 }),
  feeRecipient,
  gasLimit: 30_000_000n,
  parentBeaconBlockRoot: numberToHex(9, { size: 32 }),
  eip1559Params,
  minBaseFee: 0n,
  transactions,
});
const postExec = (blockNumber: bigint, entries: [number, bigint][]) =>
  encodePostExecTx({ version: 1, blockNumber, gasRefundEntries: entries.map(([index, gasRefund]) => ({ index, gasRefund })) }).raw;

async function lagoonBlock(withRefunds: (number: bigint) => Hex[]) {
  const { stateRoot, witness } = await preState({ scalar: 7, constant: 1_000n });
  const parent = parentHeader(stateRoot, { timestamp: BigInt(jovianTime) + 2n, blobGasUsed: 0n, extraData });
  const deposit = l1InfoDeposit(l1InfoCalldata(400, { operatorFeeScalar: 7, operatorFeeConstant: 1_000n }));
  const users = [await userTx(0), await userTx(1, `0x${'11'.repeat(64)}`)];
  const number = parent.number + 1n;
  return { parent, witness, number, transactions: [deposit, ...users, ...withRefunds(number)] };
}

describe('executing Lagoon blocks (post-exec transaction, SDM refunds)', () => {
  it('a refund lowers its receipt, the cumulative gas after it and the block gas; the 0x7d receipt inherits the cumulative gas', async () => {
    const plain = await lagoonBlock(() => []);
    const before = await executeBlock({ config, parent: plain.parent, witness: plain.witness, attributes: attributes(plain.transactions) });
    expect(before.rules.fork).toBe('lagoon');
    const evmGas = before.receipts.map((receipt) => receipt.gasUsed);

    const refunded = await lagoonBlock((number) => [postExec(number, [[2, 5_000n]])]);
    const after = await executeBlock({
      config,
      parent: refunded.parent,
      witness: refunded.witness,
      attributes: attributes(refunded.transactions),
    });
    expect(after.receipts.map((receipt) => receipt.type)).toEqual([0x7e, 0x02, 0x02, 0x7d]);
    expect(after.receipts.map((receipt) => receipt.gasUsed)).toEqual([evmGas[0], evmGas[1], evmGas[2]! - 5_000n, 0n]);
    expect(after.receipts[2]!.opGasRefund).toBe(5_000n);
    expect(after.receipts[1]!.opGasRefund).toBeUndefined();
    const cumulative = evmGas[0]! + evmGas[1]! + evmGas[2]! - 5_000n;
    expect(after.receipts.map((receipt) => receipt.cumulativeGasUsed).slice(2)).toEqual([cumulative, cumulative]);
    expect(after.receipts[3]).toMatchObject({ status: 1, logs: [], logsBloom: `0x${'00'.repeat(256)}` });
    expect(after.header.gasUsed).toBe(before.header.gasUsed - 5_000n);
    // Jovian operator fee: gas · 7 · 100 + 1,000, charged on the canonical gas.
    expect(after.receipts[2]!.operatorFee).toBe((evmGas[2]! - 5_000n) * 700n + 1_000n);
    // The 0x7d transaction has no DA footprint (post-exec.md § DA Footprint): blobGasUsed is the user transactions' alone.
    expect(after.header.blobGasUsed).toBe(before.header.blobGasUsed);
    expect(after.header.transactionsRoot).not.toBe(before.header.transactionsRoot);
    expect(after.header.stateRoot).not.toBe(before.header.stateRoot);
  });

  it('refuses, by rule and transaction: a refund above the EVM gas, a 0x7d before Lagoon, one not last, one anchored elsewhere, one naming a deposit', async () => {
    const run = async (build: (number: bigint) => Hex[], timestamp?: bigint) => {
      const block = await lagoonBlock(build);
      return executeBlock({ config, parent: block.parent, witness: block.witness, attributes: attributes(block.transactions, timestamp) });
    };
    const invalid = (message: RegExp) => expect.objectContaining({ code: 'BLOCK_INVALID', message: expect.stringMatching(message) });
    await expect(run((n) => [postExec(n, [[1, 10_000_000n]])])).rejects.toThrow(
      invalid(/^transaction 1: SDM refund 10000000 exceeds the gas the EVM used/),
    );
    // The parent sits at the Jovian time + 2 = lagoon_time: a child one second earlier is before Lagoon.
    const early = await lagoonBlock((n) => [postExec(n, [[1, 1n]])]);
    const earlyConfig = parseRollupConfig({ ...config, lagoon_time: jovianTime + 100 });
    await expect(
      executeBlock({ config: earlyConfig, parent: early.parent, witness: early.witness, attributes: attributes(early.transactions) }),
    ).rejects.toThrow(invalid(/transaction 3 is a post-exec \(0x7d\) transaction before Lagoon/));
    await expect(run((n) => [postExec(n, [[1, 1n]]), l1InfoDeposit('0x')])).rejects.toThrow(invalid(/transaction 3 .* not the last of 5/));
    await expect(run((n) => [postExec(n + 1n, [[1, 1n]])])).rejects.toThrow(invalid(/payload\.blockNumber 102 is not the block's number/));
    await expect(run((n) => [postExec(n, [[0, 1n]])])).rejects.toThrow(invalid(/index 0 is a deposit/));
  });
});

describe('SDM settlement (sdm.md § Settlement, Per-Recipient Deltas)', () => {
  it('credits the sender r·p + the operator fee difference, debits the beneficiary r·(p − b), the base-fee vault r·b and the operator-fee vault', async () => {
    const state = new MerkleStateManager();
    const at = (address: string) => createAddressFromString(address);
    const coinbase = at('0x00000000000000000000000000000000000000c0');
    for (const [address, balance] of [
      [sender.address, 1n],
      [coinbase.toString(), 10n ** 12n],
      [feeVaults.baseFee, 10n ** 12n],
      [feeVaults.operatorFee, 10n ** 12n],
      [feeVaults.l1Fee, 10n ** 12n],
    ] as const)
      await state.putAccount(at(address), createAccount({ balance }));
    const fees = {
      l1Cost: () => 0n,
      l1FeeAndGas: () => ({ l1Fee: 0n, l1GasUsed: 0n }),
      operatorCost: (gas: bigint) => gas * 700n + 1_000n,
    };
    const tx = {
      sender: at(sender.address),
      coinbase,
      evmGasUsed: 50_000n,
      refund: 3_000n,
      effectiveGasPrice: 1_000_005n,
      baseFeePerGas: 1_000_000n,
      fees,
    };
    const { operatorFeeBack } = await settleRefund(state, tx);
    expect(operatorFeeBack).toBe(3_000n * 700n); // the constant cancels
    const balance = async (address: string) => (await state.getAccount(at(address)))!.balance;
    expect(await balance(sender.address)).toBe(1n + 3_000n * 1_000_005n + 3_000n * 700n);
    expect(await balance(coinbase.toString())).toBe(10n ** 12n - 3_000n * 5n);
    expect(await balance(feeVaults.baseFee)).toBe(10n ** 12n - 3_000n * 1_000_000n);
    expect(await balance(feeVaults.operatorFee)).toBe(10n ** 12n - 3_000n * 700n);
    expect(await balance(feeVaults.l1Fee)).toBe(10n ** 12n);

    // A debit that would underflow makes the block invalid (sdm.md § Application Rules).
    await state.putAccount(at(feeVaults.baseFee), createAccount({ balance: 5n }));
    await expect(settleRefund(state, tx)).rejects.toThrow(
      /base fee vault 0x4200000000000000000000000000000000000019 holds 5, less than the 3000000000 to debit/,
    );
  });
});
