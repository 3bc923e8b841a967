import type { Hex } from 'viem';
import { FlashlogError } from '../errors.ts';

/**
 * The EIP-2718 transaction types flashlog reads and executes: legacy (any first byte from 0xc0,
 * read as 0x00), EIP-2930 (0x01), EIP-1559 (0x02), EIP-4844 (0x03), EIP-7702 (0x04), OP's
 * deposit (0x7e) and Lagoon's post-execution transaction (0x7d, src/op/post-exec.ts). Any other
 * type byte (Base's 0x79 "Base Transactions", whatever comes next) is unknown: the log keeps it as the source
 * gave it and the gateway serves what it can read without the type (src/rpc/format.ts), and the
 * executor refuses a block holding one (below). It is an invariant that this set is the one place
 * that says which types are known.
 */
export const knownTxTypes: ReadonlySet<number> = new Set([0x00, 0x01, 0x02, 0x03, 0x04, 0x7d, 0x7e]);

/**
 * The type byte of a typed transaction not in {@link knownTxTypes}; undefined for a known one or a
 * legacy one (EIP-2718: a first byte in [0x00, 0x7f] is the type, one from 0xc0 starts a legacy
 * RLP list).
 *
 * @example unknownTxType('0x79f8…') // 0x79
 */
export function unknownTxType(raw: string): number | undefined {
  const first = Number.parseInt(raw.slice(2, 4), 16);
  return first <= 0x7f && !knownTxTypes.has(first) ? first : undefined;
}

/**
 * Refuses a block holding a transaction of a type flashlog cannot execute, by name: the block,
 * the type and the transaction's index. Checked before any state is read, so `execute-block` and
 * the enclave (which re-executes through the same executor, src/prover/enclave/reexecute.ts) say
 * what they cannot prove instead of failing inside the EVM.
 *
 * @example refuseUnknownTxTypes(123n, ['0x7ef8…', '0x79f8…']) // throws TX_TYPE_UNSUPPORTED "block 123: transaction 1 has type 0x79…"
 */
export function refuseUnknownTxTypes(number: bigint, transactions: readonly Hex[]): void {
  for (const [index, raw] of transactions.entries()) {
    const type = unknownTxType(raw);
    if (type !== undefined)
      throw new FlashlogError(
        'TX_TYPE_UNSUPPORTED',
        `block ${number}: transaction ${index} has type 0x${type.toString(16).padStart(2, '0')}, which flashlog does not know how to execute (known: 0x00-0x04, 0x7d, 0x7e)`,
      );
  }
}
