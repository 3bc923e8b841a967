import { z } from 'zod';
import { errorMessage } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';

/** The latest block as node-status reads it, and the flashblocks rule's `pending` check. */
export interface Preconfirmations {
  readonly served: boolean;
  readonly pendingBlock: number | null;
}

const blockSchema = z.object({ number: z.string(), timestamp: z.string(), timestampMs: z.string().optional() }).loose();
export type Latest = { number: number; timestamp: number; timestampMs: number | null };

export async function readLatest(upstream: Upstream): Promise<Latest> {
  const block = blockSchema.parse(await upstream.call('eth_getBlockByNumber', ['latest', false]));
  return {
    number: Number(BigInt(block.number)),
    timestamp: Number(BigInt(block.timestamp)),
    timestampMs: block.timestampMs ? Number(BigInt(block.timestampMs)) : null,
  };
}

/** The flashblocks rule: `pending` newer than `latest` means the node serves pre-confirmations. */
export async function checkPending(node: Upstream, latestNumber: number, lines: string[]): Promise<Preconfirmations> {
  try {
    const pending = await node.call('eth_getBlockByNumber', ['pending', false]);
    const pendingBlock = pending === null ? null : Number(BigInt(blockSchema.parse(pending).number));
    const served = pendingBlock !== null && pendingBlock > latestNumber;
    lines.push(
      served
        ? `pre-confirmations: served (pending block ${pendingBlock} is ahead of latest ${latestNumber})`
        : `pre-confirmations: not served (pending ${pendingBlock === null ? 'is null' : `block ${pendingBlock} is not newer than latest ${latestNumber}`}); is the flashblocks websocket URL set on the node?`,
    );
    return { served, pendingBlock };
  } catch (error) {
    lines.push(`pre-confirmations: not served (eth_getBlockByNumber("pending") failed: ${errorMessage(error)})`);
    return { served: false, pendingBlock: null };
  }
}
