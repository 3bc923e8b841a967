import type { Answer } from './compare.ts';
import { inBatches, resultOf, type Endpoint } from './endpoint.ts';
import {
  blockReads,
  identityKey,
  identityOf,
  postExecHashesOf,
  statePlan,
  type PendingBlockBody,
  type PendingIdentity,
  type PendingReceipt,
  type RecordedCall,
  type Snapshot,
  type StatePlanOptions,
} from './snapshot.ts';

/**
 * Records what a user can get from the gateway while one version of a block is pending. One
 * recording is three steps:
 *
 *   1. at once: `latest`, the pending block with full transactions, the pending receipts
 *   2. at once: the pending block with hashes, its logs, each new transaction and receipt by
 *      hash, the state reads of `statePlan`, and the monotone ones (nonces, BaseTime's clock) at
 *      `latest` beside them
 *   3. the pending block again: if it moved meanwhile, only the answers of step 1 are kept (they
 *      name their block; state reads carry no block of their own, so they belong to a version
 *      only between two equal reads)
 *
 * A pending answer below its `latest` twin (the block number in step 1, a nonce or a clock in
 * step 2) is reported through `onOlder`.
 */
export interface RecordOptions extends StatePlanOptions {
  readonly gateway: Endpoint;
  /** Transactions of this height already recorded by hash (not asked again). */
  readonly seenTransactions: (identity: PendingIdentity) => Set<string>;
  /** Keys of versions already recorded. */
  readonly recorded: Set<string>;
  readonly onOlder: (read: string) => void;
  readonly concurrency: number;
}

export type RecordOutcome =
  | { readonly kind: 'recorded'; readonly snapshot: Snapshot }
  | { readonly kind: 'unchanged' }
  /** The block moved while it was read: only the answers that carry their block (the block, its receipts) are kept. */
  | { readonly kind: 'moved'; readonly snapshot?: Snapshot }
  | { readonly kind: 'no-pending' };

/** A quantity, or an `eth_call` result (one ABI word), as a number; undefined for anything else. */
const numeric = (answer: Answer): bigint | undefined =>
  'result' in answer && typeof answer.result === 'string' && /^0x[0-9a-f]+$/i.test(answer.result) ? BigInt(answer.result) : undefined;

export async function recordPending(options: RecordOptions): Promise<RecordOutcome> {
  const { gateway } = options;
  const [latestAnswer, fullAnswer, receiptsAnswer] = await Promise.all([
    gateway.call('eth_getBlockByNumber', ['latest', false]),
    gateway.call('eth_getBlockByNumber', ['pending', true]),
    gateway.call('eth_getBlockReceipts', ['pending']),
  ]);
  const full = resultOf<(PendingBlockBody & { number: string; hash: string | null }) | null>('eth_getBlockByNumber', fullAnswer);
  if (!full) return { kind: 'no-pending' };
  const identity = identityOf(full);
  const latest = resultOf<{ number: string } | null>('eth_getBlockByNumber', latestAnswer);
  if (latest && identity.number < BigInt(latest.number)) options.onOlder('block number');
  const key = identityKey(identity);
  if (options.recorded.has(key)) return { kind: 'unchanged' };
  // The receipts must be this version's (they were read at the same moment, but by another call).
  const receipts = 'result' in receiptsAnswer && Array.isArray(receiptsAnswer.result) ? (receiptsAnswer.result as PendingReceipt[]) : [];
  const receiptTxs = receipts.map((receipt) => String((receipt as { transactionHash?: string }).transactionHash).toLowerCase());
  // A post-exec transaction's receipt may be missing while the block is pending (postExecHashesOf).
  const postExec = postExecHashesOf(full);
  const expectedReceiptTxs = identity.transactions.filter((hash) => !postExec.includes(hash) || receiptTxs.includes(hash));
  // (A gateway that refuses them, e.g. in public mode, is held to its refusal: it is compared too.)
  // The same transactions can be served as the sealed block and as the block being built: their
  // block hashes tell which.
  if (
    'result' in receiptsAnswer &&
    (receiptTxs.join() !== expectedReceiptTxs.join() ||
      !receipts.every((receipt) => receiptOfVersion(identity, receipt as unknown as CarriesBlockHash)))
  )
    return { kind: 'moved' };

  const calls: RecordedCall[] = [
    { label: 'eth_getBlockByNumber[full]', method: 'eth_getBlockByNumber', params: ['pending', true], answer: fullAnswer },
    { label: 'eth_getBlockReceipts', method: 'eth_getBlockReceipts', params: ['pending'], answer: receiptsAnswer },
  ];
  const asks: { label: string; method: string; params: readonly unknown[] }[] = blockReads.filter(
    (read) => read.label === 'eth_getBlockByNumber[hashes]' || read.label === 'eth_getLogs',
  );
  const seen = options.seenTransactions(identity);
  const newTxs = identity.transactions.filter((hash) => !seen.has(hash));
  for (const hash of newTxs) {
    asks.push({ label: 'eth_getTransactionByHash', method: 'eth_getTransactionByHash', params: [hash] });
    asks.push({ label: 'eth_getTransactionReceipt', method: 'eth_getTransactionReceipt', params: [hash] });
  }
  const plan = statePlan(full, receipts, options);
  for (const read of plan) asks.push({ label: read.label, method: read.method, params: [...read.params, 'pending'] });
  const monotone = plan.filter((read) => read.monotone);
  const answers = await inBatches(
    [
      ...asks.map((ask) => () => gateway.call(ask.method, ask.params)),
      ...monotone.map((read) => () => gateway.call(read.method, [...read.params, 'latest'])),
    ],
    options.concurrency,
  );
  const after = resultOf<{ number: string; hash: string | null; transactions: string[] } | null>(
    'eth_getBlockByNumber',
    await gateway.call('eth_getBlockByNumber', ['pending', false]),
  );
  if (!after || identityKey(identityOf(after)) !== key || !sameVersion(identity, asks, answers)) {
    options.recorded.add(key);
    return { kind: 'moved', snapshot: { identity, seenAtMs: Date.now(), calls } };
  }

  asks.forEach((ask, i) => calls.push({ ...ask, answer: answers[i]! }));
  // Monotone reads: the pending answer against the latest one read beside it.
  const planStart = asks.length - plan.length;
  let m = 0;
  plan.forEach((read, i) => {
    if (!read.monotone) return;
    const pending = numeric(answers[planStart + i]!);
    const atLatest = numeric(answers[asks.length + m++]!);
    if (pending !== undefined && atLatest !== undefined && pending < atLatest) options.onOlder(read.label);
  });
  options.recorded.add(key);
  for (const hash of newTxs) seen.add(hash);
  return { kind: 'recorded', snapshot: { identity, seenAtMs: Date.now(), calls } };
}

/**
 * Whether the block reads answered the version the snapshot names. The same height can be served
 * two ways within a few milliseconds: as the node's sealed block (with its hash) while the view is
 * a step behind, then as the view's block being built (hash zero) once its last flashblock is in.
 * Both are right; a snapshot that mixes them is not one version, and is kept as moved.
 */
function sameVersion(identity: PendingIdentity, asks: readonly { label: string }[], answers: readonly Answer[]): boolean {
  const key = identityKey(identity);
  return asks.every((ask, i) => {
    const answer = answers[i]!;
    if (!('result' in answer)) return true;
    if (ask.label === 'eth_getBlockByNumber[hashes]') {
      const block = answer.result as { number?: unknown } | null;
      return block !== null && typeof block === 'object' && identityKey(identityOf(block)) === key;
    }
    if (ask.label === 'eth_getLogs' && Array.isArray(answer.result))
      return (answer.result as CarriesBlockHash[]).every((log) => ofVersion(identity, log.blockHash));
    return true;
  });
}

type CarriesBlockHash = { readonly blockHash?: string | null; readonly logs?: readonly CarriesBlockHash[] };

/** Whether a block hash an answer carries names `identity`'s version: none (zero) while it is built, a hash once sealed. */
function ofVersion(identity: PendingIdentity, blockHash: string | null | undefined): boolean {
  const placeholder = blockHash === null || blockHash === undefined || /^0x0*$/.test(blockHash);
  return (identity.hash === null) === placeholder;
}

/** A receipt and its logs of `identity`'s version. */
const receiptOfVersion = (identity: PendingIdentity, receipt: CarriesBlockHash): boolean =>
  ofVersion(identity, receipt.blockHash) && (receipt.logs ?? []).every((log) => ofVersion(identity, log.blockHash));
