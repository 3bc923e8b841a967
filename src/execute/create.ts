import type { AssembledBlock } from '../chain/assemble.ts';
import { ConfigError } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import type { Registry } from '../obs/metrics.ts';
import { ExecutionError } from './local.ts';
import { createMetadataExecutor } from './metadata.ts';
import type { ExecutionOutput, Executor } from './port.ts';

/**
 * Chooses the Executor adapter (`--executor`):
 * - `local`, `metadata`, `node`: that adapter.
 * - `auto` (the default): per block, `metadata` when the feed carries era A/B receipts, else
 *   `local` (created on first need, so a feed with receipts never loads EDR).
 * `local` and `node` need the upstream RPC (`--rpc`); `auto` without it can only use metadata.
 * EDR is imported only when `local` is used.
 */
export type ExecutorChoice = 'auto' | 'local' | 'metadata' | 'node';

export interface ExecutorDeps {
  readonly rpcUrl: string | undefined;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly stateDiff?: 'storage' | 'accounts' | 'full' | 'none';
  readonly hardfork?: string;
}

async function localExecutor(deps: ExecutorDeps, why: string): Promise<Executor> {
  if (!deps.rpcUrl) throw new ConfigError(`--rpc (FLASHLOG_RPC): ${why} needs the upstream RPC to fork state from; got nothing`);
  const { createLocalExecutor } = await import('./local.ts');
  return createLocalExecutor({
    upstreamUrl: deps.rpcUrl,
    timeoutMs: deps.timeoutMs,
    logger: deps.logger,
    metrics: deps.metrics,
    ...(deps.stateDiff ? { stateDiff: deps.stateDiff } : {}),
    ...(deps.hardfork ? { hardfork: deps.hardfork } : {}),
  });
}

export async function createExecutor(kind: ExecutorChoice, deps: ExecutorDeps): Promise<Executor> {
  switch (kind) {
    case 'local':
      return localExecutor(deps, '--executor local');
    case 'metadata':
      return createMetadataExecutor({ metrics: deps.metrics, logger: deps.logger });
    case 'node': {
      if (!deps.rpcUrl) throw new ConfigError('--rpc (FLASHLOG_RPC): --executor node needs a flashblocks-aware upstream RPC; got nothing');
      const { createNodeExecutor } = await import('./node.ts');
      return createNodeExecutor({ upstreamUrl: deps.rpcUrl, timeoutMs: deps.timeoutMs, metrics: deps.metrics });
    }
    case 'auto':
      return createAutoExecutor(deps);
  }
}

function createAutoExecutor(deps: ExecutorDeps): Executor {
  const metadata = createMetadataExecutor({ metrics: deps.metrics, logger: deps.logger });
  let local: Promise<Executor> | null = null;
  let last: Executor['kind'] = 'metadata';
  /** Whether the block being built started with metadata receipts; a block never switches adapter. */
  let blockUsesMetadata = new Map<bigint, boolean>();
  return {
    get kind() {
      return last;
    },
    async execute(block: AssembledBlock): Promise<ExecutionOutput> {
      let useMetadata = blockUsesMetadata.get(block.blockNumber);
      if (useMetadata === undefined || block.firstNew === 0) {
        // Era A/B feeds carry receipts from index 0 on (its deposits); `{}` there means no receipts.
        useMetadata = block.metadataReceipts !== null && (Object.keys(block.metadataReceipts).length > 0 || !deps.rpcUrl);
        blockUsesMetadata.set(block.blockNumber, useMetadata);
        if (blockUsesMetadata.size > 16) blockUsesMetadata = new Map([...blockUsesMetadata].slice(-8));
      }
      if (useMetadata) {
        last = 'metadata';
        return metadata.execute(block);
      }
      if (!deps.rpcUrl)
        throw new ExecutionError(
          `no receipts in the feed (era C, or the OP-specs format) and no --rpc to execute against (block ${block.blockNumber})`,
        );
      local ??= localExecutor(deps, 'executing era C flashblocks');
      last = 'local';
      return (await local).execute(block);
    },
    onCanonical(blockNumber) {
      void local?.then((executor) => executor.onCanonical?.(blockNumber));
    },
    onReorg(blockNumber) {
      metadata.onReorg?.(blockNumber);
      void local?.then((executor) => executor.onReorg?.(blockNumber));
    },
    async close() {
      await (await local)?.close();
    },
  };
}
