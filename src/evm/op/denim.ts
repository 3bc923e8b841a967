import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { bytesToBigInt, decodeFunctionData, encodeFunctionData, hexToBytes, keccak256, toFunctionSelector, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import {
  BASE_TIME_DEPOSIT_GAS,
  BASE_TIME_IMPLEMENTATION,
  BASE_TIME_IMPLEMENTATION_CODE_HASH,
  BASE_TIME_MILLIS_PARTS,
  BASE_TIME_PREDEPLOY,
  DEPOSITOR_ACCOUNT,
  baseTimeAbi,
} from '../../op/basetime.ts';
import { FlashlogError } from '../../errors.ts';
import { slotKey } from '../../op/l1-cost.ts';
import { baseForks, ladderOf, type BlockRules, type RollupConfig } from '../../op/rollup-config.ts';
import { proxyAdminAddress } from '../../op/predeploys.ts';

/**
 * Base's Denim in the stateless executor (base/docs `upgrades/denim/200ms-native-blocks.mdx`;
 * base/base BaseTime predeploy and deposit):
 * - `tx[1]` of every Denim block is the BaseTime deposit, checked field by field;
 * - its millisecond part follows the parent's by exactly 200 ms (`1000 × timestamp + millis`),
 *   0 on the first Denim block, so a header timestamp may equal its parent's;
 * - on the first Denim block, before any transaction, the BaseTime implementation is installed
 *   and the proxy's EIP-1967 implementation slot set (when still zero);
 * - after the block, the deposit succeeded and BaseTime holds its millisecond part;
 * - on a Base chain no other depositor call of the setter appears, before Denim or after.
 * Not checked: the deposit's source hash (its preimage, `DepositSourceDomain::BaseTime`, is
 * UNCONFIRMED), and the first block's gas limit ÷ 10 / denominator × 10 (derivation, which
 * hands execution the header's values).
 */

/** EIP-1967 implementation and admin slots. */
const IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
const ADMIN_SLOT: Hex = '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103';
const PROXY_ADMIN = BigInt(proxyAdminAddress);
/** Base mainnet and Sepolia: a config that brings BaseTime code must bring the canonical one. */
const baseChains = new Set([8453, 84532]);

const refuse = (number: bigint, reason: string) => new FlashlogError('BLOCK_INVALID', `Denim block ${number}: ${reason}`);

/** The fields of tx[1] Denim fixes, checked in order; returns the millisecond part it sets. */
export function baseTimeDepositMillis(transactions: readonly Hex[], number: bigint): number {
  const raw = transactions[1];
  if (raw === undefined) throw refuse(number, 'tx[1] is missing: a Denim block carries the BaseTime deposit there');
  if (!raw.toLowerCase().startsWith('0x7e')) throw refuse(number, 'tx[1] is not a deposit (type 0x7e): expected the BaseTime deposit');
  let tx: Record<string, unknown>;
  try {
    tx = parseTransaction(raw) as unknown as Record<string, unknown>;
  } catch (error) {
    throw refuse(number, `tx[1] does not decode as a deposit: ${(error as Error).message}`);
  }
  const expect = (field: string, actual: unknown, wanted: unknown) => {
    if (actual !== wanted) throw refuse(number, `tx[1] (the BaseTime deposit): ${field} is ${String(actual)}, expected ${String(wanted)}`);
  };
  expect('from', (tx.from as string | undefined)?.toLowerCase(), DEPOSITOR_ACCOUNT);
  expect('to', (tx.to as string | undefined)?.toLowerCase(), BASE_TIME_PREDEPLOY);
  expect('mint', tx.mint ?? 0n, 0n);
  expect('value', tx.value ?? 0n, 0n);
  expect('gas', tx.gas, BASE_TIME_DEPOSIT_GAS);
  expect('isSystemTx', tx.isSystemTx ?? false, false);
  const data = ((tx.data as Hex | undefined) ?? '0x').toLowerCase() as Hex;
  let call: ReturnType<typeof decodeFunctionData<typeof baseTimeAbi>>;
  try {
    call = decodeFunctionData({ abi: baseTimeAbi, data });
  } catch (error) {
    throw refuse(number, `tx[1] calldata ${data} is not setTimestampMillisPart(uint16): ${(error as Error).message}`);
  }
  if (call.functionName !== 'setTimestampMillisPart')
    throw refuse(number, `tx[1] calldata ${data} is not setTimestampMillisPart(uint16): calls ${call.functionName}`);
  const millis = Number(call.args[0]);
  // 36 bytes exactly, the uint16 left-padded with zeros (the re-encoding is the only accepted form).
  const canonical =
    millis <= 0xffff ? encodeFunctionData({ abi: baseTimeAbi, functionName: 'setTimestampMillisPart', args: [millis] }) : undefined;
  if (data !== canonical) throw refuse(number, `tx[1] calldata ${data} is not setTimestampMillisPart(uint16) in its 36-byte form`);
  if (!BASE_TIME_MILLIS_PARTS.includes(millis))
    throw refuse(number, `tx[1] sets the millisecond part ${millis}, expected one of ${BASE_TIME_MILLIS_PARTS.join(', ')}`);
  return millis;
}

/** A deposit from the depositor account calling BaseTime's setter (base/base `is_protocol_authorized_setter`). */
function isProtocolSetter(raw: Hex): boolean {
  if (!raw.toLowerCase().startsWith('0x7e')) return false;
  try {
    const tx = parseTransaction(raw) as unknown as { from?: string; to?: string | null; data?: Hex };
    return (
      tx.from?.toLowerCase() === DEPOSITOR_ACCOUNT &&
      tx.to?.toLowerCase() === BASE_TIME_PREDEPLOY &&
      (tx.data ?? '0x').toLowerCase().startsWith(toFunctionSelector(baseTimeAbi[0]))
    );
  } catch {
    return false;
  }
}

/** BaseTime's `uint16` in slot 0 (byte offset 30, the word's low two bytes). */
export async function storedBaseTimeMillisPart(state: MerkleStateManager): Promise<number> {
  const word = await state.getStorage(createAddressFromString(BASE_TIME_PREDEPLOY), hexToBytes(slotKey(0n)));
  return Number(wordValue(word) & 0xffffn);
}

/** A storage value as the state manager returns it (no bytes for zero). */
const wordValue = (word: Uint8Array) => (word.length === 0 ? 0n : bytesToBigInt(word));

interface DenimBlock {
  readonly state: MerkleStateManager;
  readonly config: RollupConfig;
  readonly rules: BlockRules;
  readonly number: bigint;
  readonly parentTimestamp: bigint;
  readonly transactions: readonly Hex[];
}

/**
 * Before a Denim block's transactions: checks tx[1] and the 200 ms step, and on the activation
 * block installs BaseTime. Returns the block's millisecond part (undefined before Denim).
 */
export async function beforeDenimBlock(block: DenimBlock): Promise<number | undefined> {
  const { state, rules, number, parentTimestamp } = block;
  if (ladderOf(block.config) !== baseForks) return undefined;
  // base/base `BaseTimeUpdateTx::validate_child_transactions`: the depositor's setter call is
  // only ever tx[1] of a Denim block.
  const denim = rules.active('denim');
  const extra = block.transactions.findIndex((raw, index) => (index !== 1 || !denim) && isProtocolSetter(raw));
  if (extra >= 0)
    throw new FlashlogError(
      'BLOCK_INVALID',
      `${denim ? 'Denim block' : 'block'} ${number}: tx[${extra}] is a depositor call of setTimestampMillisPart ${denim ? 'besides tx[1]' : 'before Denim'}`,
    );
  if (!denim) return undefined;
  const millis = baseTimeDepositMillis(block.transactions, number);
  if (rules.activationBlock('denim')) {
    if (millis !== 0) throw refuse(number, `the first Denim block's millisecond part is ${millis}, expected 0`);
    await installBaseTime(block);
    return millis;
  }
  const parentMillis = await storedBaseTimeMillisPart(state);
  const parentMs = parentTimestamp * 1000n + BigInt(parentMillis);
  const ms = rules.timestamp * 1000n + BigInt(millis);
  if (ms !== parentMs + 200n)
    throw refuse(
      number,
      `its time ${ms} ms (timestamp ${rules.timestamp}, millisecond part ${millis}) is not its parent's ${parentMs} ms + 200`,
    );
  return millis;
}

/** After the transactions: the BaseTime deposit succeeded and left its millisecond part in BaseTime. */
export async function afterDenimBlock(
  state: MerkleStateManager,
  number: bigint,
  millis: number | undefined,
  depositStatus: number | undefined,
) {
  if (millis === undefined) return;
  if (depositStatus !== 1) throw refuse(number, 'the BaseTime deposit (tx[1]) failed');
  const stored = await storedBaseTimeMillisPart(state);
  if (stored !== millis) throw refuse(number, `BaseTime holds the millisecond part ${stored} after the block, its deposit set ${millis}`);
}

/**
 * Denim's activation-time transition (base/base `BaseTime::ensure_predeploy`): when the proxy's
 * implementation slot is zero, the proxy must exist with code and the ProxyAdmin as admin; the
 * implementation's runtime code is installed at 0xc0D3…0030 and the slot set. flashlog does not
 * carry Base's BaseTime runtime code (another project's build artefact): a config brings it as
 * `base_time_implementation_code`, else the activation block is refused, naming what is missing.
 */
async function installBaseTime({ state, config, number }: DenimBlock) {
  const proxy = createAddressFromString(BASE_TIME_PREDEPLOY);
  const slot = async (key: Hex) => wordValue(await state.getStorage(proxy, hexToBytes(key)));
  if ((await slot(IMPLEMENTATION_SLOT)) !== 0n) return; // linked already (governance): kept
  const account = await state.getAccount(proxy);
  if (!account || (await state.getCode(proxy)).length === 0)
    throw refuse(number, `the BaseTime proxy ${BASE_TIME_PREDEPLOY} has no code; Denim's activation needs it`);
  const admin = await slot(ADMIN_SLOT);
  if (admin !== PROXY_ADMIN) throw refuse(number, `the BaseTime proxy's admin is 0x${admin.toString(16)}, expected the ProxyAdmin`);
  const code = config.base_time_implementation_code as Hex | null | undefined;
  if (!code)
    throw new FlashlogError(
      'FORK_UNSUPPORTED',
      `Denim block ${number} (activation): installs the BaseTime implementation at ${BASE_TIME_IMPLEMENTATION} (runtime code hash ${BASE_TIME_IMPLEMENTATION_CODE_HASH}, base/contracts 4848ec70), which flashlog does not carry; give it as base_time_implementation_code in the rollup config`,
    );
  if (baseChains.has(config.l2_chain_id) && keccak256(code) !== BASE_TIME_IMPLEMENTATION_CODE_HASH)
    throw new FlashlogError(
      'ROLLUP_CONFIG_INVALID',
      `base_time_implementation_code: hashes to ${keccak256(code)}, chain ${config.l2_chain_id} runs ${BASE_TIME_IMPLEMENTATION_CODE_HASH}`,
    );
  const implementation = createAddressFromString(BASE_TIME_IMPLEMENTATION);
  if (!(await state.getAccount(implementation))) await state.putAccount(implementation, new Account());
  await state.putCode(implementation, hexToBytes(code));
  await state.putStorage(proxy, hexToBytes(IMPLEMENTATION_SLOT), implementation.bytes);
}
