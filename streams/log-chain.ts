import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../src/config/settings.ts';
import type { Context } from '../src/context.ts';
import { ConfigError, JsonRpcError, errorMessage } from '../src/errors.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import { resumeCandidates, type LoggedBlock } from '../src/chain/resume.ts';
import { readBlocksTail } from '../src/log/log-tail.ts';
import {
  checkLogChain,
  createChainGuard,
  describeChain,
  logHasRecords,
  readChainStamp,
  upstreamChain,
  type ChainCheck,
  type LogPlace,
} from '../src/log/chain-stamp.ts';
import type { ChainIdentity } from '../src/records/meta.ts';
import { embeddedLogFile, openEmbeddedLogFile, openLog } from '../src/log/open.ts';
import type { Log } from '../src/log/port.ts';
import { previousLogDir, setAsideLogFiles } from '../src/log/set-aside.ts';
import { withTopicPrefix } from '../src/log/topic-prefix.ts';

/**
 * Opens the log and holds it against the chain of the node the process follows or serves
 * (src/log/chain-stamp.ts): a log of another chain stops the command with one line; a writer
 * stamps a log that has none.
 *
 *   node (--rpc): eth_chainId + block 0's hash --> checkLogChain(log) --> same | stamped | mismatch: exit 2
 *
 * `run --devnet` starts a new chain every time, so it starts a fresh log: the embedded log is moved
 * to <data-dir>/previous/, and a Kafka log under the topic prefix must be empty.
 */
export interface ChainLogOptions {
  /** Writes to the log (ingest, run): stamps an unstamped log. Readers never write the stamp. */
  readonly writer: boolean;
  /** The node whose chain the log must hold; without one the log is not checked. */
  readonly rpcUrl?: string | undefined;
  /** The node is a devnet this process has just started: a new chain, in a fresh log. */
  readonly newDevnet?: boolean;
}

/** How long a command waits at start for its node to name its chain before going on unchecked. */
const chainWaitMs = 5000;

export async function openChainLog(ctx: Context, options: ChainLogOptions): Promise<Log> {
  const { config, logger } = ctx;
  const place = logPlace(config);
  const kafka = config.log === 'kafka';
  if (options.newDevnet && !kafka) await startFreshEmbeddedLog(ctx);
  const chain = options.rpcUrl ? await nodeChain(ctx, options.rpcUrl) : null;
  const log = await openLog(config, logger);
  try {
    if (options.newDevnet && kafka) await requireEmptyLog(log, place, chain);
    const check = await checkLogChain(log, {
      expected: chain,
      expectedFrom: `the node at ${options.rpcUrl}`,
      writer: options.writer,
      place,
    });
    report(ctx, check, { where: place.description, writer: options.writer, nodeGiven: chain !== null });
  } catch (error) {
    await log.close();
    throw error;
  }
  return log;
}

/**
 * One line on what the check found. Confirmations are `info` for writers and `debug` for readers:
 * `tail` prints records on stdout, where the log lines go too.
 */
function report(
  ctx: Context,
  check: ChainCheck,
  { where, writer, nodeGiven }: { where: string; writer: boolean; nodeGiven: boolean },
): void {
  const { logger } = ctx;
  const confirm = writer ? logger.info.bind(logger) : logger.debug.bind(logger);
  switch (check.kind) {
    case 'same':
      confirm({ chain: describeChain(check.chain) }, `the log ${where} holds the node's chain`);
      return;
    case 'unchecked':
      confirm({ chain: describeChain(check.stamp) }, `the log ${where} holds this chain (not checked: no --rpc to compare with)`);
      return;
    case 'stamped':
      if (check.hadRecords)
        logger.warn(
          { chain: describeChain(check.chain) },
          `the log ${where} had no chain stamp (made by an older flashlog): stamped it with the node's chain`,
        );
      else logger.info({ chain: describeChain(check.chain) }, `stamped the new log ${where} with the node's chain`);
      return;
    case 'unstamped':
      if (!nodeGiven) confirm(`no node named the chain (--rpc): the log ${where} is neither checked nor stamped`);
      else if (check.hadRecords) logger.warn(`the log ${where} has no chain stamp (made by an older flashlog): reading it unchecked`);
      else logger.debug(`the log ${where} is new and not stamped yet (its writer stamps it)`);
  }
}

/** What a writer needs besides the log: where the log ends, and the node's chain held against the log's while it writes. */
export interface WriterGuards {
  readonly resume: readonly LoggedBlock[];
  readonly verifyChain?: (() => Promise<void>) | undefined;
}

/** How many of the log's newest blocks a restarted writer may find its place among (a reorg while it was down). */
const resumeDepth = 64;

/**
 * A writer's guards (src/chain/resume.ts, src/log/chain-stamp.ts createChainGuard): the log's
 * newest blocks, so ingest resumes where the log ends, and the chain check it runs all the time.
 */
export async function writerGuards(ctx: Context, log: Log, rpcUrl: string | undefined): Promise<WriterGuards> {
  const resume = resumeCandidates(await readBlocksTail(log, resumeDepth), resumeDepth);
  if (resume[0])
    ctx.logger.info(
      { block: Number(resume[0].number) },
      "the log ends at this block: ingest resumes there (backfilling to the node's head)",
    );
  if (!rpcUrl) return { resume };
  const upstream = createUpstream(rpcUrl, { timeoutMs: ctx.config.rpcTimeoutMs });
  return { resume, verifyChain: createChainGuard(log, upstream, logPlace(ctx.config), `the node at ${rpcUrl}`) };
}

/** `in ./data`, `under topic prefix "base." on Kafka 127.0.0.1:9092`, and what to do about a log of another chain there. */
export function logPlace(config: Config): LogPlace {
  const prefix = config.topicPrefix;
  if (config.log === 'kafka') {
    return {
      description: `${prefix ? `under topic prefix "${prefix}"` : 'under no topic prefix'} on Kafka ${(config.kafkaBrokers ?? []).join(',')}`,
      remedy: 'give each chain a topic prefix of its own (--topic-prefix, FLASHLOG_TOPIC_PREFIX)',
    };
  }
  return {
    description: `in ${config.dataDir}${prefix ? ` under topic prefix "${prefix}"` : ''}`,
    remedy: `give each chain a data directory of its own (--data-dir, FLASHLOG_DATA_DIR), or move ${config.dataDir} away`,
  };
}

/** The node's chain, asked for chainWaitMs at most; null (with a warning) when it does not say. */
async function nodeChain(ctx: Context, rpcUrl: string): Promise<ChainIdentity | null> {
  const upstream = createUpstream(rpcUrl, { timeoutMs: Math.min(ctx.config.rpcTimeoutMs, chainWaitMs) });
  const deadline = Date.now() + chainWaitMs;
  let failure: unknown;
  while (!ctx.shutdown.signal.aborted) {
    try {
      return await upstreamChain(upstream);
    } catch (error) {
      failure = error;
    }
    // Asked again only while the node is out of reach: one that answered (an error, no block 0) says the same again.
    const unreachable = failure instanceof JsonRpcError && failure.rpcCode === -32000;
    if (!unreachable || Date.now() + 500 >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  ctx.logger.warn(
    { rpc: rpcUrl, err: errorMessage(failure) },
    `the node did not name its chain (asked for up to ${chainWaitMs / 1000} s): the log is not checked against it`,
  );
  return null;
}

/** `run --devnet` with the embedded log: the previous devnet's log goes to <data-dir>/previous/. */
async function startFreshEmbeddedLog(ctx: Context): Promise<void> {
  const { config, logger } = ctx;
  const path = join(config.dataDir, embeddedLogFile);
  let held = 'a chain it does not name';
  if (existsSync(path)) {
    try {
      const old = withTopicPrefix(openEmbeddedLogFile(path), config.topicPrefix);
      try {
        const stamp = await readChainStamp(old).catch(() => null);
        if (stamp) held = describeChain(stamp);
      } finally {
        await old.close();
      }
    } catch {
      // Unreadable: moved aside all the same.
    }
  }
  const names = [embeddedLogFile, `${embeddedLogFile}-wal`, `${embeddedLogFile}-shm`];
  // The view's snapshot in the data directory goes with its log (one elsewhere, --view-snapshot,
  // names the log it was taken from and is not used with the new one).
  if (!config.viewSnapshot) names.push('view.snapshot.json');
  const moved = await setAsideLogFiles(config.dataDir, names);
  if (moved.length > 0)
    logger.info(
      { moved, to: join(config.dataDir, previousLogDir), held },
      `run --devnet starts a new chain in a fresh log: moved the previous log (${held}) to ${join(config.dataDir, previousLogDir)}`,
    );
}

/** `run --devnet` with Kafka: topics cannot be moved aside, so the log under the prefix must hold nothing yet. */
async function requireEmptyLog(log: Log, place: LogPlace, chain: ChainIdentity | null): Promise<void> {
  const stamp = await readChainStamp(log);
  if (!stamp && !(await logHasRecords(log))) return;
  throw new ConfigError(
    `run --devnet starts a new chain${chain ? ` (${describeChain(chain)})` : ''}, but the log ${place.description} already holds ${stamp ? describeChain(stamp) : 'records of a chain it does not name'}; ${place.remedy}`,
  );
}
