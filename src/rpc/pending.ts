import { filter, firstValueFrom, map, race, startWith, timer, type Observable } from 'rxjs';
import { numberToHex } from 'viem';
import { ServerError } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { NodeHead } from './node-head.ts';
import { pendingAccount, type PendingBlock, type ViewState } from '../view/state.ts';
import { diffAsOverrides, type StateOverrides } from '../schemas/state-overrides.ts';
import type { AccountDiff } from '../records/blocks.ts';

/**
 * What `pending` means, one definition per source, the same for every method:
 * - blocks source (200 ms complete blocks, Base since Denim): the newest block the view holds; its
 *   state is the node's state at that block, read by its hash (EIP-1898 `{blockHash}`, so a reorg at
 *   the node cannot answer another block's state);
 * - flashblocks source: the block being built (the newest held); its state is the canonical block
 *   under the held blocks with every held block's state diff laid over it.
 * With nothing held, `pending` is `latest`: never older than what the same node answers for
 * `latest` (the last finalized block would be minutes older).
 *
 * It is an invariant that `pending` is never older than the node's `latest` as the gateway knows
 * it (`pendingView`, against the node head the gateway follows: docs/gateway.md says what a client
 * can see in the moment between the node's new head and the gateway learning it); when the node is
 * already past the newest held block, the read waits up to `viewCatchUpMs` for the view to reach
 * it (a view a few blocks behind, as the blocks source is for the moment it takes to read a new
 * head), and otherwise answers as `latest`.
 */

/** How long a pending read waits for the view to reach the node's head before it answers as `latest`. */
export const viewCatchUpMs = 250;
/** A view further than this behind the node's head is not waited for: `pending` is `latest` at once. */
export const viewCatchUpBlocks = 3n;
/** The longest a pending read waits for the node's head: a node that does not say in time is not asked (the view answers). */
export const headCheckTimeoutMs = 500;

/**
 * The view a pending read answers from, held against the node's head as the gateway knows it
 * (`NodeHead`, src/rpc/node-head.ts: one follower per process, so a read asks the node nothing).
 * The newest held block "reaches" the head when it is above it, or at its height and complete: a
 * blocks source holds complete blocks; a flashblocks block at the head's height is sealed at the
 * node, and the view may not have read its last flashblock yet, so it reaches the head only when
 * it holds at least the sealed block's transactions (asked once per height, not per read):
 * - the newest held block reaches the head (or the node does not say its head, or that count,
 *   within `headCheckTimeoutMs`): the view as it is;
 * - the node is past it by at most `viewCatchUpBlocks`: the first view, within `viewCatchUpMs`,
 *   whose newest block reaches the node's head (or that holds nothing);
 * - otherwise (further behind, or not caught up in time): the view with nothing held, so `pending`
 *   is `latest`.
 * Without a `nodeHead` (or one that follows nothing), the head is asked per read, as before there was one.
 * At the known head, the head is asked (one call shared by the reads of a turn) unless the node
 * pushes its heads over a WebSocket and the push is fresh (`NodeHead.pushed`): with polling only,
 * the known head may be a poll interval old, and only a call sent after the read arrived says the
 * node has not moved on.
 *
 * @example const state = await pendingView(ctx); const base = pendingStateBase(state);
 */
export async function pendingView(ctx: {
  readonly view: () => ViewState;
  readonly states$: Observable<ViewState>;
  readonly upstream: Pick<Upstream, 'call'>;
  readonly nodeHead?: PendingHeads | undefined;
}): Promise<ViewState> {
  const state = ctx.view();
  const newest = newestHeld(state);
  if (!newest) return state;
  // A follower that follows nothing (polling off, no WebSocket) knows no head: each read asks, as before.
  const heads = ctx.nodeHead?.following ? ctx.nodeHead : askedPerRead(ctx.upstream);
  let head = heads.known();
  // A block being built past the known head: nothing to ask. Behind it: known behind, wait below.
  // At it, or a complete block (a blocks source's, which is a node head itself, whatever the
  // follower has heard yet): the node may have moved on since, so the reads of this turn share one
  // fresh `eth_blockNumber`; unless the known head is the node's own fresh push (`pushed`): the
  // node notifies a new head as it makes it, so the known head is the node's and nothing is asked.
  // A pushed head is taken once what already reached the gateway has landed (`settle`: a push
  // frame received); with forwarded `latest` reads in flight beside this read (a client reading
  // both at once), the node is asked as below, once they are answered.
  let atPushedHead = false;
  if (head !== undefined && newest.number >= head && heads.pushed?.() === true && heads.settle) {
    const latestInFlight = await heads.settle();
    head = heads.known() ?? head;
    atPushedHead = !latestInFlight && newest.number >= head && heads.pushed() === true;
  }
  if (head === undefined || (!atPushedHead && (newest.number === head || (newest.number > head && heldBlockHash(newest) !== undefined)))) {
    try {
      head = await withinMs(head === undefined ? heads.refresh() : heads.fresh(), headCheckTimeoutMs);
    } catch {
      return ctx.view(); // the node cannot say (in time): the view answers as it is
    }
  }
  const known = head;
  /** Transactions of the node's block at the head, asked only when a block being built is at its height. */
  let sealedCount: bigint | undefined;
  const building = (candidate: ViewState) => {
    const top = newestHeld(candidate);
    return top !== undefined && top.number === known && heldBlockHash(top) === undefined;
  };
  if (building(ctx.view())) {
    try {
      sealedCount = await withinMs(heads.sealedTransactions(known), headCheckTimeoutMs);
    } catch {
      return ctx.view(); // as for the head: the node cannot say (in time), the view answers as it is
    }
  }
  const reaches = (candidate: ViewState) => {
    const top = newestHeld(candidate);
    if (top === undefined || top.number > known) return true;
    if (top.number < known) return false;
    if (heldBlockHash(top) !== undefined) return true;
    return sealedCount !== undefined && BigInt(top.transactions.length) >= sealedCount;
  };
  const now = ctx.view();
  if (reaches(now)) return now;
  if (known - newestHeld(now)!.number > viewCatchUpBlocks) return { ...now, blocks: [] };
  const caughtUp = await firstValueFrom(
    race(ctx.states$.pipe(startWith(ctx.view()), filter(reaches)), timer(viewCatchUpMs).pipe(map(() => undefined))),
    { defaultValue: undefined },
  );
  return caughtUp ?? { ...now, blocks: [] };
}

/** What `pendingView` needs of the node's head (a `NodeHead`). */
export type PendingHeads = Pick<NodeHead, 'known' | 'following' | 'refresh' | 'fresh' | 'sealedTransactions'> &
  Partial<Pick<NodeHead, 'pushed' | 'settle'>>;

/** The node's head asked per read (no follower): `eth_blockNumber`, and the count at a block being built's height. */
function askedPerRead(upstream: Pick<Upstream, 'call'>): PendingHeads {
  return {
    known: () => undefined,
    following: false,
    refresh: async () => BigInt((await upstream.call('eth_blockNumber', [])) as string),
    fresh: async () => BigInt((await upstream.call('eth_blockNumber', [])) as string),
    sealedTransactions: async (number) => {
      const count = await upstream.call('eth_getBlockTransactionCountByNumber', [numberToHex(number)]);
      return typeof count === 'string' ? BigInt(count) : undefined;
    },
  };
}

/** `work`'s result, or a rejection when it takes longer than `ms`. */
async function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  let timeout: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timeout = setTimeout(() => reject(new ServerError(`the node did not answer within ${ms} ms`, { retryable: true })), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timeout);
  }
}

/**
 * With `pending` and no pre-confirmed block the gateway answers as `latest` (Base's behaviour):
 * the call goes upstream with the tag replaced at `position`.
 */
export function asLatest(params: readonly unknown[], position: number): unknown[] {
  const copy = [...params];
  copy[position] = 'latest';
  return copy;
}

/** The `pending` block: the newest held, or undefined when nothing is held (then `pending` is `latest`). */
export function newestHeld(state: ViewState): PendingBlock | undefined {
  return state.blocks[state.blocks.length - 1];
}

/** A held block's real hash: set on a blocks source (complete blocks), absent on a flashblocks source. */
export function heldBlockHash(block: PendingBlock): `0x${string}` | undefined {
  const hash = (block.header as { hash?: unknown }).hash;
  return typeof hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(hash) ? (hash.toLowerCase() as `0x${string}`) : undefined;
}

/** An EIP-1898 block parameter naming a block by hash. */
export interface BlockHashParam {
  readonly blockHash: `0x${string}`;
}

/** Where `pending` state is read upstream, and what is laid over it. */
export interface PendingStateBase {
  /** The `pending` block (the newest held). */
  readonly block: PendingBlock;
  /**
   * The upstream block the state is read at: `{blockHash}` of the pending block on a blocks
   * source; the canonical block under the held blocks (hex number) on a flashblocks source.
   */
  readonly at: string | BlockHashParam;
  /** The pre-confirmed diff to lay over `at`: empty on a blocks source, where `at` is the pending block itself. */
  readonly overrides: StateOverrides;
  /** Whether `at` is the pending block itself (a blocks source) rather than the block under a diff. */
  readonly complete: boolean;
}

/**
 * Where `pending` state is read; undefined when nothing is held (then `pending` is `latest`).
 * @example pendingStateBase(state)?.at // { blockHash: '0xab…' } on a Denim chain, '0x64' on a flashblocks chain
 */
export function pendingStateBase(state: ViewState): PendingStateBase | undefined {
  const block = newestHeld(state);
  if (!block) return undefined;
  const hash = heldBlockHash(block);
  if (hash) return { block, at: { blockHash: hash }, overrides: {}, complete: true };
  return { block, at: canonicalBase(state), overrides: pendingOverrides(state), complete: false };
}

/**
 * Flashblocks source: the canonical block under the pending blocks (the earliest held − 1), where
 * their diffs are laid. Every block above it is held, so the diffs cover every change up to the
 * pending block.
 */
export function canonicalBase(state: ViewState): string {
  const earliest = state.blocks[0];
  if (earliest) return numberToHex(earliest.number - 1n);
  return state.canonical >= 0n ? numberToHex(state.canonical) : 'latest';
}

/**
 * The pre-confirmed state as state overrides over the canonical base block: every account any
 * pending block touched, at its newest pending value (Base's node lays the same map under
 * eth_call, eth_estimateGas and eth_simulateV1 with `pending`). Empty when no block carries a diff.
 */
export function pendingOverrides(state: ViewState): StateOverrides {
  let overrides = overridesByState.get(state);
  if (!overrides) overridesByState.set(state, (overrides = buildPendingOverrides(state)));
  return overrides;
}

/** A view state never changes (the reducer makes new ones): its overrides are computed once. */
const overridesByState = new WeakMap<ViewState, StateOverrides>();

function buildPendingOverrides(state: ViewState): StateOverrides {
  const touched = new Set<string>();
  for (const block of state.blocks) for (const account of Object.keys(block.stateDiff ?? {})) touched.add(account);
  const merged: Record<string, AccountDiff> = {};
  for (const account of touched) merged[account] = pendingAccount(state, account)!;
  return diffAsOverrides(merged);
}
