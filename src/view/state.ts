import type { LogRecord } from '../log/port.ts';
import { topics } from '../records/topics.ts';
import { isBlockRecordValue } from '../records/blocks.ts';
import { isLogRecordText, isLogRecordValue } from '../records/logs.ts';
import { blockRecordSchema, type AccountDiff, type BlockRecord, type PendingHeader, type RpcReceipt } from '../records/blocks.ts';
import { chainRecordSchema, type ChainRecord } from '../records/chain.ts';
import { logRecordSchema, type RpcLog } from '../records/logs.ts';
import { withOpGasRefunds, type PendingPostExecTx } from './post-exec.ts';

/**
 * The materialized view: the pre-confirmed blocks above the canonical head, as a pure reducer over
 * the records of flashlog.blocks, flashlog.logs and flashlog.chain (plus canonical head numbers
 * observed at the upstream). The RPC reads nothing else.
 *
 * It is an invariant that the final state does not depend on how records of different topics
 * interleave: a block record at or below the canonical head is ignored, and a canonical head drops
 * every block at or below it. So a replay (topic by topic) and the live feed converge.
 */

/** One pre-confirmed block, as of its latest flashblock. */
export interface PendingBlock {
  readonly number: bigint;
  /** Index of the latest flashblock applied. */
  readonly index: number;
  readonly payloadId: string;
  readonly header: PendingHeader;
  /** `rpc`: the node's JSON of a transaction of a type flashlog does not know (blocks source). */
  readonly transactions: readonly { readonly hash: `0x${string}`; readonly raw: `0x${string}`; readonly rpc?: Record<string, unknown> }[];
  /** Position of each transaction by lower-case hash. */
  readonly positionByHash: ReadonlyMap<string, number>;
  /** Receipts of transactions [0, receipts.length); shorter than transactions when no executor ran. */
  readonly receipts: readonly RpcReceipt[];
  /** Every log of `receipts`, in block order. */
  readonly logs: readonly RpcLog[];
  /** The same logs by lower-case emitting address, in block order (address-filtered reads). */
  readonly logsByAddress: ReadonlyMap<string, readonly RpcLog[]>;
  /** Touched accounts (lower-case address) after the block so far; null when unknown. */
  readonly stateDiff: Readonly<Record<string, AccountDiff>> | null;
  /**
   * Lagoon: the block's post-exec transaction (0x7d) as of the latest subblock, served after
   * `transactions` (at position `transactions.length`); null without one (src/view/post-exec.ts).
   */
  readonly postExecTx?: PendingPostExecTx | null;
}

/** What the latest input changed, for subscriptions. Only the delta of the latest flashblock. */
export type ViewChange =
  | {
      readonly type: 'flashblock';
      readonly block: PendingBlock;
      readonly firstNew: number;
      readonly newLogs: readonly RpcLog[];
      /** Blocks source: the logs of the block this one replaced at its height, `removed: true` (sent first). */
      readonly removedLogs?: readonly RpcLog[];
    }
  | { readonly type: 'removed'; readonly blockNumber: bigint; readonly logs: readonly RpcLog[] }
  | { readonly type: 'canonical'; readonly blockNumber: bigint }
  | { readonly type: 'none' };

export interface ViewState {
  /** Highest canonical block number known (from flashlog.chain or the upstream head); -1n if none. */
  readonly canonical: bigint;
  /** Pending blocks above `canonical`, ascending by number, at most `maxPendingBlocks`. */
  readonly blocks: readonly PendingBlock[];
  /**
   * The last blocks dropped because they became canonical (at most `maxPendingBlocks`), so a reorg
   * record that arrives after the upstream head moved on still finds the logs to withdraw.
   */
  readonly dropped: readonly PendingBlock[];
  /** Next offset to read per `topic/partition`: what the view has applied. */
  readonly offsets: Readonly<Record<string, bigint>>;
  /** Records applied, and records rejected by their schema. */
  readonly applied: number;
  readonly invalid: number;
  /** Last reason a record was rejected, naming the field. */
  readonly lastInvalid: string | null;
  readonly change: ViewChange;
  /** Increments on every input, so observers can tell a new state from a replayed one. */
  readonly seq: number;
}

/** Inputs of the reducer: a record of the log, or a canonical head seen at the upstream. */
export type ViewInput = { readonly type: 'record'; readonly record: LogRecord } | { readonly type: 'head'; readonly blockNumber: bigint };

export const maxPendingBlocks = 3;

export function initialViewState(): ViewState {
  return {
    canonical: -1n,
    blocks: [],
    dropped: [],
    offsets: {},
    applied: 0,
    invalid: 0,
    lastInvalid: null,
    change: { type: 'none' },
    seq: 0,
  };
}

/**
 * Applies one input. Pure: the same inputs give the same state.
 * @example const state = records.reduce((s, record) => apply(s, { type: 'record', record }), initialViewState());
 */
export function apply(state: ViewState, input: ViewInput): ViewState {
  const seq = state.seq + 1;
  if (input.type === 'head') return { ...advanceCanonical(state, input.blockNumber), seq };
  const { record } = input;
  const offsets = { ...state.offsets, [`${record.topic}/${record.partition}`]: record.offset + 1n };
  // The view needs no log record's content (see below), only its verdict: most are judged valid
  // from their text, without parsing them.
  if (record.topic === topics.logs && isLogRecordText(record.value))
    return { ...state, offsets, seq, change: noChange, applied: state.applied + 1 };
  const base: ViewState = { ...state, offsets, seq, change: noChange };
  let value: unknown;
  try {
    value = JSON.parse(record.value);
  } catch {
    return invalid(base, `${record.topic}@${record.offset}: value is not JSON`);
  }
  if (record.topic === topics.blocks) {
    const parsed = parseBlockRecord(state, value);
    if (!parsed.success) return invalid(base, describeIssue(record, parsed.error.issues[0]));
    return { ...applyBlock(base, parsed.data), applied: state.applied + 1 };
  }
  if (record.topic === topics.chain) {
    const parsed = chainRecordSchema.safeParse(value);
    if (!parsed.success) return invalid(base, describeIssue(record, parsed.error.issues[0]));
    return { ...applyChain(base, parsed.data), applied: state.applied + 1 };
  }
  if (record.topic === topics.logs) {
    // Live logs arrive inside their block's receipts; removed logs are derived from the reorg record,
    // which names the dropped transactions. The log records are still validated and counted (the
    // schema is asked only when the fast check says no, for the reason or a yes after all).
    if (!isLogRecordValue(value)) {
      const parsed = logRecordSchema.safeParse(value);
      if (!parsed.success) return invalid(base, describeIssue(record, parsed.error.issues[0]));
    }
    return { ...base, applied: state.applied + 1 };
  }
  return base;
}

const noChange: ViewChange = { type: 'none' };

/**
 * Validates a block record. A record that continues the block the view holds repeats that block's
 * transactions before `firstNew`; when they are the same strings as the ones already validated,
 * only the new ones go through the schema (a block record carries every transaction so far, so
 * validating all of them again made replay quadratic in a block's flashblocks).
 */
function parseBlockRecord(
  state: ViewState,
  value: unknown,
): { success: true; data: BlockRecord } | ReturnType<typeof blockRecordSchema.safeParse> {
  const held = reusablePrefix(state, value);
  // The fast check first (src/records/fast-check.ts): a yes means the schema accepts the value as it is.
  if (isBlockRecordValue(value, held === undefined ? 0 : (value as { firstNew: number }).firstNew)) {
    const data = value as BlockRecord;
    if (held !== undefined) {
      for (let i = 0; i < data.firstNew; i++) data.transactions[i] = held[i]!;
    }
    return { success: true, data };
  }
  if (held === undefined) return blockRecordSchema.safeParse(value);
  const record = value as { transactions: unknown[]; firstNew: number };
  const parsed = blockRecordSchema.safeParse({ ...record, transactions: record.transactions.slice(record.firstNew) });
  // A rejected record is validated whole again, so the reason names the transaction's own index.
  if (!parsed.success) return blockRecordSchema.safeParse(value);
  parsed.data.transactions = [...held.slice(0, record.firstNew), ...parsed.data.transactions];
  return parsed;
}

function reusablePrefix(state: ViewState, value: unknown): PendingBlock['transactions'] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { blockNumber, payloadId, firstNew, transactions } = value as Record<string, unknown>;
  if (
    typeof firstNew !== 'number' ||
    !Number.isInteger(firstNew) ||
    firstNew <= 0 ||
    !Array.isArray(transactions) ||
    transactions.length < firstNew
  )
    return undefined;
  if (typeof blockNumber !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(blockNumber)) return undefined;
  const number = BigInt(blockNumber);
  const previous = state.blocks.find((block) => block.number === number && block.payloadId === payloadId);
  if (previous === undefined || previous.transactions.length < firstNew) return undefined;
  for (let i = 0; i < firstNew; i++) {
    const tx = transactions[i] as { hash?: unknown; raw?: unknown } | null;
    const known = previous.transactions[i]!;
    if (tx === null || typeof tx !== 'object' || tx.hash !== known.hash || tx.raw !== known.raw) return undefined;
  }
  return previous.transactions;
}

function invalid(state: ViewState, reason: string): ViewState {
  return { ...state, invalid: state.invalid + 1, lastInvalid: reason };
}

function describeIssue(record: LogRecord, issue: { path: readonly PropertyKey[]; message: string } | undefined): string {
  const where = issue?.path.length ? issue.path.map(String).join('.') : '(root)';
  return `${record.topic}@${record.offset}: ${where}: ${issue?.message ?? 'invalid'}`;
}

function applyBlock(state: ViewState, record: BlockRecord): ViewState {
  const number = BigInt(record.blockNumber);
  if (number <= state.canonical) return state;
  const previous = state.blocks.find((block) => block.number === number);
  // A record for the same block that continues the one we hold extends it; index 0, a rebuild
  // (firstNew back at 0) or a different payload replaces it.
  const continues =
    previous !== undefined &&
    previous.payloadId === record.payloadId &&
    record.firstNew > 0 &&
    record.firstNew <= previous.transactions.length &&
    record.index > previous.index;
  if (previous !== undefined && previous.payloadId === record.payloadId && record.index <= previous.index && record.firstNew > 0) {
    return state; // a duplicate or an older flashblock of the block we hold
  }
  const keptReceipts = continues ? previous.receipts.slice(0, record.firstNew) : [];
  const newReceipts = record.receipts ?? [];
  // Receipts are only kept while they cover a prefix of the transactions.
  const receipts = keptReceipts.length === record.firstNew ? [...keptReceipts, ...newReceipts] : keptReceipts;
  const newLogs = keptReceipts.length === record.firstNew ? newReceipts.flatMap((receipt) => receipt.logs) : [];
  const keptLogs = continues ? previous.logs.filter((log) => Number(log.transactionIndex) < record.firstNew) : [];
  // A flashblock that keeps every transaction and log of the block held extends its indexes (copies:
  // the previous state stays as it was); otherwise they are built again.
  const extending = continues && record.firstNew === previous.transactions.length && keptLogs.length === previous.logs.length;
  const positionByHash = extending ? new Map(previous.positionByHash) : new Map<string, number>();
  for (let position = extending ? record.firstNew : 0; position < record.transactions.length; position++) {
    positionByHash.set(record.transactions[position]!.hash.toLowerCase(), position);
  }
  const logs = [...keptLogs, ...newLogs];
  const logsByAddress = new Map<string, RpcLog[]>();
  if (extending) for (const [address, list] of previous.logsByAddress) logsByAddress.set(address, [...list]);
  for (const log of extending ? newLogs : logs) {
    const key = log.address.toLowerCase();
    const list = logsByAddress.get(key);
    if (list) list.push(log);
    else logsByAddress.set(key, [log]);
  }
  const block: PendingBlock = {
    number,
    index: record.index,
    payloadId: record.payloadId,
    header: record.header,
    transactions: record.transactions as PendingBlock['transactions'],
    positionByHash,
    receipts: withOpGasRefunds(receipts, record.postExecTx as PendingPostExecTx | null | undefined, Boolean(previous?.postExecTx)),
    logs,
    logsByAddress,
    stateDiff: record.stateDiff ? lowerKeys(record.stateDiff) : continues ? previous.stateDiff : null,
    postExecTx: (record.postExecTx as PendingPostExecTx | null | undefined) ?? null,
  };
  const others = state.blocks.filter((candidate) => candidate.number !== number);
  const blocks = [...others, block].sort((a, b) => (a.number < b.number ? -1 : 1)).slice(-maxPendingBlocks);
  // Blocks source: a block with another hash at a height held replaces it, whichever of it and
  // its reorg record comes first (topics interleave freely): its logs are withdrawn here, once.
  const previousHash = previous ? hashOf(previous) : undefined;
  const replaced = previousHash !== undefined && hashOf(block) !== undefined && previousHash !== hashOf(block);
  const removedLogs = replaced ? previous!.logs.map((log) => ({ ...log, removed: true })) : [];
  return {
    ...state,
    blocks,
    change: { type: 'flashblock', block, firstNew: continues ? record.firstNew : 0, newLogs, ...(replaced ? { removedLogs } : {}) },
  };
}

/** A 200 ms block's hash (blocks source); undefined for a flashblocks block. */
function hashOf(block: PendingBlock): string | undefined {
  return (block.header as { hash?: string }).hash?.toLowerCase();
}

function lowerKeys(diff: Record<string, AccountDiff>): Record<string, AccountDiff> {
  const out: Record<string, AccountDiff> = {};
  for (const [address, account] of Object.entries(diff)) out[address.toLowerCase()] = account;
  return out;
}

function applyChain(state: ViewState, record: ChainRecord): ViewState {
  const number = BigInt(record.blockNumber);
  if (record.type === 'sealed') return advanceCanonical(state, number);
  // Safe and finalized are for consumers choosing a confirmation level; pending is unaffected.
  // A gap names blocks that will never come; nothing held changes.
  if (record.type === 'safe' || record.type === 'finalized' || record.type === 'gap') return state;
  if (record.replacedBlockHash !== undefined) return replaceUnsafe(state, number, record.replacedBlockHash);
  // A reorg: the pre-confirmed logs of the dropped transactions are withdrawn.
  const block =
    state.blocks.find((candidate) => candidate.number === number) ?? state.dropped.find((candidate) => candidate.number === number);
  const dropped = new Set(record.removedTransactions.map((hash) => hash.toLowerCase()));
  const removed = (block?.logs ?? [])
    .filter((log) => dropped.has(log.transactionHash.toLowerCase()))
    .map((log) => ({ ...log, removed: true }));
  const advanced = advanceCanonical(state, number);
  // Withdrawn once: the block is forgotten so a repeated reorg record withdraws nothing more.
  const forgotten = advanced.dropped.filter((candidate) => candidate.number !== number);
  return { ...advanced, dropped: forgotten, change: { type: 'removed', blockNumber: number, logs: removed } };
}

/**
 * Blocks source: the unsafe block at `number` (and any above it) was replaced. Its logs are
 * withdrawn, all of them (its hash is gone with it); the canonical head stays where it is, and the
 * replacement arrives as a new block record.
 */
function replaceUnsafe(state: ViewState, number: bigint, replacedHash: string): ViewState {
  const held = state.blocks.find(
    (block) => block.number === number && (block.header as { hash?: string }).hash?.toLowerCase() === replacedHash.toLowerCase(),
  );
  const removed = (held?.logs ?? []).map((log) => ({ ...log, removed: true }));
  return {
    ...state,
    blocks: state.blocks.filter((block) => block !== held),
    change: { type: 'removed', blockNumber: number, logs: removed },
  };
}

function advanceCanonical(state: ViewState, number: bigint): ViewState {
  if (number <= state.canonical) return { ...state, change: { type: 'none' } };
  const gone = state.blocks.filter((block) => block.number <= number);
  return {
    ...state,
    canonical: number,
    blocks: state.blocks.filter((block) => block.number > number),
    dropped: gone.length ? [...state.dropped, ...gone].slice(-maxPendingBlocks) : state.dropped,
    change: { type: 'canonical', blockNumber: number },
  };
}

/** The latest pre-confirmed block, or undefined when there is none above canonical. */
export function latestPending(state: ViewState): PendingBlock | undefined {
  return state.blocks[state.blocks.length - 1];
}

/** A pending transaction by hash: its block and position. */
export function findPendingTransaction(state: ViewState, hash: string): { block: PendingBlock; position: number } | undefined {
  const key = hash.toLowerCase();
  for (let i = state.blocks.length - 1; i >= 0; i--) {
    const block = state.blocks[i]!;
    const position = block.positionByHash.get(key);
    if (position !== undefined) return { block, position };
    if (block.postExecTx?.hash.toLowerCase() === key) return { block, position: block.transactions.length };
  }
  return undefined;
}

/**
 * The pending state of an account: the latest block's diff that touched it wins (each diff holds
 * the account's state after that block so far). Storage slots merge newest first.
 */
export function pendingAccount(state: ViewState, address: string): AccountDiff | undefined {
  const key = address.toLowerCase();
  let found: AccountDiff | undefined;
  for (let i = state.blocks.length - 1; i >= 0; i--) {
    const account = state.blocks[i]!.stateDiff?.[key];
    if (!account) continue;
    if (!found) {
      found = { ...account, storage: lowerStorage(account.storage) };
    } else {
      found = {
        balance: found.balance ?? account.balance,
        nonce: found.nonce ?? account.nonce,
        code: found.code ?? account.code,
        storage: { ...lowerStorage(account.storage), ...found.storage },
      };
    }
  }
  return found;
}

function lowerStorage(storage: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [slot, word] of Object.entries(storage ?? {})) out[slot.toLowerCase()] = word;
  return out;
}
