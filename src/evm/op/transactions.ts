import type { Block } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { createLegacyTx, createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { Account, createAddressFromString, type Address } from '@ethereumjs/util';
import { runTx, type RunTxResult, type VM } from '@ethereumjs/vm';
import { bytesToHex, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { FlashlogError } from '../../errors.ts';
import { feeVaults, type TxFees } from '../../op/l1-cost.ts';
import { depositTxParams } from './osaka.ts';
import type { Receipt } from './receipts.ts';
import type { BlockRules } from '../../op/rollup-config.ts';

/**
 * One transaction of an OP Stack block, run on the block's VM: a deposit (OP Stack deposits.md)
 * or a user transaction with its L1 data fee, operator fee and fee-vault credits
 * (exec-engine.md "Fee Vaults", isthmus/exec-engine.md "Operator fee").
 */
export type TxReceipt = Omit<Receipt, 'cumulativeGasUsed'>;

function receiptOf(type: number, result: RunTxResult, gasUsed: bigint, extra: Partial<Receipt> = {}): TxReceipt {
  return {
    type,
    status: result.execResult.exceptionError ? 0 : 1,
    gasUsed,
    logsBloom: bytesToHex(result.bloom.bitvector),
    logs: (result.execResult.logs ?? []).map(([address, topics, data]) => ({
      address: bytesToHex(address),
      topics: topics.map((t) => bytesToHex(t)),
      data: bytesToHex(data),
    })),
    l1Fee: 0n,
    operatorFee: 0n,
    ...extra,
  };
}

async function credit(state: MerkleStateManager, address: Address, amount: bigint) {
  if (amount === 0n) return;
  const account = (await state.getAccount(address)) ?? new Account();
  account.balance += amount;
  await state.putAccount(address, account);
}

/** viem's parse of a 0x7e transaction (its return type names only Ethereum's types). */
interface DepositFields {
  readonly type: string;
  readonly from: Hex;
  readonly to?: Hex | null;
  readonly mint?: bigint;
  readonly value?: bigint;
  readonly gas: bigint;
  readonly isSystemTx?: boolean;
  readonly data?: Hex;
}

/** OP Stack deposits.md "Execution" (Regolith and later). */
export async function runDeposit(
  vm: VM,
  state: MerkleStateManager,
  common: Common,
  raw: Hex,
  depositBlock: Block,
  rules: BlockRules,
): Promise<TxReceipt> {
  const deposit = parseTransaction(raw) as unknown as DepositFields;
  if (deposit.type !== 'deposit') throw new FlashlogError('TX_INVALID', 'type 0x7e that is not a deposit');
  const from = createAddressFromString(deposit.from);
  const before = await state.getAccount(from);
  const depositNonce = before?.nonce ?? 0n;
  await credit(state, from, deposit.mint ?? 0n);
  const tx = createLegacyTx(
    {
      nonce: depositNonce,
      gasPrice: 0n,
      gasLimit: deposit.gas,
      to: deposit.to ?? undefined,
      value: deposit.value ?? 0n,
      data: deposit.data ?? '0x',
    },
    { common, freeze: false, params: depositTxParams },
  );
  (tx as { getSenderAddress: () => Address }).getSenderAddress = () => from;
  // The receipt's deposit nonce from Regolith on, its version from Canyon on, as the config sets
  // them (base/base `block_executor.rs` @05a4bfa8 `commit_transaction`).
  const version = rules.active('canyon') ? { depositNonce, depositReceiptVersion: 1n } : rules.active('regolith') ? { depositNonce } : {};
  try {
    // A system transaction is refused by a Regolith EVM (every EVM flashlog runs): a failed deposit
    // (op-geth `ErrSystemTxNotSupported`; op-revm `DepositSystemTxPostRegolith`).
    if (deposit.isSystemTx) throw new Error('system transactions are not supported from Regolith on');
    const result = await runTx(vm, {
      tx,
      block: depositBlock,
      skipNonce: true,
      skipHardForkValidation: true,
      skipBlockGasLimitValidation: true,
    });
    return receiptOf(0x7e, result, result.totalGasSpent, version);
  } catch (error) {
    // flashlog's own refusals (a witness gap, a fork rule it does not run) are not the EVM's.
    if (error instanceof FlashlogError) throw error;
    // A failed deposit: everything but the mint is undone, the nonce still moves, all gas is used.
    const account = (await state.getAccount(from)) ?? new Account();
    account.nonce += 1n;
    await state.putAccount(from, account);
    return {
      type: 0x7e,
      status: 0 as const,
      gasUsed: deposit.gas,
      logsBloom: bytesToHex(new Uint8Array(256)),
      logs: [],
      l1Fee: 0n,
      operatorFee: 0n,
      ...version,
    };
  }
}

/**
 * A user transaction. `refund` is its Sequencer-Defined Metering gas refund (Lagoon, the block's
 * post-exec payload; 0 without one): the receipt reports `evmGasUsed − refund` and the fees the
 * EVM charged for the refunded gas move back to the sender (`settleRefund`).
 */
export async function runUserTx(
  vm: VM,
  state: MerkleStateManager,
  common: Common,
  bytes: Uint8Array,
  block: Block,
  baseFeePerGas: bigint,
  fees: TxFees,
  refund = 0n,
): Promise<TxReceipt> {
  const tx: TypedTransaction = createTxFromRLP(bytes, { common });
  const sender = tx.getSenderAddress();
  const l1Fee = fees.l1Cost(bytes);
  const operatorUpfront = fees.operatorCost(tx.gasLimit);
  const account = (await state.getAccount(sender)) ?? new Account();
  if (account.balance < l1Fee + operatorUpfront) {
    throw new FlashlogError(
      'TX_INVALID',
      `sender ${sender.toString()} cannot pay the L1 fee ${l1Fee} and operator fee ${operatorUpfront} (balance ${account.balance})`,
    );
  }
  account.balance -= l1Fee + operatorUpfront;
  await state.putAccount(sender, account);
  const result = await runTx(vm, { tx, block, skipHardForkValidation: true });
  const gasUsed = result.totalGasSpent;
  const operatorFee = fees.operatorCost(gasUsed);
  await credit(state, sender, operatorUpfront - operatorFee);
  await credit(state, createAddressFromString(feeVaults.baseFee), gasUsed * baseFeePerGas);
  await credit(state, createAddressFromString(feeVaults.l1Fee), l1Fee);
  await credit(state, createAddressFromString(feeVaults.operatorFee), operatorFee);
  if (refund === 0n) return receiptOf(tx.type, result, gasUsed, { l1Fee, operatorFee });
  const settled = await settleRefund(state, {
    sender,
    coinbase: block.header.coinbase,
    evmGasUsed: gasUsed,
    refund,
    effectiveGasPrice: effectiveGasPriceOf(tx, baseFeePerGas),
    baseFeePerGas,
    fees,
  });
  return receiptOf(tx.type, result, gasUsed - refund, { l1Fee, operatorFee: operatorFee - settled.operatorFeeBack, opGasRefund: refund });
}

/** EIP-1559's effective gas price: min(maxFeePerGas, baseFee + maxPriorityFeePerGas), or a legacy/2930 gasPrice. */
function effectiveGasPriceOf(tx: TypedTransaction, baseFeePerGas: bigint): bigint {
  if ('maxFeePerGas' in tx) {
    const tip = baseFeePerGas + tx.maxPriorityFeePerGas;
    return tip < tx.maxFeePerGas ? tip : tx.maxFeePerGas;
  }
  return tx.gasPrice;
}

async function debit(state: MerkleStateManager, address: Address, amount: bigint, who: string) {
  if (amount === 0n) return;
  const account = (await state.getAccount(address)) ?? new Account();
  // sdm.md § Application Rules: "If any debit would underflow, the block is invalid."
  if (account.balance < amount)
    throw new FlashlogError(
      'TX_INVALID',
      `SDM settlement: the ${who} ${address.toString()} holds ${account.balance}, less than the ${amount} to debit`,
    );
  account.balance -= amount;
  await state.putAccount(address, account);
}

/**
 * Sequencer-Defined Metering settlement of one transaction (specs `protocol/lagoon/sdm.md` @215e3ec5
 * § Canonical Gas, § Settlement "Per-Recipient Deltas"), with r the refund, p the effective gas
 * price, b the base fee and operatorFee(g) the Isthmus/Jovian operator fee of g gas:
 *   sender +r·p + (operatorFee(evmGasUsed) − operatorFee(evmGasUsed − r))
 *   block beneficiary −r·(p − b);  BaseFeeVault −r·b;  OperatorFeeVault −(operatorFee(evm) − operatorFee(canonical))
 * The L1 fee vault is not touched. A refund above the EVM's gas used, or a debit that would
 * underflow, makes the block invalid. Applied right after the transaction, before the next one
 * runs (§ Application Rules: atomic with the transaction).
 */
export async function settleRefund(
  state: MerkleStateManager,
  tx: {
    readonly sender: Address;
    readonly coinbase: Address;
    readonly evmGasUsed: bigint;
    readonly refund: bigint;
    readonly effectiveGasPrice: bigint;
    readonly baseFeePerGas: bigint;
    readonly fees: TxFees;
  },
): Promise<{ readonly operatorFeeBack: bigint }> {
  const { refund: r, effectiveGasPrice: p, baseFeePerGas: b } = tx;
  if (r > tx.evmGasUsed)
    throw new FlashlogError('TX_INVALID', `SDM refund ${r} exceeds the gas the EVM used, ${tx.evmGasUsed} (sdm.md § Canonical Gas)`);
  const operatorFeeBack = tx.fees.operatorCost(tx.evmGasUsed) - tx.fees.operatorCost(tx.evmGasUsed - r);
  await debit(state, tx.coinbase, r * (p - b), 'block beneficiary');
  await debit(state, createAddressFromString(feeVaults.baseFee), r * b, 'base fee vault');
  await debit(state, createAddressFromString(feeVaults.operatorFee), operatorFeeBack, 'operator fee vault');
  await credit(state, tx.sender, r * p + operatorFeeBack);
  return { operatorFeeBack };
}

/**
 * The post-exec transaction's own receipt (post-exec.md § Receipt): success, no logs, the zero
 * bloom, no gas of its own (the block's cumulative gas is inherited). It is not executed.
 */
export function postExecReceipt(): TxReceipt {
  return { type: 0x7d, status: 1, gasUsed: 0n, logsBloom: bytesToHex(new Uint8Array(256)), logs: [], l1Fee: 0n, operatorFee: 0n };
}
