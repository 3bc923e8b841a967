import { concat, decodeFunctionData, encodeFunctionData, keccak256, numberToHex, parseAbi, type Hex } from 'viem';
import { serializeTransaction } from 'viem/op-stack';
import { depositorAccount } from './predeploys.ts';

/**
 * Base's Denim block time (docs.base.org, Denim specification): `tx[1]` of every block is the
 * BaseTime deposit, from the depositor account to the BaseTime predeploy, calling
 * `setTimestampMillisPart(uint16)` (selector 0x86bdf394) with the block's millisecond part (0, 200,
 * 400, 600 or 800). A block's time in milliseconds is `1000 × header.timestamp + millis part`.
 */
export const BASE_TIME_PREDEPLOY: Hex = '0x4200000000000000000000000000000000000030';
export const DEPOSITOR_ACCOUNT: Hex = depositorAccount;
/** The BaseTime deposit's gas limit. */
export const BASE_TIME_DEPOSIT_GAS = 1_000_000n;
/** The millisecond parts of a 200 ms block schedule, the only ones a BaseTime deposit sets on Base. */
export const BASE_TIME_MILLIS_PARTS: readonly number[] = [0, 200, 400, 600, 800];
/**
 * Where Denim's activation installs the BaseTime implementation, and the hash of the runtime code
 * it installs (base/base BaseTime predeploy: `IMPLEMENTATION_ADDRESS`, `IMPLEMENTATION_CODE_HASH`,
 * code from base/contracts 4848ec70).
 */
export const BASE_TIME_IMPLEMENTATION: Hex = '0xc0d3c0d3c0d3c0d3c0d3c0d3c0d3c0d3c0d30030';
export const BASE_TIME_IMPLEMENTATION_CODE_HASH: Hex = '0x9c4c8a497a69d0b8f2ba67be0bee7a1373186055978c3be6ec3068e0ec27f32a';
export const baseTimeAbi = parseAbi([
  'function setTimestampMillisPart(uint16 millisPart)',
  'function timestampMillisPart() view returns (uint16)',
  'function timestampMs() view returns (uint64)',
]);

/** The fields of a transaction this module reads (RPC shape; `input` is the calldata). */
export interface BaseTimeCandidate {
  readonly type?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | null | undefined;
  readonly input?: string | undefined;
}

/**
 * The millisecond part a block's BaseTime deposit sets, or null when `tx` is not one (a pre-Denim
 * block, a pruned body, another chain).
 * @example baseTimeMillisPart(block.transactions[1]) // 400
 */
export function baseTimeMillisPart(tx: BaseTimeCandidate | undefined): number | null {
  // Not checked: `from`. tx[1] of a Denim block is the BaseTime deposit by position (user deposits
  // follow the system ones); on Base it is the depositor account, on the devnet a fresh sender per
  // block (EDR refuses a deposit from an account whose nonce is not 0).
  if (!tx || tx.to?.toLowerCase() !== BASE_TIME_PREDEPLOY) return null;
  if (tx.type !== undefined && BigInt(tx.type) !== 0x7en) return null;
  try {
    const call = decodeFunctionData({ abi: baseTimeAbi, data: (tx.input ?? '0x') as Hex });
    if (call.functionName !== 'setTimestampMillisPart') return null;
    const millis = Number(call.args[0]);
    return millis < 1000 ? millis : null;
  } catch {
    return null;
  }
}

/** `1000 × timestamp + millis part` (the millis part 0 when unknown). */
export function timestampMs(timestampSeconds: bigint, millisPart: number | null): bigint {
  return timestampSeconds * 1000n + BigInt(millisPart ?? 0);
}

/**
 * The BaseTime deposit's source hash, domain 3: `keccak256(bytes32(3) ‖ keccak256(uint256(blockNumber)))`,
 * as base/base `BaseTimeDepositSource { block_number }` computes it (crates/common/consensus/src/source.rs
 * at a6869ca2, the form its `BaseTimeUpdateTx` builds and validates). Another stored version of that
 * file keys it by L1 block hash and sequence number; base/base's own Denim vectors
 * (`crates/proof/client/tests/denim_native.rs` @6cf00165, test/fixtures/base-denim-native) carry
 * this block-number form. The stateless executor still does not check it.
 */
export function baseTimeSourceHash(blockNumber: bigint): Hex {
  return keccak256(concat([numberToHex(3, { size: 32 }), keccak256(numberToHex(blockNumber, { size: 32 }))]));
}

/**
 * The BaseTime deposit of block `blockNumber` (tx[1] of every Denim block; base/base
 * `BaseTimeUpdateTx::try_new_with_deposit_tx`): type 0x7e, from the depositor account, to
 * 0x4200…0030, mint and value 0, gas 1,000,000, not a system tx, 36 bytes of
 * `setTimestampMillisPart(uint16)`. `from` is for a devnet whose engine cannot take Base's sender.
 * @example baseTimeDeposit({ blockNumber: 9n, millisPart: 600 })
 */
export function baseTimeDeposit({ blockNumber, millisPart, from = DEPOSITOR_ACCOUNT }: BaseTimeDepositParameters): Hex {
  return serializeTransaction({
    type: 'deposit',
    sourceHash: baseTimeSourceHash(blockNumber),
    from,
    to: BASE_TIME_PREDEPLOY,
    mint: 0n,
    value: 0n,
    gas: BASE_TIME_DEPOSIT_GAS,
    isSystemTx: false,
    data: encodeFunctionData({ abi: baseTimeAbi, functionName: 'setTimestampMillisPart', args: [millisPart] }),
  });
}
export interface BaseTimeDepositParameters {
  readonly blockNumber: bigint;
  /** 0, 200, 400, 600 or 800 on Base; not checked here (a test builds wrong ones on purpose). */
  readonly millisPart: number;
  readonly from?: Hex | undefined;
}
