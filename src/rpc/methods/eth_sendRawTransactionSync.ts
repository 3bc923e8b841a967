import {
  EMPTY,
  Observable,
  catchError,
  distinctUntilChanged,
  exhaustMap,
  filter,
  from,
  map,
  merge,
  race,
  startWith,
  take,
  timer,
} from 'rxjs';
import { keccak256, type Hex } from 'viem';
import { z } from 'zod';
import { ReceiptTimeoutError } from '../../errors.ts';
import { hexPatterns } from '../../schemas/hex.ts';
import type { IssueParams } from '../../schemas/issue.ts';
import { findPendingTransaction, type ViewState } from '../../view/state.ts';
import { defineMethod, type Handler, type MethodContext } from '../method.ts';
import { required } from '../params.ts';

/** The longest wait, and the wait when none (or an invalid one) is asked for. */
export const sendRawTransactionSyncMaxTimeoutMs = 6_000;

/** EIP-7966's error code for "sent, but no receipt within the timeout" (data: the hash). */
export const receiptTimeoutCode = ReceiptTimeoutError.rpcCode;

const rawTransaction = 'a signed transaction as 0x-hex bytes';
/** `[rawTx, timeoutMs?]`: the transaction as at least one byte of 0x-hex; any timeout (an invalid one is the default). */
const params = z
  .tuple([
    required(
      rawTransaction,
      z
        .unknown()
        .check((ctx) => {
          const raw = ctx.value;
          if (typeof raw === 'string' && hexPatterns.hexBytes.test(raw) && raw.length >= 4) return;
          const got = JSON.stringify(raw)?.slice(0, 80) ?? 'undefined';
          ctx.issues.push({ code: 'custom', message: `expected ${rawTransaction}`, input: raw, params: { got } satisfies IssueParams });
        })
        .transform((raw) => raw as Hex),
    ),
    z.unknown().transform(timeoutOf),
  ])
  .rest(z.unknown());

/**
 * eth_sendRawTransactionSync(rawTx, timeoutMs?) (EIP-7966, viem's `sendRawTransactionSync`): sends
 * the transaction upstream with eth_sendRawTransaction and answers with its receipt as soon as the
 * view holds it pre-confirmed, or the upstream has it canonical, whichever comes first.
 *
 * It is an invariant that the view is watched before the transaction is sent: on a chain that
 * pre-confirms at once, the receipt can reach the view before the upstream answers the send, and
 * a watch begun after the answer would miss it (Base's node had this race, base/base#3826).
 *
 * The timeout is a positive integer of milliseconds (a JSON number, or a hex quantity as older
 * viem versions send it); a missing, zero or larger one means the default and maximum, 6,000 ms,
 * as EIP-7966 says an invalid timeout falls back to the default. No receipt in time: error code 4
 * with the transaction hash as `data`. A refused send is answered with the upstream's error.
 */
const handler: Handler<z.output<typeof params>> = async ([raw, timeoutMs], ctx) => {
  const hash = keccak256(raw);
  let settle: (receipt: unknown) => void = () => {};
  const watched = new Promise<unknown>((resolve) => {
    settle = resolve;
  });
  // Subscribed (watching) first; the send starts only after.
  const watch = race(receiptOf$(hash, ctx).pipe(take(1)), timer(timeoutMs).pipe(map(() => undefined))).subscribe({
    next: (receipt) => settle(receipt),
    error: () => settle(undefined),
  });
  let receipt: unknown;
  try {
    await ctx.upstream.call('eth_sendRawTransaction', [raw]);
    receipt = await watched;
  } finally {
    watch.unsubscribe();
  }
  if (receipt === undefined) {
    throw new ReceiptTimeoutError(`The transaction was added to the mempool but wasn't processed in ${timeoutMs / 1000}s.`, hash);
  }
  return receipt;
};

/** The wait a request asks for: a positive integer up to the maximum (number or hex quantity), else the maximum. */
export function timeoutOf(value: unknown): number {
  let ms: number | undefined;
  if (typeof value === 'number' && Number.isInteger(value)) ms = value;
  else if (typeof value === 'string' && /^0x[0-9a-fA-F]{1,13}$/.test(value)) ms = Number.parseInt(value.slice(2), 16);
  return ms !== undefined && ms > 0 && ms <= sendRawTransactionSyncMaxTimeoutMs ? ms : sendRawTransactionSyncMaxTimeoutMs;
}

/** The receipt, from the view (pre-confirmed) or the upstream (canonical, asked at each new canonical head). */
function receiptOf$(hash: Hex, ctx: MethodContext): Observable<unknown> {
  const states$ = ctx.states$.pipe(startWith(ctx.view()));
  const preconfirmed$ = states$.pipe(
    map((state) => pendingReceipt(state, hash)),
    filter((receipt) => receipt !== undefined),
  );
  const canonical$ = states$.pipe(
    map((state) => state.canonical),
    distinctUntilChanged(),
    exhaustMap(() => from(ctx.upstream.call('eth_getTransactionReceipt', [hash])).pipe(catchError(() => EMPTY))),
    filter((receipt) => receipt !== null && receipt !== undefined),
  );
  return merge(preconfirmed$, canonical$);
}

function pendingReceipt(state: ViewState, hash: Hex): unknown {
  const found = findPendingTransaction(state, hash);
  return found ? found.block.receipts[found.position] : undefined;
}

export const eth_sendRawTransactionSync = defineMethod({ name: 'eth_sendRawTransactionSync', params, handler });
