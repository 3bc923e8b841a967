import { decodeAbiParameters, hexToBigInt, parseAbiItem, size, slice, toEventSelector, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { sourceDomain, sourceHash, type Deposit } from '../op/deposit-tx.ts';

/**
 * User deposits from the OptimismPortal's logs (specs/protocol/deposits.md, "Deposit Contract";
 * derivation.md "Deriving the Transaction List"):
 *
 *   event TransactionDeposited(address indexed from, address indexed to, uint256 indexed version, bytes opaqueData)
 *
 * version 0's opaqueData is tightly packed:
 *
 *   offset  size  field
 *   0       32    mint
 *   32      32    value
 *   64      8     gas
 *   72      1     isCreation (non-zero: a creation, `to` is ignored)
 *   73      …     data
 *
 * (viem's `opaqueDataToDepositData` reads only 1 as a creation; op-node reads any non-zero byte,
 * so the fields are sliced here.) Only successful receipts count. A log of the portal with this topic that does not fit is an
 * error, as in op-node (`UnmarshalDepositLogEvent`): its block cannot be derived.
 */
export const transactionDepositedEvent = parseAbiItem(
  'event TransactionDeposited(address indexed from, address indexed to, uint256 indexed version, bytes opaqueData)',
);
export const transactionDepositedTopic = toEventSelector(transactionDepositedEvent);

/** The parts of an L1 log derivation reads. `logIndex` is the log's index in its block. */
export interface L1Log {
  readonly address: Hex;
  readonly topics: readonly Hex[];
  readonly data: Hex;
  readonly logIndex: number;
}

/** The parts of an L1 receipt derivation reads. */
export interface L1Receipt {
  readonly status: 'success' | 'reverted';
  readonly logs: readonly L1Log[];
}

/** Where a log sits, for errors: "L1 block 0x… log 7". */
export interface L1LogPlace {
  readonly l1BlockHash: Hex;
  readonly l1BlockNumber?: bigint;
}

const placeOf = (place: L1LogPlace, log: L1Log) =>
  `L1 block ${place.l1BlockNumber === undefined ? '' : `${place.l1BlockNumber} `}${place.l1BlockHash} log ${log.logIndex}`;
const opaqueHeaderBytes = 64;
const version0FixedBytes = 32 + 32 + 8 + 1;

/**
 * The deposit one `TransactionDeposited` log stands for. Throws `DERIVE_DEPOSIT_INVALID` naming
 * the block, the log index and what does not fit.
 *
 * @example decodeDepositLog(receipt.logs[0], { l1BlockHash: header.hash })
 */
export function decodeDepositLog(log: L1Log, place: L1LogPlace): Deposit {
  const fail = (reason: string) => new FlashlogError('DERIVE_DEPOSIT_INVALID', `${placeOf(place, log)}: ${reason}`);
  if (log.topics.length !== 4) throw fail(`expected 4 topics (event, from, to, version), got ${log.topics.length}`);
  if (log.topics[0]!.toLowerCase() !== transactionDepositedTopic) throw fail(`topic 0 ${log.topics[0]} is not TransactionDeposited`);
  const dataBytes = size(log.data);
  if (dataBytes < opaqueHeaderBytes) throw fail(`opaqueData header needs 64 bytes, data has ${dataBytes}`);
  if (dataBytes % 32 !== 0) throw fail(`data of ${dataBytes} bytes is not a multiple of 32`);
  const offset = hexToBigInt(slice(log.data, 0, 32));
  if (offset !== 32n) throw fail(`opaqueData offset must be 32, got ${offset}`);
  const length = hexToBigInt(slice(log.data, 32, 64));
  const room = BigInt(dataBytes - opaqueHeaderBytes);
  // The ABI pads opaqueData to a 32-byte multiple: less than a word of padding, no more.
  if (length > room || length + 32n <= room) throw fail(`opaqueData length ${length} does not fit ${room} bytes after its header`);
  const [opaqueData] = decodeAbiParameters([{ type: 'bytes' }], log.data);
  const version = hexToBigInt(log.topics[3]!);
  if (version !== 0n) throw fail(`unknown deposit version ${version}`);
  if (size(opaqueData) < version0FixedBytes)
    throw fail(`version 0 opaqueData needs at least ${version0FixedBytes} bytes, got ${size(opaqueData)}`);
  const to = slice(log.topics[2]!, 12, 32);
  const isCreation = hexToBigInt(slice(opaqueData, 72, 73)) !== 0n;
  return {
    sourceHash: sourceHash(sourceDomain.userDeposit, place.l1BlockHash, BigInt(log.logIndex)),
    from: slice(log.topics[1]!, 12, 32),
    to: isCreation ? null : to,
    mint: hexToBigInt(slice(opaqueData, 0, 32)),
    value: hexToBigInt(slice(opaqueData, 32, 64)),
    gas: hexToBigInt(slice(opaqueData, 64, 72)),
    isSystemTx: false,
    data: size(opaqueData) === version0FixedBytes ? '0x' : slice(opaqueData, version0FixedBytes),
  };
}

/**
 * The user deposits of an L1 block, in log order: every `TransactionDeposited` log the portal
 * emitted in a successful receipt. Other contracts' logs, and the portal's other events, are not
 * deposits. One bad deposit log fails the whole block (`DERIVE_DEPOSIT_INVALID`), as op-node's
 * `DeriveDeposits` error is critical.
 *
 * @example userDeposits(receipts, rollup.depositContract, { l1BlockHash: header.hash })
 */
export function userDeposits(receipts: readonly L1Receipt[], portal: Hex, place: L1LogPlace): Deposit[] {
  const deposits: Deposit[] = [];
  const portalAddress = portal.toLowerCase();
  for (const receipt of receipts) {
    if (receipt.status !== 'success') continue;
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== portalAddress || log.topics[0]?.toLowerCase() !== transactionDepositedTopic) continue;
      deposits.push(decodeDepositLog(log, place));
    }
  }
  return deposits;
}
