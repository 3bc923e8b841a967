import { z } from 'zod';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';

/**
 * Health of a self-run Base node, as an operator (or cron, or a container health check) needs it:
 * how far behind it is (the consensus client's `optimism_syncStatus`, `unsafe_l2.timestamp`
 * against now), whether it serves pre-confirmations (`eth_getBlockByNumber("pending")` newer than
 * `latest`), its chain ID and latest block.
 *
 * Exit codes: 0 healthy, 1 behind (or wrong chain, or not serving what was asked), 2 unreachable.
 */
export interface NodeStatusOptions {
  readonly rpcUrl: string;
  /** The consensus client's RPC (op-node / base-consensus, port 7545); optional. */
  readonly consensusRpcUrl?: string | undefined;
  readonly maxLagMinutes: number;
  readonly expectChainId?: number | undefined;
  readonly timeoutMs: number;
  /** Seconds since the epoch; injectable for tests. */
  readonly nowSeconds?: number;
}

export interface NodeStatus {
  readonly exitCode: 0 | 1 | 2;
  readonly healthy: boolean;
  readonly chainId: number | null;
  readonly latestBlock: number | null;
  readonly latestTimestamp: number | null;
  readonly unsafeL2: { readonly number: number; readonly timestamp: number } | null;
  readonly minutesBehind: number | null;
  readonly preconfirmations: { readonly served: boolean; readonly pendingBlock: number | null } | null;
  /** One line per finding, for people. */
  readonly lines: readonly string[];
}

/** The part of `optimism_syncStatus` we read; the rest of the (large) object is ignored. */
const syncStatusSchema = z.object({
  unsafe_l2: z.object({ number: z.number().int().nonnegative(), timestamp: z.number().int().nonnegative() }),
}).loose();
const blockSchema = z.object({ number: z.string(), timestamp: z.string() }).loose();

async function call(url: string, method: string, params: unknown[], timeoutMs: number): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status} from ${method}`);
  const body = await response.json() as { result?: unknown; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
  return body.result;
}

export async function checkNodeStatus(options: NodeStatusOptions): Promise<NodeStatus> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  let exitCode: 0 | 1 | 2 = 0;
  const fail = (code: 1 | 2, line: string) => {
    exitCode = Math.max(exitCode, code) as 0 | 1 | 2;
    lines.push(line);
  };

  let chainId: number | null = null;
  let latest: { number: number; timestamp: number } | null = null;
  try {
    chainId = Number(BigInt(z.string().parse(await call(options.rpcUrl, 'eth_chainId', [], options.timeoutMs))));
    const block = blockSchema.parse(await call(options.rpcUrl, 'eth_getBlockByNumber', ['latest', false], options.timeoutMs));
    latest = { number: Number(BigInt(block.number)), timestamp: Number(BigInt(block.timestamp)) };
    lines.push(`execution RPC ${options.rpcUrl}: chain ${chainId}, latest block ${latest.number} (${now - latest.timestamp}s old)`);
  } catch (error) {
    fail(2, `execution RPC ${options.rpcUrl} unreachable: ${errorMessage(error)}`);
  }
  if (chainId !== null && options.expectChainId !== undefined && chainId !== options.expectChainId) {
    fail(1, `wrong chain: the node serves chain ${chainId}, expected ${options.expectChainId}`);
  }

  let preconfirmations: NodeStatus['preconfirmations'] = null;
  if (latest) {
    try {
      const pending = await call(options.rpcUrl, 'eth_getBlockByNumber', ['pending', false], options.timeoutMs);
      const pendingBlock = pending === null ? null : Number(BigInt(blockSchema.parse(pending).number));
      const served = pendingBlock !== null && pendingBlock > latest.number;
      preconfirmations = { served, pendingBlock };
      lines.push(served
        ? `pre-confirmations: served (pending block ${pendingBlock} is ahead of latest ${latest.number})`
        : `pre-confirmations: not served (pending ${pendingBlock === null ? 'is null' : `block ${pendingBlock} is not newer than latest ${latest.number}`}); is the flashblocks websocket URL set on the node?`);
    } catch (error) {
      preconfirmations = { served: false, pendingBlock: null };
      lines.push(`pre-confirmations: not served (eth_getBlockByNumber("pending") failed: ${errorMessage(error)})`);
    }
  }

  let unsafeL2: NodeStatus['unsafeL2'] = null;
  let minutesBehind: number | null = null;
  if (options.consensusRpcUrl) {
    try {
      const status = syncStatusSchema.parse(await call(options.consensusRpcUrl, 'optimism_syncStatus', [], options.timeoutMs));
      unsafeL2 = { number: status.unsafe_l2.number, timestamp: status.unsafe_l2.timestamp };
      minutesBehind = Math.max(0, (now - unsafeL2.timestamp) / 60);
      if (unsafeL2.number === 0 || unsafeL2.timestamp === 0) {
        fail(1, `not syncing: the consensus client reports no unsafe L2 head yet`);
      } else if (minutesBehind > options.maxLagMinutes) {
        fail(1, `behind: unsafe L2 head ${unsafeL2.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes})`);
      } else {
        lines.push(`in sync: unsafe L2 head ${unsafeL2.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes})`);
      }
    } catch (error) {
      fail(2, `consensus RPC ${options.consensusRpcUrl} unreachable: ${errorMessage(error)}`);
    }
  } else if (latest) {
    // Without the consensus RPC, the latest block's age is the best measure there is.
    minutesBehind = Math.max(0, (now - latest.timestamp) / 60);
    if (minutesBehind > options.maxLagMinutes) fail(1, `behind: latest block ${latest.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes})`);
    else lines.push(`in sync: latest block ${latest.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes}; no --consensus-rpc, so judged by the latest block)`);
  }
  return {
    exitCode,
    healthy: exitCode === 0,
    chainId,
    latestBlock: latest?.number ?? null,
    latestTimestamp: latest?.timestamp ?? null,
    unsafeL2,
    minutesBehind,
    preconfirmations,
    lines,
  };
}

/**
 * Checks, at the start of `ingest` or `serve`, whether the upstream RPC is reachable and current,
 * and logs a warning when it is not. Without a consensus RPC the latest block's age is the
 * measure. It never throws and delays nothing beyond `timeoutMs` per request; the result is
 * returned for callers (and tests) that want it.
 *
 * @example
 * void checkUpstreamLag(config.rpc, logger); // fire and forget at start
 */
export async function checkUpstreamLag(rpcUrl: string | undefined, logger: Logger, maxLagMinutes = 5, timeoutMs = 3000): Promise<NodeStatus | null> {
  if (!rpcUrl) return null;
  const status = await checkNodeStatus({ rpcUrl, maxLagMinutes, timeoutMs }).catch(() => null);
  if (!status) return null;
  if (status.exitCode === 2) logger.warn({ upstream: rpcUrl, detail: status.lines }, 'upstream RPC unreachable at start');
  else if (status.exitCode === 1) logger.warn({ upstream: rpcUrl, minutesBehind: status.minutesBehind, detail: status.lines }, 'upstream RPC is behind: pending answers will be stale until it catches up');
  return status;
}
