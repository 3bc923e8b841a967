import type { Context } from '../src/context.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import { resumeCandidates, resumeDepth, type LoggedBlock } from '../src/chain/resume.ts';
import { readBlocksTail } from '../src/log/log-tail.ts';
import { createChainGuard } from '../src/log/chain-stamp.ts';
import { logPlace } from '../src/log/chain-log.ts';
import type { Log } from '../src/log/port.ts';

/**
 * A writer's guards, wired from the log (src/log/log-tail.ts, src/chain/resume.ts) and its node
 * (src/log/chain-stamp.ts createChainGuard); the log itself is opened by src/log/open-chain-log.ts.
 *
 *   log tail (resumeDepth blocks) -> resumeCandidates -> resume: where ingest starts again
 *   node (--rpc) -> createChainGuard(log) -> verifyChain: the node's chain held against the log's while writing
 */
export interface WriterGuards {
  readonly resume: readonly LoggedBlock[];
  readonly verifyChain?: (() => Promise<void>) | undefined;
}

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
