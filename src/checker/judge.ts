import { numberToHex, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { compareAnswers, compareKeyedLists, emptyComparison, isPartial, type Answer, type BlockShape, type Comparison } from './compare.ts';
import { inBatches, resultOf, type Endpoint } from './endpoint.ts';
import {
  blockReads,
  firstTransactionsOf,
  identityKey,
  identityOf,
  logKey,
  POST_EXEC_RECEIPT_NOT_STREAMED,
  relate,
  type RecordedCall,
  type SealedAtHeight,
  type Snapshot,
} from './snapshot.ts';
import type { Tally } from './tally.ts';

/**
 * Holds every recorded version of one pending height against the block the node sealed there.
 *
 * - A version whose transactions are the sealed block's (or their first ones, for a block being
 *   built) is compared answer by answer with the node's answers for that block, read by its hash
 *   (state and calls at its number).
 * - A version the node did not seal (a reorg) is not a mismatch if the gateway withdrew it: asked
 *   now (at least the grace after the node sealed), the gateway must neither serve it as
 *   `pending` nor answer one of its left-out transactions as part of that block. Otherwise each is a
 *   mismatch of `replaced.*`.
 */
export interface JudgeOptions {
  readonly gateway: Endpoint;
  readonly node: Endpoint;
  readonly tally: Tally;
  readonly concurrency: number;
  /** Each new mismatch, for the log. */
  readonly onMismatch?: (block: string, comparison: Comparison) => void;
}

const PARTIAL_STATE =
  'a partial block: the state after its first transactions is not a state the node serves (nonces are held between the parent and the block)';

const isZeroOrNull = (value: unknown) => value === null || (typeof value === 'string' && /^0x0*$/.test(value));

export async function judgeHeight(number: bigint, snapshots: readonly Snapshot[], options: JudgeOptions): Promise<void> {
  const { node, gateway, tally } = options;
  const sealedBlock = resultOf<{ hash: Hex; transactions: Hex[] } | null>(
    'eth_getBlockByNumber',
    await node.call('eth_getBlockByNumber', [numberToHex(number), false]),
  );
  if (!sealedBlock) throw new FlashlogError('UPSTREAM_INVALID', `the node has no block ${number} though its head is past it`);
  const sealed: SealedAtHeight = { number, hash: sealedBlock.hash, transactions: sealedBlock.transactions };
  const nodeAnswers = new Map<string, Promise<Answer>>();
  const nodeAnswer = (method: string, params: readonly unknown[]) => {
    const key = `${method} ${JSON.stringify(params)}`;
    let answer = nodeAnswers.get(key);
    if (!answer) nodeAnswers.set(key, (answer = node.call(method, params)));
    return answer;
  };
  let compared = false;
  for (const snapshot of snapshots) {
    const relation = relate(snapshot.identity, sealed);
    const block = `${number}${snapshot.identity.hash ? ` (${snapshot.identity.hash.slice(0, 10)})` : ''} with ${snapshot.identity.transactions.length} txs`;
    if (relation.kind === 'replaced') {
      await judgeReplaced(block, snapshot, sealed, relation.dropped, options);
      continue;
    }
    compared = true;
    const comparison = emptyComparison();
    await inBatches(
      snapshot.calls.map((call) => async () => compareCall(call, relation.shape, sealed, nodeAnswer, comparison)),
      options.concurrency,
    );
    tally.addComparison(block, snapshot.calls.length, comparison, relation.shape.building);
    if (comparison.mismatches.length > 0) options.onMismatch?.(block, comparison);
  }
  if (compared) tally.blockCompared();
}

async function compareCall(
  call: RecordedCall,
  shape: BlockShape,
  sealed: SealedAtHeight,
  nodeAnswer: (method: string, params: readonly unknown[]) => Promise<Answer>,
  out: Comparison,
): Promise<void> {
  const blockRead = blockReads.find((read) => read.label === call.label);
  if (blockRead) {
    const request = blockRead.nodeCall(sealed);
    let expected = firstTransactionsOf(call.label, await nodeAnswer(request.method, request.params), shape);
    if (call.label === 'eth_getBlockReceipts' && shape.building) expected = withoutUnansweredPostExec(call.answer, expected, out);
    if (
      call.label === 'eth_getLogs' &&
      'result' in call.answer &&
      'result' in expected &&
      Array.isArray(call.answer.result) &&
      Array.isArray(expected.result)
    ) {
      compareKeyedLists(call.label, call.answer.result, expected.result, logKey, shape, out);
    } else {
      compareAnswers(call.label, call.answer, expected, shape, out);
    }
    return;
  }
  if (call.method === 'eth_getTransactionByHash' || call.method === 'eth_getTransactionReceipt') {
    const expected = await nodeAnswer(call.method, call.params);
    if (call.method === 'eth_getTransactionReceipt' && shape.building && isUnansweredPostExec(call.answer, expected)) {
      notePostExec(out);
      return;
    }
    compareAnswers(call.label, call.answer, expected, shape, out);
    return;
  }
  // A state read: the same params at the sealed block's number instead of `pending`.
  const params = [...call.params.slice(0, -1), numberToHex(sealed.number)];
  if (!isPartial(shape)) {
    compareAnswers(call.label, call.answer, await nodeAnswer(call.method, params), undefined, out);
    return;
  }
  if (call.method !== 'eth_getTransactionCount') {
    if (!out.notCompared.some((entry) => entry.field === `${call.label}(partial block)`))
      out.notCompared.push({ field: `${call.label}(partial block)`, reason: PARTIAL_STATE });
    return;
  }
  const [atParent, atBlock] = await Promise.all([
    nodeAnswer(call.method, [...call.params.slice(0, -1), numberToHex(sealed.number - 1n)]),
    nodeAnswer(call.method, params),
  ]);
  out.compared++;
  if ('result' in call.answer && 'result' in atParent && 'result' in atBlock) {
    const nonce = BigInt(call.answer.result as string);
    if (nonce >= BigInt(atParent.result as string) && nonce <= BigInt(atBlock.result as string)) return;
  }
  out.mismatches.push({
    field: `${call.label}(partial block)`,
    gateway: 'result' in call.answer ? call.answer.result : call.answer.error,
    node: `between ${JSON.stringify('result' in atParent ? atParent.result : atParent.error)} and ${JSON.stringify('result' in atBlock ? atBlock.result : atBlock.error)}`,
  });
}

async function judgeReplaced(
  block: string,
  snapshot: Snapshot,
  sealed: SealedAtHeight,
  dropped: readonly Hex[],
  options: JudgeOptions,
): Promise<void> {
  const { gateway, tally } = options;
  let withdrawn = true;
  const pending = resultOf<{ number: string; hash: string | null; transactions: string[] } | null>(
    'eth_getBlockByNumber',
    await gateway.call('eth_getBlockByNumber', ['pending', false]),
  );
  if (pending) {
    const now = identityOf(pending);
    if (now.number === sealed.number && relate(now, sealed).kind === 'replaced') {
      withdrawn = false;
      tally.stillServed(block, 'replaced.eth_getBlockByNumber[pending]', `${identityKey(now)}`, `sealed ${sealed.hash}`);
    }
  }
  for (const hash of dropped) {
    const answer = await gateway.call('eth_getTransactionByHash', [hash]);
    const tx = 'result' in answer ? (answer.result as { blockNumber?: string; blockHash?: string | null } | null) : null;
    if (!tx || tx.blockNumber === undefined || BigInt(tx.blockNumber) !== sealed.number) continue;
    const servedHash = tx.blockHash ?? null;
    if (isZeroOrNull(servedHash) || servedHash?.toLowerCase() === snapshot.identity.hash) {
      withdrawn = false;
      tally.stillServed(
        block,
        'replaced.eth_getTransactionByHash',
        `${hash} in block ${sealed.number} (${servedHash})`,
        `not in sealed ${sealed.hash}`,
      );
    }
  }
  if (withdrawn) tally.replaced(snapshot.calls.length);
}

const isPostExecReceipt = (receipt: unknown): boolean => (receipt as { type?: string } | null)?.type?.toLowerCase() === '0x7d';

/** The gateway answered no receipt (null) for a transaction whose sealed receipt is a post-exec one (postExecHashesOf). */
const isUnansweredPostExec = (answer: Answer, expected: Answer): boolean =>
  'result' in answer && answer.result === null && 'result' in expected && isPostExecReceipt(expected.result);

function notePostExec(out: Comparison): void {
  const field = 'eth_getTransactionReceipt(post-exec, pending)';
  if (!out.notCompared.some((entry) => entry.field === field)) out.notCompared.push({ field, reason: POST_EXEC_RECEIPT_NOT_STREAMED });
}

/** The node's block receipts without the post-exec receipts the gateway's pending list leaves out. */
function withoutUnansweredPostExec(answer: Answer, expected: Answer, out: Comparison): Answer {
  if (!('result' in answer) || !('result' in expected) || !Array.isArray(answer.result) || !Array.isArray(expected.result)) return expected;
  const answered = new Set((answer.result as { transactionHash?: string }[]).map((receipt) => receipt.transactionHash?.toLowerCase()));
  const kept = (expected.result as { transactionHash?: string }[]).filter(
    (receipt) => !isPostExecReceipt(receipt) || answered.has(receipt.transactionHash?.toLowerCase()),
  );
  if (kept.length === expected.result.length) return expected;
  notePostExec(out);
  return { result: kept };
}
