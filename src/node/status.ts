import { z } from 'zod';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { createUpstream, type Upstream } from '../jsonrpc/upstream.ts';
import { DENIM_BLOCK_MS, judgeCadence, sampleHead, type Cadence } from './cadence.ts';
import { checkLag, type L2Ref, type SafeLag } from './lag.ts';
import { checkPending, readLatest, type Latest, type Preconfirmations } from './latest.ts';

/**
 * Health of a self-run node, as an operator (or cron, or a container health check) needs it, one
 * line per check: chain ID and latest block; how far behind it is (the consensus client's
 * `optimism_syncStatus`, `unsafe_l2.timestamp` against now, else the latest block's age); how far
 * its safe head (derived from L1) trails the unsafe head (src/node/lag.ts); and whether it serves
 * what its chain offers instead of plain blocks, judged by one of two rules:
 * - **denim** (Base since Denim: the latest block carries `timestampMs`, or the chain is Base):
 *   the head advances about every 200 ms (src/node/cadence.ts); `timestampMs` is an optional field
 *   in Base's docs, reported, never required; `pending` has no flashblocks there, so it is not asked.
 * - **flashblocks** (a chain that streams flashblocks: no `timestampMs`): whether
 *   `eth_getBlockByNumber("pending")` is newer than `latest`, reported as before (a node without the
 *   feed is a healthy canonical node; flashlog reads the feed itself).
 *
 * Exit codes: 0 healthy, 1 behind (or safe head stalled, wrong chain, not making 200 ms blocks), 2 unreachable.
 */
export interface NodeStatusOptions {
  readonly rpcUrl: string;
  /** The consensus client's RPC (op-node / base-consensus, port 7545); optional. */
  readonly consensusRpcUrl?: string | undefined;
  readonly maxLagMinutes: number;
  /** The safe head further than this behind the unsafe head fails (needs the consensus RPC). */
  readonly maxSafeLagMinutes?: number | undefined;
  readonly expectChainId?: number | undefined;
  readonly timeoutMs: number;
  /** How long the Denim rule watches the head; 0 skips the cadence check (lag only). */
  readonly cadenceWindowMs?: number;
  /** Seconds since the epoch; injectable for tests. */
  readonly nowSeconds?: number;
}

export type NodeRule = 'denim' | 'flashblocks';

export interface NodeStatus {
  readonly exitCode: 0 | 1 | 2;
  readonly healthy: boolean;
  readonly chainId: number | null;
  /** Which rule judged the node, and why; null when the node was unreachable. */
  readonly rule: NodeRule | null;
  readonly ruleReason: string | null;
  readonly latestBlock: number | null;
  readonly latestTimestamp: number | null;
  readonly latestTimestampMs: number | null;
  readonly unsafeL2: L2Ref | null;
  readonly safeL2: L2Ref | null;
  readonly minutesBehind: number | null;
  /** The safe head's lag behind the unsafe head; null without a consensus RPC. */
  readonly safeLag: SafeLag | null;
  /** The denim rule's measure; null under the flashblocks rule or with a zero window. */
  readonly cadence: Cadence | null;
  /** The flashblocks rule's measure; null under the denim rule. */
  readonly preconfirmations: Preconfirmations | null;
  /** One line per finding, for people. */
  readonly lines: readonly string[];
}

/** Base mainnet and Base Sepolia: Denim since 2026-11-05 and 2026-10-21. */
const DENIM_CHAINS = new Set([8453, 84532]);

export async function checkNodeStatus(options: NodeStatusOptions): Promise<NodeStatus> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  let exitCode: 0 | 1 | 2 = 0;
  const fail = (code: 1 | 2, line: string) => {
    exitCode = Math.max(exitCode, code) as 0 | 1 | 2;
    lines.push(line);
  };
  const node = createUpstream(options.rpcUrl, { timeoutMs: options.timeoutMs });
  const cadenceWindowMs = options.cadenceWindowMs ?? 2000;

  let chainId: number | null = null;
  let latest: Latest | null = null;
  try {
    chainId = Number(BigInt(z.string().parse(await node.call('eth_chainId', []))));
    latest = await readLatest(node);
    lines.push(
      `execution RPC: ok, ${options.rpcUrl} serves chain ${chainId}, latest block ${latest.number} (${now - latest.timestamp} s old)`,
    );
  } catch (error) {
    fail(2, `execution RPC: FAIL, ${options.rpcUrl} unreachable: ${errorMessage(error)}`);
  }
  if (chainId !== null && options.expectChainId !== undefined) {
    if (chainId !== options.expectChainId) fail(1, `chain: FAIL, the node serves chain ${chainId}, expected ${options.expectChainId}`);
    else lines.push(`chain: ok, ${chainId} as expected`);
  }

  let rule: NodeRule | null = null;
  let ruleReason: string | null = null;
  let cadence: Cadence | null = null;
  let preconfirmations: NodeStatus['preconfirmations'] = null;
  if (latest) {
    const baseChain = chainId !== null && DENIM_CHAINS.has(chainId);
    rule = latest.timestampMs !== null || baseChain ? 'denim' : 'flashblocks';
    ruleReason =
      latest.timestampMs !== null
        ? 'the latest block carries timestampMs: a Denim chain (200 ms blocks, no flashblocks)'
        : baseChain
          ? `chain ${chainId} is Base, on Denim since ${chainId === 8453 ? '2026-11-05' : '2026-10-21'} (200 ms blocks, no flashblocks)`
          : 'the latest block has no timestampMs: a chain that streams flashblocks';
    lines.push(`rule: ${rule} (${ruleReason})`);
    if (rule === 'denim') {
      if (latest.timestampMs === null) {
        lines.push(`timestampMs: absent on the latest block (an optional field in Base's docs; judged by the head's cadence alone)`);
      }
      if (cadenceWindowMs > 0) {
        try {
          cadence = judgeCadence(await sampleHead(() => readLatest(node), cadenceWindowMs), DENIM_BLOCK_MS);
          if (cadence.healthy) lines.push(cadence.line);
          else fail(1, cadence.line);
        } catch (error) {
          fail(2, `cadence: FAIL, execution RPC ${options.rpcUrl} stopped answering while its head was watched: ${errorMessage(error)}`);
        }
      }
      lines.push('pending: not asked; Denim has no flashblocks, so the 200 ms cadence is the check');
    } else {
      preconfirmations = await checkPending(node, latest.number, lines);
    }
  }

  const lag = await checkLag(options, now, latest, fail, lines);
  return {
    exitCode,
    healthy: exitCode === 0,
    chainId,
    rule,
    ruleReason,
    latestBlock: latest?.number ?? null,
    latestTimestamp: latest?.timestamp ?? null,
    latestTimestampMs: latest?.timestampMs ?? null,
    unsafeL2: lag.unsafeL2,
    safeL2: lag.safeL2,
    minutesBehind: lag.minutesBehind,
    safeLag: lag.safeLag,
    cadence,
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
export async function checkUpstreamLag(
  rpcUrl: string | undefined,
  logger: Logger,
  maxLagMinutes = 5,
  timeoutMs = 3000,
): Promise<NodeStatus | null> {
  if (!rpcUrl) return null;
  const status = await checkNodeStatus({ rpcUrl, maxLagMinutes, timeoutMs, cadenceWindowMs: 0 }).catch(() => null);
  if (!status) return null;
  if (status.exitCode === 2) logger.warn({ upstream: rpcUrl, detail: status.lines }, 'upstream RPC unreachable at start');
  else if (status.exitCode === 1)
    logger.warn(
      { upstream: rpcUrl, minutesBehind: status.minutesBehind, detail: status.lines },
      'upstream RPC is behind: pending answers will be stale until it catches up',
    );
  return status;
}
