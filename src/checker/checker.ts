import type { Logger } from 'pino';
import type { Hex } from 'viem';
import { BASE_TIME_PREDEPLOY } from '../evm/op/basetime.ts';
import { errorMessage } from '../errors.ts';
import { resultOf, type Endpoint } from './endpoint.ts';
import { judgeHeight } from './judge.ts';
import { recordPending } from './record.ts';
import type { PendingIdentity, Snapshot } from './snapshot.ts';
import type { Summary, Tally } from './tally.ts';

/**
 * `flashlog check-gateway` as a library: holds a running gateway against its node. It polls the
 * gateway's `pending` block; each new version of it is recorded (record.ts); once the node's head
 * is a block past that height and `graceMs` has gone by, every version of the height is judged
 * against the node's sealed block (judge.ts). The tally counts it all.
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
  /** When the node's head first reached each height. */
  const headSince = new Map<bigint, number>();
  let nodeHead = -1n;
  let judged = 0;
  let failures = 0;
  const fail = (what: string, error: unknown) => {
    tally.skipped(what);
    if (failures++ % 50 === 0) logger.warn({ err: errorMessage(error) }, `checker: ${what}`);
  };

  const readNodeHead = async () => {
    const head = BigInt(resultOf<string>('eth_blockNumber', await node.call('eth_blockNumber', [])));
    const now = Date.now();
    for (let height = nodeHead < 0n ? head : nodeHead + 1n; height <= head; height++) headSince.set(height, now);
    if (head > nodeHead) nodeHead = head;
  };

  /** Judges every recorded height the node has sealed a block past, once the grace is over. */
  let judging: Promise<void> | undefined;
  const judgeReady = (): Promise<void> => {
    judging ??= (async () => {
      for (const number of [...snapshots.keys()].sort((a, b) => (a < b ? -1 : 1))) {
        const since = headSince.get(number + 1n);
        if (since === undefined || Date.now() - since < graceMs) break;
        const versions = snapshots.get(number)!;
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
        } catch (error) {
          fail('a height could not be judged', new Error(`height ${number}: ${errorMessage(error)}`));
        }
      }
      // Heights far below the head are not served as pending again: forget them.
      const old = (key: string) => BigInt(key.slice(0, key.indexOf('/'))) < nodeHead - 64n;
      for (const height of [...headSince.keys()]) if (height < nodeHead - 64n) headSince.delete(height);
      for (const key of [...transactionsSeen.keys()]) if (old(key)) transactionsSeen.delete(key);
      for (const key of [...recorded]) if (old(key)) recorded.delete(key);
    })().finally(() => (judging = undefined));
    return judging;
  };

  const deadline = options.durationMs === undefined ? Infinity : Date.now() + options.durationMs;
  const done = () => options.signal.aborted || Date.now() >= deadline || (options.maxBlocks !== undefined && judged >= options.maxBlocks);
  let lastProgress = Date.now();
  while (!done()) {
    try {
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
      if ((outcome.kind === 'recorded' || outcome.kind === 'moved') && outcome.snapshot) {
        const number = outcome.snapshot.identity.number;
        snapshots.set(number, [...(snapshots.get(number) ?? []), outcome.snapshot]);
      }
      if (outcome.kind === 'moved') tally.skipped('pending moved while recording (its block and receipts kept)');
    } catch (error) {
      fail('a poll failed', error);
    }
    void judgeReady();
    if (Date.now() - lastProgress >= 30_000) {
      lastProgress = Date.now();
      const summary = tally.summary();
      logger.info(
        {
          blocks: summary.blocks,
          replaced: summary.replaced,
          answers: summary.answers,
          fields: summary.fieldsCompared,
          mismatches: summary.mismatches,
        },
        'checker progress',
      );
    }
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
