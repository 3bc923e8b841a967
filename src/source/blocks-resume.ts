import { toHex } from 'viem';
import type { LoggedBlock } from '../chain/resume.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { NodeReader, ReadBlock } from './node-reader.ts';
import type { SourceEvent } from './port.ts';

/**
 * Where a restarted blocks source (blocks.ts) takes up: the newest block the log holds that is
 * still the node's block at its height (a node may still answer a replaced block by hash, so the
 * height is asked). Blocks the log holds above it are gone from the node: withdrawn (`replaced`,
 * their logs as the log holds them). None of them on the node: the node's chain is checked first
 * (another chain throws), then all are withdrawn and the numbers from the oldest up to the first
 * block held are a gap. A log block above the node's head is passed over: the heads that follow settle it.
 */
export interface ResumePoint {
  /** The block to hold first, read from the node; null when none of the log's blocks is on the node. */
  readonly held: ReadBlock | null;
  readonly withdrawn: readonly SourceEvent[];
  /** When none was found: the oldest of the log's blocks, where a gap starts. */
  readonly gapFrom: bigint | null;
}

export async function findResumePoint(
  rpc: Upstream,
  reader: NodeReader,
  candidates: readonly LoggedBlock[],
  verifyChain: (() => Promise<void>) | undefined,
): Promise<ResumePoint> {
  const gone: LoggedBlock[] = [];
  for (const logged of candidates) {
    if (!logged.hash) continue;
    const atHeight = (await rpc.call('eth_getBlockByNumber', [toHex(logged.number), false])) as { hash?: string } | null;
    if (!atHeight?.hash) continue;
    const found = atHeight.hash.toLowerCase() === logged.hash.toLowerCase() ? await reader.read(logged.hash) : null;
    if (found) return { held: found, withdrawn: gone.map(withdrawnLogged), gapFrom: null };
    gone.push(logged);
  }
  if (gone.length === 0) return { held: null, withdrawn: [], gapFrom: null };
  await verifyChain?.();
  return { held: null, withdrawn: gone.map(withdrawnLogged), gapFrom: gone[gone.length - 1]!.number };
}

/** The `replaced` event of a block the log holds that the node no longer has (a restart across a reorg). */
function withdrawnLogged(logged: LoggedBlock): SourceEvent {
  return {
    type: 'replaced',
    blockNumber: logged.number,
    replacedHash: logged.hash,
    byHash: null,
    transactions: [],
    removedTransactions: [...logged.transactions],
    index: 0,
    removedLogs: logged.logs.map((log) => ({ ...log, removed: true })),
  };
}
