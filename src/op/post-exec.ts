import { fromRlp, hexToBigInt, keccak256, numberToHex, toRlp, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';

/**
 * Lagoon's post-execution transaction (type 0x7D) and its version-1 payload, Sequencer-Defined
 * Metering (SDM). Built from ethereum-optimism/specs `specs/protocol/lagoon/post-exec.md`
 * (@1f2dc033) and `specs/protocol/lagoon/sdm.md` (@215e3ec5); the decode rules match
 * ethereum-optimism/optimism `rust/op-alloy/crates/consensus/src/post_exec.rs` (@1c785875:
 * `PostExecPayload::decode_checked` refuses a version other than 1 and trailing bytes).
 *
 *   tx      := 0x7D || rlp([version, blockNumber, gasRefundEntries])   post-exec.md § Encoding
 *   entry   := [index, gasRefund]                                     sdm.md § SDMGasEntry
 *   hash    := keccak256(tx)                                          post-exec.md § Transaction Hash
 *
 * The payload is the transaction's own RLP list, not wrapped in another list; there is no
 * signature, no nonce, no gas; the sender reads as the zero address.
 */
export const POST_EXEC_TX_TYPE = 0x7d;
/** The only payload schema defined (post-exec.md § Defined Schema Versions). */
export const SDM_PAYLOAD_VERSION = 1;
const maxUint64 = 2n ** 64n - 1n;

export interface SdmGasEntry {
  /** Transaction index within the block (zero-based). */
  readonly index: number;
  readonly gasRefund: bigint;
}

export interface PostExecPayload {
  readonly version: number;
  readonly blockNumber: bigint;
  readonly gasRefundEntries: readonly SdmGasEntry[];
}

export interface PostExecTx extends PostExecPayload {
  /** The EIP-2718 bytes: 0x7d ‖ rlp(payload). */
  readonly raw: Hex;
  readonly hash: Hex;
  /** rlp(payload): what JSON-RPC answers as the transaction's `input` (post-exec.md § Generic Transaction Interface Representation). */
  readonly input: Hex;
}

/** True when an EIP-2718 transaction (0x-hex) has the post-exec type byte. */
export const isPostExecTx = (raw: string): boolean => raw.slice(0, 4).toLowerCase() === '0x7d';

/** An RLP integer: minimal big-endian bytes, the empty string for zero. */
const rlpUint = (value: bigint | number): Hex =>
  BigInt(value) === 0n ? '0x' : numberToHex(BigInt(value), { size: byteLength(BigInt(value)) });
const byteLength = (value: bigint): number => Math.ceil(value.toString(16).length / 2);

function uintOf(field: unknown, where: string, max = maxUint64): bigint {
  if (typeof field !== 'string') throw invalid(`${where}: expected an RLP integer, got a list`);
  if (field === '0x') return 0n;
  if (field.startsWith('0x00')) throw invalid(`${where}: an RLP integer with a leading zero byte (${field})`);
  const value = hexToBigInt(field as Hex);
  if (value > max) throw invalid(`${where}: ${value} does not fit in ${max === 255n ? 'uint8' : 'uint64'}`);
  return value;
}
const invalid = (message: string) => new FlashlogError('TX_INVALID', `post-exec transaction: ${message}`);

/**
 * Encodes a post-exec transaction.
 *
 * @example encodePostExecTx({ version: 1, blockNumber: 42n, gasRefundEntries: [{ index: 3, gasRefund: 7n }] }).raw // '0x7dc6012ac3c20307'
 */
export function encodePostExecTx(payload: PostExecPayload): PostExecTx {
  const input = toRlp([
    rlpUint(payload.version),
    rlpUint(payload.blockNumber),
    payload.gasRefundEntries.map((entry) => [rlpUint(entry.index), rlpUint(entry.gasRefund)]),
  ]);
  const raw = `0x7d${input.slice(2)}` as Hex;
  return { ...payload, raw, input, hash: keccak256(raw) };
}

/**
 * Decodes a post-exec transaction, naming the field that does not fit. Checks the encoding and
 * the schema version only (op-alloy's `decode_checked`); the block-level rules are
 * `checkPostExecInBlock`'s.
 *
 * @example decodePostExecTx('0x7dc6012ac3c20307').gasRefundEntries // [{ index: 3, gasRefund: 7n }]
 */
export function decodePostExecTx(raw: Hex): PostExecTx {
  if (!isPostExecTx(raw)) throw invalid(`type byte ${raw.slice(0, 4)}: expected 0x7d`);
  const input = `0x${raw.slice(4)}` as Hex;
  let decoded: unknown;
  try {
    decoded = fromRlp(input, 'hex');
  } catch (error) {
    throw invalid(`payload: not RLP (${(error as Error).message.split('\n')[0]})`);
  }
  if (!Array.isArray(decoded)) throw invalid('payload: expected an RLP list [version, blockNumber, gasRefundEntries]');
  if (decoded.length !== 3)
    throw invalid(`payload: expected 3 fields [version, blockNumber, gasRefundEntries] (sdm.md version 1), got ${decoded.length}`);
  const version = Number(uintOf(decoded[0], 'payload.version', 255n));
  if (version !== SDM_PAYLOAD_VERSION) throw invalid(`payload.version: ${version} is not a defined schema version (only 1, SDM)`);
  const blockNumber = uintOf(decoded[1], 'payload.blockNumber');
  const list = decoded[2];
  if (!Array.isArray(list)) throw invalid('payload.gasRefundEntries: expected a list');
  const gasRefundEntries = list.map((entry, i): SdmGasEntry => {
    const where = `payload.gasRefundEntries[${i}]`;
    if (!Array.isArray(entry) || entry.length !== 2) throw invalid(`${where}: expected [index, gasRefund]`);
    const index = uintOf(entry[0], `${where}.index`);
    if (index > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid(`${where}.index: ${index} is past any block's transactions`);
    return { index: Number(index), gasRefund: uintOf(entry[1], `${where}.gasRefund`) };
  });
  const tx: PostExecTx = { version, blockNumber, gasRefundEntries, raw: raw.toLowerCase() as Hex, input, hash: keccak256(raw) };
  // A non-canonical RLP (long forms, a leading zero) decodes to the same values with other bytes: refuse it, so `raw` is the one encoding.
  if (encodePostExecTx(tx).raw !== tx.raw) throw invalid('payload: not in canonical RLP form');
  return tx;
}

/** The refund of the transaction at `index`, 0 when the payload names none (sdm.md § Gas Refund Semantics). */
export function refundOf(payload: PostExecPayload | undefined, index: number): bigint {
  return payload?.gasRefundEntries.find((entry) => entry.index === index)?.gasRefund ?? 0n;
}

/**
 * The block-level rules of post-exec.md § Block-Level Structural Rules and sdm.md § Validity Rules,
 * over a block's EIP-2718 transactions. Returns the block's post-exec payload, or undefined when
 * it has none. Throws BLOCK_INVALID naming the rule (and the transaction index) a block breaks.
 *
 *   1. at most one 0x7D;  2. it is the last transaction;  3. payload.blockNumber = the block's number;
 *   4. version 1;  5. none before Lagoon;  SDM: entries non-empty, each refund non-zero, indexes
 *   strictly increasing, each naming a standard transaction (not a deposit, not the 0x7D itself).
 *
 * @example checkPostExecInBlock(attributes.transactions, 12n, rules.active('lagoon'))
 */
export function checkPostExecInBlock(transactions: readonly Hex[], blockNumber: bigint, lagoon: boolean): PostExecTx | undefined {
  const positions = transactions.flatMap((raw, index) => (isPostExecTx(raw) ? [index] : []));
  if (positions.length === 0) return undefined;
  const bad = (rule: string) => new FlashlogError('BLOCK_INVALID', `block ${blockNumber}: ${rule}`);
  if (!lagoon) throw bad(`transaction ${positions[0]} is a post-exec (0x7d) transaction before Lagoon (post-exec.md rule 5)`);
  if (positions.length > 1)
    throw bad(`transactions ${positions.join(', ')} are post-exec (0x7d): at most one a block (post-exec.md rule 1)`);
  const at = positions[0]!;
  if (at !== transactions.length - 1)
    throw bad(`transaction ${at} is a post-exec (0x7d) transaction but not the last of ${transactions.length} (post-exec.md rule 2)`);
  let tx: PostExecTx;
  try {
    tx = decodePostExecTx(transactions[at]!);
  } catch (error) {
    throw bad(`transaction ${at}: ${(error as Error).message}`);
  }
  if (tx.blockNumber !== blockNumber)
    throw bad(`transaction ${at}: post-exec payload.blockNumber ${tx.blockNumber} is not the block's number (post-exec.md rule 3)`);
  if (tx.gasRefundEntries.length === 0)
    throw bad(`transaction ${at}: post-exec payload.gasRefundEntries is empty (sdm.md validity rule 1)`);
  let previous = -1;
  for (const [i, entry] of tx.gasRefundEntries.entries()) {
    const where = `transaction ${at}: payload.gasRefundEntries[${i}]`;
    if (entry.gasRefund === 0n) throw bad(`${where}.gasRefund is 0 (sdm.md validity rule 2)`);
    if (entry.index <= previous) throw bad(`${where}.index ${entry.index} does not follow ${previous} (sdm.md validity rule 3)`);
    previous = entry.index;
    const target = transactions[entry.index];
    if (target === undefined || entry.index === at || target.slice(0, 4).toLowerCase() === '0x7e')
      throw bad(
        `${where}.index ${entry.index} is ${target === undefined ? 'past the block' : entry.index === at ? 'the post-exec transaction' : 'a deposit'}, not a standard transaction (sdm.md validity rule 4)`,
      );
  }
  return tx;
}
