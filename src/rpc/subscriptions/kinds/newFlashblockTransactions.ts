import { z } from 'zod';
import type { RpcLog } from '../../../records/logs.ts';
import type { PendingBlock } from '../../../view/state.ts';
import type { TransactionFormatter } from '../../format.ts';
import { choose, matchesFilter, type LogFilter } from '../../params.ts';
import { defineKind } from '../kind.ts';
import { logFilterSchema } from '../kind-params.ts';

/**
 * `newFlashblockTransactions` [false | true | {address, topics}] (Base's kind): one notification per
 * new transaction: its hash (false, the default), or (true) the transaction object with its
 * receipt's `gasUsed`, `status`, `cumulativeGasUsed`, `contractAddress`, `logsBloom` and all its
 * `logs`, or (a filter, as Base's node takes it) that full object for the transactions one of whose
 * logs matches the filter, still with all their logs.
 */
const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
const fullOrNot = z.boolean({ error: 'expected false, true or a filter {address, topics}' }).nullish();
const params = z
  .tuple([
    z.literal('newFlashblockTransactions'),
    choose<LogFilter | boolean | null | undefined>((option) => (isObject(option) ? logFilterSchema : fullOrNot)),
  ])
  .rest(z.unknown())
  .transform(([, option]) => ({
    full: option === true || (typeof option === 'object' && option !== null),
    txFilter: typeof option === 'object' && option !== null ? option : null,
  }));

export const newFlashblockTransactions = defineKind({
  name: 'newFlashblockTransactions',
  params,
  reads: () => 'flashblocks',
  async flashblock({ block, firstNew, newLogs }, subscribers, out) {
    const anyFull = [...subscribers].some((sub) => sub.options.full);
    for (let position = firstNew; position < block.transactions.length; position++) {
      const tx = block.transactions[position]!;
      const hashJson = JSON.stringify(tx.hash);
      const logs = newLogs.filter((log) => log.transactionHash.toLowerCase() === tx.hash.toLowerCase());
      const fullJson = anyFull ? JSON.stringify(await fullTransaction(out.formatter, block, position, logs)) : '';
      for (const sub of subscribers) {
        const { full, txFilter } = sub.options;
        if (!full) out.send(sub, hashJson);
        else if (!txFilter || logs.some((log) => matchesFilter(log, txFilter))) out.send(sub, fullJson);
      }
    }
  },
});

/** A full transaction as Base's node sends it: the transaction, its receipt's outcome, all its logs. */
async function fullTransaction(
  formatter: TransactionFormatter,
  block: PendingBlock,
  position: number,
  logs: readonly RpcLog[],
): Promise<Record<string, unknown>> {
  const receipt = block.receipts[position];
  const outcome = receipt
    ? {
        gasUsed: receipt.gasUsed,
        status: receipt.status,
        cumulativeGasUsed: receipt.cumulativeGasUsed,
        contractAddress: receipt.contractAddress,
        logsBloom: receipt.logsBloom,
      }
    : {};
  return { ...(await formatter.transaction(block, position)), ...outcome, logs };
}
