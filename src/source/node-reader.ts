import type { Hex } from 'viem';
import { z } from 'zod';
import type { AssembledBlock } from '../chain/assemble.ts';
import type { LinkedBlock } from '../chain/link.ts';
import { FlashlogError } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { RpcReceipt } from '../records/blocks.ts';
import { nodeBlockSchema, nodeReceiptsSchema, toAssembledBlock, toReceipts } from './node-block.ts';

/**
 * Reads one block from a node, complete: the block with its transactions, and its receipts
 * (`eth_getBlockReceipts`, falling back to one `eth_getTransactionReceipt` per transaction when
 * the node lacks the method). A receipts count that differs from the transactions count, or a
 * receipt of another transaction, is bad input: `BadBlockError` with its reason.
 */
export interface ReadBlock extends LinkedBlock {
  readonly block: AssembledBlock;
  readonly receipts: readonly RpcReceipt[];
}

export class BadBlockError extends FlashlogError {
  readonly reason: 'receipts_mismatch' | 'invalid_block';
  constructor(reason: 'receipts_mismatch' | 'invalid_block', message: string) {
    super(reason === 'receipts_mismatch' ? 'BLOCKS_RECEIPTS_MISMATCH' : 'BLOCKS_INVALID_BLOCK', message, { retryable: true });
    this.reason = reason;
  }
}

export interface NodeReader {
  /** A block by hash, by number (a bigint: the node's block at that height) or `latest`; null when the node does not know it. */
  read(id: Hex | 'latest' | bigint): Promise<ReadBlock | null>;
}

export function createNodeReader(rpc: Upstream): NodeReader {
  let blockReceipts = true;

  async function receiptsOf(hash: Hex, txs: readonly Hex[]): Promise<unknown> {
    if (blockReceipts) {
      try {
        return await rpc.call('eth_getBlockReceipts', [hash]);
      } catch (error) {
        // -32601 (no such method) and refusals of public endpoints: ask per transaction from now on.
        const code = (error as { rpcCode?: number }).rpcCode;
        if (code === undefined || (code === -32000 && /unreachable|did not answer/.test((error as Error).message))) throw error;
        blockReceipts = false;
      }
    }
    return Promise.all(txs.map((tx) => rpc.call('eth_getTransactionReceipt', [tx])));
  }

  return {
    async read(id) {
      // By hash with eth_getBlockReceipts known to work: block and receipts in one round trip.
      const early = typeof id === 'string' && id !== 'latest' && blockReceipts ? rpc.call('eth_getBlockReceipts', [id]) : undefined;
      early?.catch(() => undefined);
      const raw =
        typeof id === 'bigint'
          ? await rpc.call('eth_getBlockByNumber', [`0x${id.toString(16)}`, true])
          : id === 'latest'
            ? await rpc.call('eth_getBlockByNumber', ['latest', true])
            : await rpc.call('eth_getBlockByHash', [id, true]);
      if (raw === null) return null;
      const parsed = nodeBlockSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new BadBlockError('invalid_block', `block ${id}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
      }
      const block = parsed.data;
      const hashes = block.transactions.map((tx) => tx.hash.toLowerCase() as Hex);
      const receiptsRaw = early
        ? await early.catch(() => receiptsOf(block.hash as Hex, hashes))
        : await receiptsOf(block.hash as Hex, hashes);
      const receiptsParsed = nodeReceiptsSchema.safeParse(receiptsRaw ?? []);
      if (!receiptsParsed.success) {
        const issue = receiptsParsed.error.issues[0];
        throw new BadBlockError(
          'receipts_mismatch',
          `block ${block.number} ${block.hash}: receipts: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
        );
      }
      const receipts = receiptsParsed.data;
      if (receipts.length !== hashes.length || receipts.some((receipt, i) => receipt.transactionHash.toLowerCase() !== hashes[i])) {
        throw new BadBlockError(
          'receipts_mismatch',
          `block ${BigInt(block.number)} ${block.hash}: ${receipts.length} receipts for ${hashes.length} transactions`,
        );
      }
      const assembled = await toAssembledBlock(
        block,
        async (hash) => z.string().parse(await rpc.call('eth_getRawTransactionByHash', [hash])) as Hex,
      );
      return {
        number: BigInt(block.number),
        hash: block.hash.toLowerCase() as Hex,
        parentHash: block.parentHash.toLowerCase() as Hex,
        block: assembled,
        receipts: toReceipts(block, receipts),
      };
    },
  };
}
