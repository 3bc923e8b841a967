import type { Observable } from 'rxjs';
import type { ViewState } from '../view/state.ts';
import type { TransactionFormatter } from './format.ts';
import type { Upstream } from './upstream.ts';

/**
 * One JSON-RPC method the gateway answers itself. Each lives in its own file under `methods/` and
 * is listed in `methods.ts`; a method not listed is forwarded to the upstream unchanged.
 */
export interface MethodContext {
  /** The view as of now (read once per call for a consistent answer). */
  readonly view: () => ViewState;
  /** Every new view state (for methods that wait for something to appear in the view). */
  readonly states$: Observable<ViewState>;
  readonly upstream: Upstream;
  readonly formatter: TransactionFormatter;
  readonly limits: { readonly maxLogsRange: number };
  /** Sends this call to the upstream, unchanged or with other params. */
  forward(params?: readonly unknown[]): Promise<unknown>;
}

export type Method = (params: readonly unknown[], ctx: MethodContext) => unknown;
