import type { MethodSpec } from './method.ts';
import { eth_call } from './methods/eth_call.ts';
import { eth_estimateGas } from './methods/eth_estimateGas.ts';
import { eth_getBalance } from './methods/eth_getBalance.ts';
import { eth_getBlockByNumber } from './methods/eth_getBlockByNumber.ts';
import { eth_getBlockReceipts } from './methods/eth_getBlockReceipts.ts';
import { eth_getBlockTransactionCountByNumber } from './methods/eth_getBlockTransactionCountByNumber.ts';
import { eth_getCode } from './methods/eth_getCode.ts';
import { eth_getLogs } from './methods/eth_getLogs.ts';
import { eth_getStorageAt } from './methods/eth_getStorageAt.ts';
import { eth_getTransactionByHash } from './methods/eth_getTransactionByHash.ts';
import { eth_getTransactionCount } from './methods/eth_getTransactionCount.ts';
import { eth_getTransactionReceipt } from './methods/eth_getTransactionReceipt.ts';
import { eth_sendRawTransactionSync } from './methods/eth_sendRawTransactionSync.ts';
import { eth_simulateV1 } from './methods/eth_simulateV1.ts';
import { eth_subscribe } from './methods/eth_subscribe.ts';
import { eth_unsubscribe } from './methods/eth_unsubscribe.ts';

/**
 * Every JSON-RPC method the gateway answers itself, each declared once in its file under
 * `methods/` (params, handler, transports, public-mode policy). Anything not here is forwarded to
 * the upstream unchanged. Adding a method: one file under `methods/` and one line here.
 */
export const registry: readonly MethodSpec[] = [
  eth_call,
  eth_estimateGas,
  eth_getBalance,
  eth_getBlockByNumber,
  eth_getBlockReceipts,
  eth_getBlockTransactionCountByNumber,
  eth_getCode,
  eth_getLogs,
  eth_getStorageAt,
  eth_getTransactionByHash,
  eth_getTransactionCount,
  eth_getTransactionReceipt,
  eth_sendRawTransactionSync,
  eth_simulateV1,
  eth_subscribe,
  eth_unsubscribe,
];

/** The registry by method name. */
export const methodSpecs: ReadonlyMap<string, MethodSpec> = new Map(registry.map((spec) => [spec.name, spec]));
