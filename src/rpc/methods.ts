import type { Method } from './method.ts';
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

/**
 * The methods the gateway answers from the view. Anything not here is forwarded to the upstream
 * unchanged, except the executing methods (eth_call, eth_estimateGas, eth_simulateV1), which need
 * the gas cap and time limit and come from `createExecutionMethods` (execution.ts).
 */
export const methods: Readonly<Record<string, Method>> = {
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
};

/** Methods only a WebSocket connection can call. */
export const websocketOnly: ReadonlySet<string> = new Set(['eth_subscribe', 'eth_unsubscribe']);
