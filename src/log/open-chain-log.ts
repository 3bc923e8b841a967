import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../context.ts';
import { errorMessage } from '../errors.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import type { ChainIdentity } from '../records/meta.ts';
import { askChainAgain, chainCheckLine, chainWaitMs, chainRetryMs, freshKafkaLogRefusal, freshLogFiles, logPlace } from './chain-log.ts';
import { checkLogChain, describeChain, logHasRecords, readChainStamp, upstreamChain } from './chain-stamp.ts';
import { embeddedLogFile, openEmbeddedLogFile, openLog } from './open.ts';
import type { Log } from './port.ts';
import { previousLogDir, setAsideLogFiles } from './set-aside.ts';
import { withTopicPrefix } from './topic-prefix.ts';

/**
 * Opens the log and holds it against the chain of the node the process follows or serves, by the
 * rules of chain-log.ts: a log of another chain stops the command with one line; a writer stamps a
 * log that has none; `run --devnet` starts a fresh log.
 */
export interface ChainLogOptions {
  /** Writes to the log (ingest, run): stamps an unstamped log. Readers never write the stamp. */
  readonly writer: boolean;
  /** The node whose chain the log must hold; without one the log is not checked. */
  readonly rpcUrl?: string | undefined;
  /** The node is a devnet this process has just started: a new chain, in a fresh log. */
  readonly newDevnet?: boolean;
}

/**
 * @example const log = await openChainLog(ctx, { writer: true, rpcUrl: 'http://127.0.0.1:8545' });
 */
export async function openChainLog(ctx: Context, options: ChainLogOptions): Promise<Log> {
  const { config, logger } = ctx;
  const place = logPlace(config);
  const kafka = config.log === 'kafka';
  if (options.newDevnet && !kafka) await startFreshEmbeddedLog(ctx);
  const chain = options.rpcUrl ? await nodeChain(ctx, options.rpcUrl) : null;
  const log = await openLog(config, logger);
  try {
    if (options.newDevnet && kafka) {
      const stamp = await readChainStamp(log);
      const refusal = freshKafkaLogRefusal({ stamp, hasRecords: !stamp && (await logHasRecords(log)), chain, place });
      if (refusal) throw refusal;
    }
    const check = await checkLogChain(log, {
      expected: chain,
      expectedFrom: `the node at ${options.rpcUrl}`,
      writer: options.writer,
      place,
    });
    const line = chainCheckLine(check, { where: place.description, writer: options.writer, nodeGiven: chain !== null });
    logger[line.level](line.chain === undefined ? {} : { chain: line.chain }, line.message);
  } catch (error) {
    await log.close();
    throw error;
  }
  return log;
}

/**
 * The node's chain, asked for chainWaitMs at most (again every chainRetryMs while the node is out
 * of reach); null, with a warning, when it does not say.
 */
export async function nodeChain(ctx: Pick<Context, 'config' | 'logger' | 'shutdown'>, rpcUrl: string): Promise<ChainIdentity | null> {
  const upstream = createUpstream(rpcUrl, { timeoutMs: Math.min(ctx.config.rpcTimeoutMs, chainWaitMs) });
  const deadline = Date.now() + chainWaitMs;
  let failure: unknown;
  while (!ctx.shutdown.signal.aborted) {
    try {
      return await upstreamChain(upstream);
    } catch (error) {
      failure = error;
    }
    if (!askChainAgain(failure, Date.now(), deadline)) break;
    await new Promise((resolve) => setTimeout(resolve, chainRetryMs));
  }
  ctx.logger.warn(
    { rpc: rpcUrl, err: errorMessage(failure) },
    `the node did not name its chain (asked for up to ${chainWaitMs / 1000} s): the log is not checked against it`,
  );
  return null;
}

/** `run --devnet` with the embedded log: the previous devnet's log goes to <data-dir>/previous/. */
export async function startFreshEmbeddedLog(ctx: Pick<Context, 'config' | 'logger'>): Promise<void> {
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
  const moved = await setAsideLogFiles(config.dataDir, freshLogFiles(embeddedLogFile, Boolean(config.viewSnapshot)));
  if (moved.length > 0)
    logger.info(
      { moved, to: join(config.dataDir, previousLogDir), held },
      `run --devnet starts a new chain in a fresh log: moved the previous log (${held}) to ${join(config.dataDir, previousLogDir)}`,
    );
}
