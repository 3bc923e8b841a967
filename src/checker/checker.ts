import type { Logger } from 'pino';
import type { Hex } from 'viem';
import { BASE_TIME_PREDEPLOY } from '../op/basetime.ts';
import { errorMessage } from '../errors.ts';
import type { Registry } from '../obs/metrics.ts';
import { CheckerChainMismatchError, createChainWatch } from './chains.ts';
import { resultOf, type Endpoint } from './endpoint.ts';
import { createHeadClock, readyHeights } from './heads.ts';
import { createCheckerHealth, type CheckerHealth } from './health.ts';
import { judgeHeight } from './judge.ts';
import { recordPending } from './record.ts';
import { identityKey, type PendingIdentity, type Snapshot } from './snapshot.ts';
import type { Progress, Summary, Tally } from './tally.ts';

/**
 * `flashlog check-gateway` as a library: holds a running gateway against its node. First, and
 * again after every failed poll (a reconnect), when the node's head goes back and every
 * `chainCheckMs`, it compares the two sides' chains (chains.ts). Then it polls the gateway's
 * `pending` block; each new version of it is recorded (record.ts); once the node's head is a block
 * past that height and `graceMs` has gone by, every version of the height is judged against the
 * node's sealed block (judge.ts, heads.ts). The tally counts it all; health.ts exports the chain
 * check and how long nothing was judged.
 *
 * @example
 *   const tally = createTally(registry);
 *   const summary = await runChecker({ gateway: httpEndpoint(g, 5000), node: httpEndpoint(n, 5000), logger, tally, signal, durationMs: 60_000 });
 */
export interface CheckerOptions {
  readonly gateway: Endpoint;
  readonly node: Endpoint;
  readonly logger: Logger;
  readonly tally: Tally;
  /** Stops recording when it aborts; what is recorded is still judged. */
  readonly signal: AbortSignal;
  /** Stop recording after this long (undefined: until `signal`). */
  readonly durationMs?: number;
  /** Stop once this many heights are judged (compared or replaced). */
  readonly maxBlocks?: number;
  /** Between two polls of the gateway's pending block. */
  readonly pollMs?: number;
  /** After the node seals a height, how long the gateway has to withdraw a version the node did not seal. */
  readonly graceMs?: number;
  /** After recording stops, how long to wait for the node to seal what was recorded. */
  readonly settleMs?: number;
  readonly maxAccounts?: number;
  readonly maxTokenCalls?: number;
  /** Calls in flight at once to either side. */
  readonly concurrency?: number;
  /**
   * A gateway and a node of different chains: `exit` throws CheckerChainMismatchError (a bounded
   * check); `wait` (a canary) logs it, sets `flashlog_checker_chain_mismatch`, drops what it
   * recorded, and goes on checking the chains until they agree again.
   */
  readonly onChainMismatch?: 'exit' | 'wait';
  /** Between two chain checks while nothing failed (default 30 s; 5 s at most while they differ). */
  readonly chainCheckMs?: number;
  /** After this long without a height judged, a warning and `flashlog_checker_idle` 1 (default 5 minutes). */
  readonly idleAlertMs?: number;
  /** Between two progress reports (default 30 s). */
  readonly progressMs?: number;
  /** Each progress report (default: a JSON log line `checker progress`). */
  readonly onProgress?: (progress: Progress) => void;
  /** Where the chain and idle gauges go (flashlog_checker_*); none when absent. */
  readonly metrics?: Registry;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export async function runChecker(options: CheckerOptions): Promise<Summary> {
  const { gateway, node, logger, tally } = options;
  const pollMs = options.pollMs ?? 100;
  const graceMs = options.graceMs ?? 3000;
  const concurrency = options.concurrency ?? 32;
  const idleAlertMs = options.idleAlertMs ?? 300_000;
  const health = createCheckerHealth({ startMs: Date.now(), idleAlertMs, registry: options.metrics });
  const code = resultOf<Hex>('eth_getCode', await node.call('eth_getCode', [BASE_TIME_PREDEPLOY, 'latest']));
  const baseTime = code !== '0x';
  logger.info({ gateway: gateway.url, node: node.url, baseTime }, 'checking the gateway against its node');

  const snapshots = new Map<bigint, Snapshot[]>();
  const recorded = new Set<string>();
  const transactionsSeen = new Map<string, Set<string>>();
  const seenTransactions = (identity: PendingIdentity) => {
    const key = `${identity.number}/${identity.hash ?? 'building'}`;
    let seen = transactionsSeen.get(key);
    if (!seen) transactionsSeen.set(key, (seen = new Set()));
    return seen;
  };
  let clock = createHeadClock();
  /** Counts the changes of chain: a poll that straddles one keeps nothing. */
  let chainEpoch = 0;
  let lastHeadRead = -1n;
  let judged = 0;
  let failures = 0;
  const fail = (what: string, error: unknown) => {
    tally.skipped(what);
    if (failures++ % 50 === 0) logger.warn({ err: errorMessage(error) }, `checker: ${what}`);
  };

  const chains = createChainWatch({
    gateway,
    node,
    logger,
    health,
    mode: options.onChainMismatch ?? 'exit',
    checkEveryMs: options.chainCheckMs ?? 30_000,
    // What was recorded cannot be judged against a node of another chain, nor the heights dated
    // by the heads of the one before.
    onChainChanged: () => {
      for (const versions of snapshots.values())
        for (let i = 0; i < versions.length; i++) tally.skipped('the gateway and the node served different chains');
      snapshots.clear();
      recorded.clear();
      transactionsSeen.clear();
      clock = createHeadClock();
      chainEpoch++;
    },
  });

  const readNodeHead = async () => {
    const head = BigInt(resultOf<string>('eth_blockNumber', await node.call('eth_blockNumber', [])));
    // A node that went back may be another chain now (restarted): compared once per step back.
    if (clock.observe(head, Date.now()) === 'lower' && head < lastHeadRead) chains.recheck();
    lastHeadRead = head;
  };

  /** Judges every recorded height the node has sealed a block past, once the grace is over. */
  let judging: Promise<void> | undefined;
  const judgeReady = (): Promise<void> => {
    judging ??= (async () => {
      for (const number of readyHeights(snapshots.keys(), clock, Date.now(), graceMs)) {
        const versions = snapshots.get(number);
        if (!versions) continue;
        snapshots.delete(number);
        try {
          await judgeHeight(number, versions, {
            gateway,
            node,
            tally,
            concurrency,
            onMismatch: (block, comparison) =>
              logger.warn(
                { block, mismatches: comparison.mismatches.slice(0, 5).map((m) => ({ ...m })) },
                'checker: the gateway answered what the node did not',
              ),
          });
          judged++;
          health.judged(Date.now());
        } catch (error) {
          fail('a height could not be judged', `height ${number}: ${errorMessage(error)}`);
          chains.recheck();
        }
      }
      // Heights far below the head are not served as pending again: forget them.
      const floor = clock.head - 64n;
      const old = (key: string) => BigInt(key.slice(0, key.indexOf('/'))) < floor;
      clock.forgetBelow(floor);
      for (const key of [...transactionsSeen.keys()]) if (old(key)) transactionsSeen.delete(key);
      for (const key of [...recorded]) if (old(key)) recorded.delete(key);
    })().finally(() => (judging = undefined));
    return judging;
  };

  const deadline = options.durationMs === undefined ? Infinity : Date.now() + options.durationMs;
  const done = () => options.signal.aborted || Date.now() >= deadline || (options.maxBlocks !== undefined && judged >= options.maxBlocks);
  const report = createReporter(options, health);
  while (!done()) {
    try {
      const epoch = chainEpoch;
      if (await chains.hold()) {
        const [outcome] = await Promise.all([
          recordPending({
            gateway,
            seenTransactions,
            recorded,
            onOlder: (read) => tally.pendingOlder(read),
            concurrency,
            maxAccounts: options.maxAccounts ?? 4,
            maxTokenCalls: options.maxTokenCalls ?? 1,
            baseTime,
          }),
          readNodeHead(),
        ]);
        // A node head that went back has the chains compared at once: a poll across a change of chain keeps nothing.
        const kept = (await chains.hold()) && epoch === chainEpoch;
        // Not kept: recorded again at the next poll.
        if (!kept && 'snapshot' in outcome && outcome.snapshot) recorded.delete(identityKey(outcome.snapshot.identity));
        if (kept && (outcome.kind === 'recorded' || outcome.kind === 'moved') && outcome.snapshot) {
          const number = outcome.snapshot.identity.number;
          snapshots.set(number, [...(snapshots.get(number) ?? []), outcome.snapshot]);
        }
        if (kept && outcome.kind === 'moved') tally.skipped('pending moved while recording (its block and receipts kept)');
        if (kept) void judgeReady();
      }
    } catch (error) {
      if (error instanceof CheckerChainMismatchError) throw error;
      // Whatever failed, the chains are compared again once both sides answer (after a reconnect).
      chains.recheck();
      fail(chains.state === 'unknown' ? 'the chains could not be compared' : 'a poll failed', error);
    }
    report(chains.state);
    await sleep(pollMs, options.signal);
  }
  // What was recorded is judged once sealed, whatever stopped the recording.
  const settleBy = Date.now() + (options.settleMs ?? graceMs + 20_000);
  while (snapshots.size > 0 && Date.now() < settleBy) {
    try {
      await readNodeHead();
    } catch (error) {
      fail('a poll failed', error);
    }
    await judgeReady();
    if (snapshots.size > 0) await sleep(200);
  }
  await judging;
  for (const [, versions] of snapshots) for (let i = 0; i < versions.length; i++) tally.skipped('not sealed by the node before the end');
  return tally.summary();
}

/** Each poll: says once when nothing was judged for the idle threshold, and reports progress every `progressMs`. */
function createReporter(options: CheckerOptions, health: CheckerHealth): (chains: Progress['chains']) => void {
  const { logger, tally } = options;
  const progressMs = options.progressMs ?? 30_000;
  let lastProgress = Date.now();
  return (chains) => {
    const now = Date.now();
    const { idleMs, newlyIdle } = health.idle(now);
    if (newlyIdle)
      logger.warn(
        { idleMinutes: Math.round(idleMs / 60_000), chains, skipped: tally.summary().skipped },
        `checker: no pending height judged for ${Math.round(idleMs / 60_000)} minutes: nothing is being held against the node`,
      );
    if (now - lastProgress < progressMs) return;
    lastProgress = now;
    const progress: Progress = { summary: tally.summary(), idleMs, chains };
    if (options.onProgress) options.onProgress(progress);
    else logger.info(progressFields(progress), 'checker progress');
  };
}

/** A progress report as the fields of a JSON log line. */
export const progressFields = ({ summary, idleMs, chains }: Progress) => ({
  blocks: summary.blocks,
  replaced: summary.replaced,
  answers: summary.answers,
  fields: summary.fieldsCompared,
  mismatches: summary.mismatches,
  chains,
  idleSeconds: Math.round(idleMs / 1000),
});
