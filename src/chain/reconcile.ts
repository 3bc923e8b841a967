import type { ChainRecord } from '../records/chain.ts';
import type { LogRecordValue, RpcLog } from '../records/logs.ts';

/**
 * Reconciliation of pre-confirmed blocks with canonical ones, as Base's node does it
 * (base/base `crates/execution/flashblocks/src/validation.rs`): detection is by the ordered list of
 * transaction hashes only, because a flashblock's block_hash is not the canonical hash on Base.
 *
 *   canonical N, tx hashes == pre-confirmed N  -> sealed (with the canonical hash)
 *   canonical N, tx hashes != pre-confirmed N  -> reorg, then a `removed: true` copy of every
 *                                                 pre-confirmed log of N the canonical block
 *                                                 does not hold (same tx, index, position, content)
 *   canonical N, N never pre-confirmed         -> nothing (the feed missed it)
 *
 * Pending blocks at or below canonical are dropped; at most `maxPending` stay above it (the
 * oldest go first). A pure reducer: `reconcileStep(state, input)` returns the next state and what
 * to publish; fetching and publishing are the caller's.
 */
export interface UnsealedBlock {
  readonly blockNumber: bigint;
  /** The last flashblock index seen. */
  readonly index: number;
  /** Every pre-confirmed transaction hash, in order. */
  readonly transactions: readonly `0x${string}`[];
  /** Every log published for the block so far, in order. */
  readonly logs: readonly RpcLog[];
}

export interface ReconcileState {
  readonly canonical: bigint | null;
  /** Pending blocks above canonical, by number. */
  readonly pending: ReadonlyMap<bigint, UnsealedBlock>;
  readonly maxPending: number;
}

export interface CanonicalBlock {
  readonly number: bigint;
  readonly hash: `0x${string}`;
  readonly transactions: readonly `0x${string}`[];
  /** The canonical block's logs; needed only when the transactions differ (see `needsLogs`). */
  readonly logs?: readonly RpcLog[];
}

export type ReconcileInput =
  | {
      readonly type: 'preconfirmed';
      readonly blockNumber: bigint;
      readonly index: number;
      readonly transactions: readonly `0x${string}`[];
      readonly newLogs: readonly RpcLog[];
      readonly firstNew: number;
    }
  | { readonly type: 'canonical'; readonly block: CanonicalBlock };

export type ReconcileEvent =
  | { readonly type: 'sealed'; readonly record: ChainRecord }
  | {
      readonly type: 'reorg';
      readonly record: ChainRecord;
      /** The flashblock index of the withdrawn pre-confirmation (each removed copy carries it). */
      readonly index: number;
      readonly removedLogs: readonly LogRecordValue[];
    }
  | { readonly type: 'dropped'; readonly blockNumber: bigint; readonly reason: 'depth' | 'stale' };

export const initialReconcileState = (maxPending = 3): ReconcileState => ({ canonical: null, pending: new Map(), maxPending });

const hex = (value: bigint) => `0x${value.toString(16)}` as const;
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((hash, i) => hash.toLowerCase() === b[i]!.toLowerCase());

/** Whether reconciling canonical `block` needs its logs: only when its transactions differ. */
export function needsLogs(state: ReconcileState, block: Pick<CanonicalBlock, 'number' | 'transactions'>): boolean {
  const pending = state.pending.get(block.number);
  return pending !== undefined && !sameList(pending.transactions, block.transactions);
}

const logKey = (log: RpcLog) =>
  [log.transactionHash, BigInt(log.transactionIndex), BigInt(log.logIndex), log.address, ...log.topics, log.data]
    .map((part) => String(part).toLowerCase())
    .join('|');

export function reconcileStep(state: ReconcileState, input: ReconcileInput): { state: ReconcileState; events: ReconcileEvent[] } {
  if (input.type === 'preconfirmed') {
    if (state.canonical !== null && input.blockNumber <= state.canonical) {
      return { state, events: [{ type: 'dropped', blockNumber: input.blockNumber, reason: 'stale' }] };
    }
    const pending = new Map(state.pending);
    const known = pending.get(input.blockNumber);
    // A flashblock that starts the block over (index 0, or a rebuild from transaction 0) resets it.
    const keep = known && input.firstNew > 0 ? known.logs : [];
    pending.set(input.blockNumber, {
      blockNumber: input.blockNumber,
      index: input.index,
      transactions: input.transactions,
      logs: [...keep, ...input.newLogs],
    });
    const events: ReconcileEvent[] = [];
    const numbers = [...pending.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    while (numbers.length > state.maxPending) {
      const oldest = numbers.shift()!;
      pending.delete(oldest);
      events.push({ type: 'dropped', blockNumber: oldest, reason: 'depth' });
    }
    return { state: { ...state, pending }, events };
  }

  const block = input.block;
  if (state.canonical !== null && block.number <= state.canonical) return { state, events: [] };
  const pending = new Map(state.pending);
  const events: ReconcileEvent[] = [];
  const preconfirmed = pending.get(block.number);
  for (const number of [...pending.keys()]) if (number <= block.number) pending.delete(number);
  const next: ReconcileState = { ...state, canonical: block.number, pending };
  if (!preconfirmed) return { state: next, events };

  const transactions = block.transactions.map((hash) => hash.toLowerCase() as `0x${string}`);
  if (sameList(preconfirmed.transactions, transactions)) {
    events.push({ type: 'sealed', record: { v: 1, type: 'sealed', blockNumber: hex(block.number), blockHash: block.hash, transactions } });
    return { state: next, events };
  }
  const canonicalTxs = new Set(transactions);
  const removedTransactions = preconfirmed.transactions.filter((hash) => !canonicalTxs.has(hash.toLowerCase() as `0x${string}`));
  const surviving = new Set((block.logs ?? []).map(logKey));
  const removedLogs: LogRecordValue[] = preconfirmed.logs
    .filter((log) => !surviving.has(logKey(log)))
    .map((log) => ({ v: 1, index: preconfirmed.index, ...log, removed: true }));
  events.push({
    type: 'reorg',
    record: { v: 1, type: 'reorg', blockNumber: hex(block.number), blockHash: block.hash, transactions, removedTransactions },
    index: preconfirmed.index,
    removedLogs,
  });
  return { state: next, events };
}
