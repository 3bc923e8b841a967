import type { BlockHeader as EvmHeader } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, createAddressFromString, hexToBytes, type Address } from '@ethereumjs/util';
import { bytesToHex, concat, getAddress, keccak256, padHex, size, slice, type Hex } from 'viem';
import { InsufficientFundsError } from '../errors.ts';
import { nextBaseFee } from '../op/base-fee.ts';
import { knownRollupConfigs } from '../op/chains.ts';
import type { BlockHeader } from '../op/header.ts';
import { feeVaults, l1BlockAddress, slotKey, txFees, type TxFees } from '../op/l1-cost.ts';
import { rulesAt, type BlockRules, type RollupConfig } from '../op/rollup-config.ts';
import type { ForkedState } from './fork-state.ts';

/*
 * What an OP Stack chain adds to a simulated call, with the stateless executor's fee functions
 * (src/op/l1-cost.ts): the L1 data fee and the operator fee, charged to the sender and
 * credited with the base fee to the fee vaults, as a transaction mined on the chain pays them.
 *
 * op-geth's own eth_simulateV1 does not (op-geth v1.101702.3): TransactionArgs.ToMessage sets
 * SkipTransactionChecks and no RollupCostData, so buyGas charges neither fee
 * (core/state_transition.go: `if !SkipNonceChecks && !SkipTransactionChecks`) and the L1 cost
 * function answers nil for empty cost data (core/types/rollup_cost.go: "Do not charge if there is
 * no rollup cost-data (e.g. RPC call or deposit)"): its sender ends richer than the mined
 * transaction's by the L1 fee and more, the L1 fee vault gets nothing, while the fee payment still
 * credits the operator fee vault (and, in the source, refunds the unpaid operator fee for unused
 * gas, refundIsthmusOperatorCost). flashlog charges a
 * simulated call what the chain would charge the transaction it stands for: the same fees as the
 * receipts of those transactions mined show (test/integration/simulate-op-fees.test.ts).
 */

/** The rollup config of a chain described by an op-geth genesis file (`config.optimism` and the fork times). */
export function rollupConfigOfGenesis(config: Record<string, unknown>): RollupConfig | undefined {
  const optimism = config.optimism as
    { eip1559Elasticity?: number; eip1559Denominator?: number; eip1559DenominatorCanyon?: number } | undefined;
  if (!optimism) return undefined;
  const time = (key: string) => (typeof config[key] === 'number' ? (config[key] as number) : undefined);
  return {
    l2_chain_id: Number(config.chainId),
    // a genesis does not say; simulated blocks never ask whether they activate a fork
    block_time: 1,
    regolith_time: time('regolithTime'),
    canyon_time: time('canyonTime'),
    delta_time: time('deltaTime'),
    ecotone_time: time('ecotoneTime'),
    fjord_time: time('fjordTime'),
    granite_time: time('graniteTime'),
    holocene_time: time('holoceneTime'),
    isthmus_time: time('isthmusTime'),
    jovian_time: time('jovianTime'),
    chain_op_config: {
      eip1559Elasticity: optimism.eip1559Elasticity ?? 6,
      eip1559Denominator: optimism.eip1559Denominator ?? 50,
      eip1559DenominatorCanyon: optimism.eip1559DenominatorCanyon ?? optimism.eip1559Denominator ?? 250,
    },
  };
}

/** The rollup config of a chain flashlog knows by its ID (src/op/chains.ts), or undefined. */
export const rollupConfigOfChain = (chainId: bigint): RollupConfig | undefined => knownRollupConfigs.get(Number(chainId));

/** One simulated block's OP rules and fee functions. */
export interface OpBlock {
  readonly rules: BlockRules;
  readonly fees: TxFees;
}

/** The block's fee functions, from the L1Block predeploy's storage as the block's state overrides left it. */
export async function opBlock(config: RollupConfig, timestamp: bigint, state: ForkedState): Promise<OpBlock> {
  const rules = rulesAt(config, timestamp);
  const l1Block = createAddressFromString(l1BlockAddress);
  const fees = await txFees(rules, async (slot) =>
    padHex(bytesToHex(await state.getStorage(l1Block, hexToBytes(slotKey(slot)))), { size: 32 }),
  );
  return { rules, fees };
}

/**
 * The base fee of a simulated block with `validation` on an OP Stack chain: the chain's EIP-1559
 * (its denominator and elasticity, from Holocene on the parent's extraData, from Jovian on its
 * minimum base fee). Simulated parents carry no extraData of their own: they are read with the
 * base block's parameters, in the form the parent's fork reads.
 */
export function opNextBaseFee(config: RollupConfig, parent: EvmHeader, baseExtraData: Hex, timestamp: bigint): bigint {
  const parentRules = rulesAt(config, parent.timestamp);
  let extraData = baseExtraData;
  if (parentRules.active('jovian') && size(extraData) === 9) extraData = concat(['0x01', slice(extraData, 1), padHex('0x0', { size: 8 })]);
  if (!parentRules.active('jovian') && size(extraData) === 17) extraData = concat(['0x00', slice(extraData, 1, 9)]);
  const header: BlockHeader = {
    parentHash: bytesToHex(parent.parentHash),
    sha3Uncles: bytesToHex(parent.uncleHash),
    miner: parent.coinbase.toString() as Hex,
    stateRoot: bytesToHex(parent.stateRoot),
    transactionsRoot: bytesToHex(parent.transactionsTrie),
    receiptsRoot: bytesToHex(parent.receiptTrie),
    logsBloom: bytesToHex(parent.logsBloom),
    difficulty: parent.difficulty,
    number: parent.number,
    gasLimit: parent.gasLimit,
    gasUsed: parent.gasUsed,
    timestamp: parent.timestamp,
    extraData,
    mixHash: bytesToHex(parent.mixHash),
    nonce: bytesToHex(parent.nonce),
    baseFeePerGas: parent.baseFeePerGas,
    blobGasUsed: parent.blobGasUsed,
  };
  return nextBaseFee(header, config, rulesAt(config, timestamp));
}

/**
 * The bytes the chain would price: the call's transaction with a signature in place. A call has
 * none, so a stand-in of a real one's shape (yParity 0, r and s 32 bytes derived from the
 * transaction) takes its place: incompressible as a real signature is, for FastLZ's count. Under
 * Fjord's minimum size (about 170 compressed bytes) the fee does not depend on it at all.
 */
export function signedForm(tx: TypedTransaction): Uint8Array {
  const r = keccak256(tx.getHashedMessageToSign(), 'bytes');
  // a signature's s is in the curve order's lower half (EIP-2): below 2^254 here
  const s = keccak256(r, 'bytes');
  s[0]! &= 0x3f;
  try {
    return (tx as unknown as { addSignature(v: bigint, r: Uint8Array, s: Uint8Array, convertV?: boolean): TypedTransaction })
      .addSignature(0n, r, s, true)
      .serialize();
  } catch {
    // a nonce past 2^64-1 (simulated, not signable): priced without its signature
    return tx.serialize();
  }
}

export const isChargedCall = (tx: TypedTransaction, validation: boolean): boolean => {
  if (validation) return true;
  const fees = tx as unknown as { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint };
  return (fees.gasPrice ?? 0n) !== 0n || (fees.maxFeePerGas ?? 0n) !== 0n || (fees.maxPriorityFeePerGas ?? 0n) !== 0n;
};

/** What a charged call paid before it ran. */
export interface OpCharge {
  readonly l1Fee: bigint;
  readonly operatorUpfront: bigint;
}

/**
 * Before the call: the balance check with the L1 fee and the operator fee for the whole gas limit
 * (op-geth buyGas), then both taken from the sender.
 */
export async function chargeUpfront(
  state: ForkedState,
  tx: TypedTransaction,
  from: Address,
  op: OpBlock,
  feeCap: bigint,
): Promise<OpCharge> {
  const l1Fee = op.fees.l1Cost(signedForm(tx));
  const operatorUpfront = op.fees.operatorCost(tx.gasLimit);
  const blob = tx as unknown as { blobVersionedHashes?: unknown[]; maxFeePerBlobGas?: bigint };
  const blobCost = BigInt(blob.blobVersionedHashes?.length ?? 0) * 131_072n * (blob.maxFeePerBlobGas ?? 0n);
  const want = tx.gasLimit * feeCap + tx.value + blobCost + l1Fee + operatorUpfront;
  const account = (await state.getAccount(from)) ?? new Account();
  if (account.balance < want) {
    throw new InsufficientFundsError(
      `err: insufficient funds for gas * price + value: address ${getAddress(from.toString())} have ${account.balance} want ${want} (supplied gas ${tx.gasLimit})`,
    );
  }
  account.balance -= l1Fee + operatorUpfront;
  await state.putAccount(from, account);
  return { l1Fee, operatorUpfront };
}

async function credit(state: ForkedState, address: Address, amount: bigint): Promise<void> {
  if (amount === 0n) return;
  const account = (await state.getAccount(address)) ?? new Account();
  account.balance += amount;
  await state.putAccount(address, account);
}

/**
 * After the call: the operator fee for unused gas back to the sender, the base fee (not burned on
 * an OP Stack chain), the L1 fee and the operator fee to their vaults.
 */
export async function settle(
  state: ForkedState,
  from: Address,
  op: OpBlock,
  charge: OpCharge,
  gasUsed: bigint,
  baseFeePerGas: bigint,
): Promise<void> {
  const operatorFee = op.fees.operatorCost(gasUsed);
  await credit(state, from, charge.operatorUpfront - operatorFee);
  await credit(state, createAddressFromString(feeVaults.baseFee), gasUsed * baseFeePerGas);
  await credit(state, createAddressFromString(feeVaults.l1Fee), charge.l1Fee);
  await credit(state, createAddressFromString(feeVaults.operatorFee), operatorFee);
}
