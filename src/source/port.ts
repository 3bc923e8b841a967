import type { Observable } from 'rxjs';
import type { AssembledBlock } from '../chain/assemble.ts';
import type { RpcLog } from '../records/logs.ts';
import type { RpcReceipt } from '../records/blocks.ts';

/**
 * The Source port: where pre-confirmations come from. Adapters: the flashblocks feed
 * (`flashblocks.ts`) and the 200 ms blocks of a node after Denim (`blocks.ts`); streams/ingest.ts
 * wires either into the log the same way. Every adapter speaks one tagged union:
 *
 *   grew      a pre-confirmed block grew: new transactions, their receipts when known
 *   lifecycle a block became canonical, safe or finalized
 *   replaced  a block held was replaced (a reorg): every log it published is withdrawn
 */
export type SourceEvent =
  | {
      readonly type: 'grew';
      readonly block: AssembledBlock;
      /** Receipts of block.transactions.slice(block.firstNew), in order; null when unknown. */
      readonly receipts: readonly RpcReceipt[] | null;
      /** When the source learned of the block (ms since the epoch), for latency. */
      readonly receivedAt: number;
      /** The feed's message as received (flashblocks only; flashlog.flashblocks carries it). */
      readonly message?: Record<string, unknown>;
    }
  | {
      readonly type: 'lifecycle';
      readonly level: 'canonical' | 'safe' | 'finalized';
      readonly blockNumber: bigint;
      readonly blockHash: `0x${string}`;
    }
  | {
      readonly type: 'replaced';
      readonly blockNumber: bigint;
      /** The hash of the withdrawn block. */
      readonly replacedHash: `0x${string}`;
      /** The block now at that height, when the new chain reaches it (else null). */
      readonly byHash: `0x${string}` | null;
      /** Its transactions, when known. */
      readonly transactions: readonly `0x${string}`[];
      readonly removedTransactions: readonly `0x${string}`[];
      /** Every log of the withdrawn block, as it was published, now with `removed: true`. */
      readonly removedLogs: readonly RpcLog[];
    };

export interface Source {
  readonly kind: 'flashblocks' | 'blocks';
  /** Never completes on its own; completes at shutdown. */
  readonly events$: Observable<SourceEvent>;
}
