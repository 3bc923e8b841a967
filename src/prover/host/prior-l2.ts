import { numberToHex, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';
import { l1InfoCalldata, parseL1Info } from '../../op/l1-info.ts';
import { rawTransactions } from './witness-rpc.ts';
import { orderedTrieNodes } from '../../evm/receipts.ts';
import type { CallRpc } from '../../jsonrpc/protocol.ts';
import { headerRlpFromRpc, rpcHeaderSchema } from '../header-preimage.ts';

/**
 * The L2 blocks before the agreed one that derivation may check a span batch against (a span
 * batch that starts before the agreed block repeats the blocks it overlaps, and op-node requires
 * them to equal the safe chain's): every block back from the agreed one whose L1 origin is at or
 * after `fromL1Number` (the first L1 block the host collects, so no channel derivation can read
 * starts before them), down to the genesis block, at most `limit` blocks. Each as its header RLP and its transactions trie
 * nodes, keccak preimages the enclave walks back by parent hash (derive-range.ts). Read
 * `concurrency` blocks at a time.
 *
 * @example const values = await priorL2Blocks(l2, agreedNumber, 1_200n)
 */
export async function priorL2Blocks(
  l2: CallRpc,
  agreedNumber: bigint,
  fromL1Number: bigint,
  limit = 20_000,
  concurrency = 16,
): Promise<Hex[]> {
  const values: Hex[] = [];
  // Fetched `concurrency` blocks at a time (a window may fetch a few past where the walk stops).
  for (let top = agreedNumber - 1n, count = 0; top >= 0n && count < limit; top -= BigInt(concurrency)) {
    const numbers: bigint[] = [];
    for (let number = top; number >= 0n && numbers.length < concurrency && count + numbers.length < limit; number--) numbers.push(number);
    const raws = await Promise.all(numbers.map((number) => l2('eth_getBlockByNumber', [numberToHex(number), true])));
    for (const [i, number] of numbers.entries()) {
      count++;
      const where = `L2 block ${number}`;
      const raw = raws[i] as Record<string, unknown> | null;
      if (!raw) throw new FlashlogError('WITNESS_MISSING', `${where} not found on the L2 RPC`);
      const header = rpcHeaderSchema.safeParse(raw);
      if (!header.success) throw new FlashlogError('WITNESS_RPC', `${where}: ${header.error.issues[0]!.message}`);
      const transactions = rawTransactions(raw as { transactions: unknown[] }, number);
      if (transactions.length === 0) {
        // The genesis block (no L1-info deposit): its header, the parent a span batch from block 1 checks.
        values.push(headerRlpFromRpc(header.data, where));
        return values;
      }
      const origin = parseL1Info(l1InfoCalldata(transactions), `${where} L1-info deposit`).l1BlockNumber;
      values.push(headerRlpFromRpc(header.data, where), ...(await orderedTrieNodes(transactions)));
      if (origin === undefined || origin < fromL1Number) return values;
    }
  }
  return values;
}
