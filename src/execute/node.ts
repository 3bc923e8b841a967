import { z } from 'zod';
import type { AssembledBlock } from '../chain/assemble.ts';
import { errorMessage } from '../errors.ts';
import { counter, type Registry } from '../obs/metrics.ts';
import { rpcLogSchema } from '../records/logs.ts';
import { rpcReceiptSchema, type RpcReceipt } from '../records/blocks.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import { ExecutionError } from './local.ts';
import type { ExecutionOutput, Executor } from './port.ts';
import { pendingReceipt } from './pending-receipt.ts';

/**
 * The `node` executor: receipts from a flashblocks-aware upstream (Base's node answers
 * eth_getTransactionReceipt for pre-confirmed transactions, blockHash zero). One JSON-RPC batch
 * per flashblock; the transactions whose receipt is not visible yet (null) are asked again with
 * backoff until `visibleWithinMs`. A receipt that names another block is an error: the upstream
 * and the feed disagree. Receipts are validated (rpcReceiptSchema) and get the pending shape.
 * No state diff.
 */
export interface NodeExecutorOptions {
  readonly upstreamUrl: string;
  readonly timeoutMs: number;
  readonly metrics: Registry;
  /** How long a receipt may take to become visible upstream (default 5000 ms). */
  readonly visibleWithinMs?: number;
  /** Most receipts per batch request (default 100). */
  readonly batchSize?: number;
}

/** An upstream's receipt: logs may lack blockTimestamp and removed (older nodes); the pending shape adds them. */
const upstreamReceiptSchema = rpcReceiptSchema.extend({ logs: z.array(rpcLogSchema.partial({ blockTimestamp: true, removed: true })) });

export function createNodeExecutor(options: NodeExecutorOptions): Executor {
  const visibleWithinMs = options.visibleWithinMs ?? 5000;
  const batchSize = options.batchSize ?? 100;
  const retries = counter(
    options.metrics,
    'flashlog_executor_node_retries_total',
    'receipt batches asked again because some receipts were not visible yet',
  );
  const upstream = createUpstream(options.upstreamUrl, { timeoutMs: options.timeoutMs, namedErrors: true });

  async function batch(hashes: readonly string[]): Promise<Map<string, Record<string, unknown> | null>> {
    const out = new Map<string, Record<string, unknown> | null>();
    for (let start = 0; start < hashes.length; start += batchSize) {
      const slice = hashes.slice(start, start + batchSize);
      const items = await upstream
        .batch(slice.map((hash) => ({ method: 'eth_getTransactionReceipt', params: [hash] })))
        .catch((error: unknown) => {
          throw new ExecutionError(`receipt batch: ${errorMessage(error)}`, { retryable: true, cause: error });
        });
      slice.forEach((hash, i) => {
        const item = items[i]!;
        if ('error' in item) throw new ExecutionError(`${item.error.message} (${hash})`, { retryable: true, cause: item.error });
        out.set(hash, (item.result ?? null) as Record<string, unknown> | null);
      });
    }
    return out;
  }

  return {
    kind: 'node',
    async execute(block: AssembledBlock): Promise<ExecutionOutput> {
      const where = `block ${block.blockNumber} index ${block.index}`;
      const hashes = block.transactions.slice(block.firstNew).map((tx) => tx.hash);
      const found = new Map<string, Record<string, unknown>>();
      const deadline = Date.now() + visibleWithinMs;
      let delayMs = 25;
      for (;;) {
        const missing = hashes.filter((hash) => !found.has(hash));
        if (missing.length === 0) break;
        try {
          for (const [hash, receipt] of await batch(missing)) if (receipt) found.set(hash, receipt);
        } catch (error) {
          if (Date.now() > deadline) throw error;
        }
        if (hashes.every((hash) => found.has(hash))) break;
        if (Date.now() > deadline) {
          throw new ExecutionError(
            `${where}: ${hashes.length - found.size} receipt(s) not visible upstream within ${visibleWithinMs} ms (first: ${hashes.find((hash) => !found.has(hash))})`,
            { retryable: true },
          );
        }
        retries.inc();
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = Math.min(delayMs * 2, 500);
      }
      const receipts: RpcReceipt[] = hashes.map((hash, offset) => {
        const raw = found.get(hash)!;
        const parsed = upstreamReceiptSchema.safeParse(raw);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new ExecutionError(
            `${where}: upstream receipt of ${hash}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? errorMessage(parsed.error)}`,
          );
        }
        if (BigInt(parsed.data.blockNumber) !== block.blockNumber) {
          throw new ExecutionError(`${where}: upstream says ${hash} is in block ${BigInt(parsed.data.blockNumber)}`);
        }
        if (BigInt(parsed.data.transactionIndex) !== BigInt(block.firstNew + offset)) {
          throw new ExecutionError(
            `${where}: upstream says ${hash} is at position ${BigInt(parsed.data.transactionIndex)}, the feed at ${block.firstNew + offset}`,
          );
        }
        return pendingReceipt(raw, block);
      });
      return { receipts, stateDiff: null };
    },
    async close() {},
  };
}
