import { parseAbiItem, toEventSelector, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import type { ReceiptLog } from '../receipts.ts';

/**
 * What marks an executing cross-chain message in an OP block once interop is on (Lagoon turns it on
 * between OP Mainnet and Unichain). From ethereum-optimism/specs @fd72cf79 `specs/interop/predeploys.md`
 * (§ CrossL2Inbox: "Execution of messages is statically pre-declared in transactions" by typed
 * access-list entries on the CrossL2Inbox address; § `ExecutingMessage` Event: emitted on every
 * `validateMessage`) and `specs/interop/messaging.md` (the `Identifier` struct).
 *
 * A single-chain re-execution cannot tell such a block valid: the message is valid only if the
 * initiating log exists on the other chain (and a block with an invalid one is replaced by a
 * deposits-only block, interop/derivation.md), which needs the other chain's data and the super
 * root transition (interop/fault-proof.md). So the enclave refuses such a range by name instead of
 * signing an output root it did not prove.
 */
export const crossL2Inbox = '0x4200000000000000000000000000000000000022' as const;
export const executingMessageTopic: Hex = toEventSelector(
  parseAbiItem(
    'event ExecutingMessage(bytes32 indexed msgHash, (address origin, uint256 blockNumber, uint256 logIndex, uint256 timestamp, uint256 chainId) identifier)',
  ),
);

export interface CrossChainMessageMark {
  /** Transaction index in the block. */
  readonly index: number;
  readonly by: 'access list' | 'ExecutingMessage log';
}

/**
 * The transactions of a block that execute (or declare) a cross-chain message: a CrossL2Inbox entry
 * in the access list of a typed transaction, or an `ExecutingMessage` log of the CrossL2Inbox in its
 * receipt. Deposits carry no access list; the post-exec transaction (0x7d) neither.
 *
 * @example crossChainMessagesIn(attributes.transactions, executed.receipts) // [{ index: 3, by: 'access list' }]
 */
export function crossChainMessagesIn(
  transactions: readonly Hex[],
  receipts: readonly { readonly logs: readonly ReceiptLog[] }[],
): CrossChainMessageMark[] {
  const marks: CrossChainMessageMark[] = [];
  for (const [index, raw] of transactions.entries()) {
    const type = raw.slice(0, 4).toLowerCase();
    if (['0x01', '0x02', '0x03', '0x04'].includes(type)) {
      const accessList = (parseTransaction(raw) as { accessList?: readonly { address: string }[] }).accessList ?? [];
      if (accessList.some((entry) => entry.address.toLowerCase() === crossL2Inbox)) {
        marks.push({ index, by: 'access list' });
        continue;
      }
    }
    const logs = receipts[index]?.logs ?? [];
    if (logs.some((log) => log.address.toLowerCase() === crossL2Inbox && log.topics[0]?.toLowerCase() === executingMessageTopic))
      marks.push({ index, by: 'ExecutingMessage log' });
  }
  return marks;
}
