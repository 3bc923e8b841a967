import type { AssembledBlock } from '../chain/assemble.ts';
import { ZERO_HASH } from '../schemas/hex.ts';
import type { RpcLog } from '../records/logs.ts';
import type { RpcReceipt } from '../records/blocks.ts';

/** A log of a pending block: no block hash yet (32 zero bytes), never removed. */
export function pendingLog(
  log: { readonly address: string; readonly topics: readonly string[]; readonly data: string },
  at: {
    readonly blockNumber: string;
    readonly block: Pick<AssembledBlock, 'header'>;
    readonly transactionHash: string;
    readonly transactionIndex: string;
    readonly logIndex: string;
  },
): RpcLog {
  return {
    address: log.address,
    topics: [...log.topics],
    data: log.data,
    blockNumber: at.blockNumber,
    blockHash: ZERO_HASH,
    blockTimestamp: at.block.header.timestamp,
    transactionHash: at.transactionHash,
    transactionIndex: at.transactionIndex,
    logIndex: at.logIndex,
    removed: false,
  } as RpcLog;
}

/**
 * One formatter from an engine's (or upstream's) receipt to the pending receipt flashlog
 * publishes: blockHash 32 zero bytes (the block is not sealed), blockNumber of the pending block,
 * and each log with blockTimestamp and removed=false. transactionIndex and logIndex are kept as
 * the engine numbered them: block-wide, because the engine mined the whole block so far.
 * OP fields (l1Fee, l1GasUsed, depositNonce, ...) pass through untouched when present.
 */
export function pendingReceipt(raw: Record<string, unknown>, block: Pick<AssembledBlock, 'blockNumber' | 'header'>): RpcReceipt {
  const blockNumber = `0x${block.blockNumber.toString(16)}`;
  const receipt = raw as unknown as RpcReceipt;
  const logs = (Array.isArray(receipt.logs) ? receipt.logs : []).map((log) =>
    pendingLog(log, {
      blockNumber,
      block,
      transactionHash: receipt.transactionHash,
      transactionIndex: receipt.transactionIndex,
      logIndex: log.logIndex,
    }),
  );
  const out: Record<string, unknown> = { ...raw, blockHash: ZERO_HASH, blockNumber, logs };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out as RpcReceipt;
}
