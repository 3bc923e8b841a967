import type { Observable } from 'rxjs';
import type { AssembledBlock } from '../chain/assemble.ts';
import type { GapReason } from '../chain/resume.ts';
import type { ExecutionOutput } from '../chain/execution-output.ts';
import type { SourceKind } from '../config/source-mode.ts';
import type { RpcLog } from '../records/logs.ts';
import type { RpcReceipt } from '../records/blocks.ts';

/**
 * The Source port: where pre-confirmations come from. Adapters: the flashblocks feed reconciled
 * with the upstream's canonical heads (`flashblocks.ts`, `canonical-heads.ts`) and the 200 ms
 * blocks of a node after Denim (`blocks.ts`); `create.ts` picks one by the source mode, and
 * streams/ingest.ts wires either into the log the same way. Every adapter speaks one tagged union
 * (and a flashblocks source reconciled with canonical heads reads one input, `SourceExecution`):
 *
 *   grew      a pre-confirmed block grew: new transactions, their receipts when known
 *   lifecycle a block became canonical (sealing its pre-confirmation, when one was held), safe or finalized
 *   replaced  a block held was replaced (a reorg): every log it published is withdrawn
 *   gap       blocks from..to will never be published (not backfilled within --max-backfill-blocks,
 *             or the node could not give them): said in the log, never left as silence
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
      /**
       * `canonical` only: the canonical block's transactions when it sealed the pre-confirmation
       * held for its height (a `sealed` record); absent when none was held (the feed missed it).
       */
      readonly sealedTransactions?: readonly `0x${string}`[];
    }
  | {
      readonly type: 'replaced';
      readonly blockNumber: bigint;
      /** The hash of the withdrawn block; null when the source never knew it (a flashblocks pre-confirmation). */
      readonly replacedHash: `0x${string}` | null;
      /** The block now at that height, when the new chain reaches it (else null). */
      readonly byHash: `0x${string}` | null;
      /** Its transactions, when known. */
      readonly transactions: readonly `0x${string}`[];
      readonly removedTransactions: readonly `0x${string}`[];
      /** The flashblock index of the withdrawn pre-confirmation (0 for a 200 ms block). */
      readonly index: number;
      /** Every log of the withdrawn block the new chain does not hold, as it was published (published again with `removed: true`). */
      readonly removedLogs: readonly RpcLog[];
    }
  | { readonly type: 'gap'; readonly from: bigint; readonly to: bigint; readonly reason: GapReason };

export interface Source {
  readonly kind: SourceKind;
  /** Never completes on its own; completes at shutdown. */
  readonly events$: Observable<SourceEvent>;
}

/**
 * An input of a source (`executions$`, src/source/create.ts): the execution of a `grew` block
 * that came without receipts, as it starts. A source that reconciles (a flashblocks chain with its
 * canonical heads) compares canonical blocks with what was executed, and waits for an execution in
 * flight; the others take no executions. The ingest topology emits one per execution it starts, the
 * wiring (streams/ingest.ts) hands them to the source; they are read while `events$` is subscribed.
 */
export interface SourceExecution {
  readonly block: AssembledBlock;
  /** The execution's receipts (and state diff) once it finishes. */
  readonly output: Promise<ExecutionOutput>;
}
