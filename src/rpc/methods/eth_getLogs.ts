import { numberToHex } from 'viem';
import { z } from 'zod';
import { InvalidParamsError } from '../../errors.ts';
import type { RpcLog } from '../../records/logs.ts';
import type { IssueParams } from '../../schemas/issue.ts';
import {
  blockParam,
  hashParam,
  latest,
  logFilterFields,
  matchesFilter,
  orDefault,
  toLogFilter,
  type BlockParam,
  type LogFilter,
} from '../params.ts';
import type { PendingBlock } from '../../view/state.ts';
import { defineMethod, type Handler, type MethodContext } from '../method.ts';
import { pendingLogsAnswer } from '../answer-cache.ts';
import { pendingView } from '../pending.ts';

type Log = Record<string, unknown> & { blockNumber?: string; logIndex?: string; blockTimestamp?: string };

const filterMessage = 'expected a filter object {fromBlock, toBlock, address, topics} or {blockHash, address, topics}';

/** `[filter]`: the log filter, then a block hash or a range (each end `latest` by default). */
const params = z
  .tuple([
    z
      .looseObject({}, { error: filterMessage })
      .pipe(z.looseObject({ ...logFilterFields, blockHash: hashParam.nullish() }))
      .refine(
        (filter) =>
          filter.blockHash === undefined || filter.blockHash === null || (filter.fromBlock === undefined && filter.toBlock === undefined),
        {
          error: 'expected either blockHash or fromBlock/toBlock',
          params: { got: 'both' } satisfies IssueParams,
          abort: true,
        },
      )
      .pipe(z.looseObject({ fromBlock: orDefault(blockParam, latest), toBlock: orDefault(blockParam, latest) }))
      .transform((given) => ({
        filter: toLogFilter(given as Parameters<typeof toLogFilter>[0]),
        blockHash: (given.blockHash as `0x${string}` | null | undefined) ?? undefined,
        from: given.fromBlock,
        to: given.toBlock,
      })),
  ])
  .rest(z.unknown());

/**
 * eth_getLogs(filter). `fromBlock`/`toBlock` default to `latest`.
 * - `pending` is the newest block the view holds (pending.ts), so `{fromBlock: 'pending', toBlock:
 *   'pending'}` is that block's logs, the logs of eth_getBlockReceipts('pending').
 * - A range touching `pending` is served from the view: the historical part (from the upstream,
 *   `[fromBlock, canonical]`) plus the held blocks' logs in the range above it, de-duplicated by
 *   (blockNumber, logIndex). `pending` without pre-confirmed data is `latest`.
 * - Other ranges and `blockHash` filters go upstream.
 * - Ranges wider than the limit (2,000 blocks) are rejected with -32602.
 * - Every log carries `blockTimestamp` (added from the block header when the upstream omits it).
 */
const handler: Handler<z.output<typeof params>> = async ([{ filter, blockHash, from, to }], ctx, given) => {
  const filterIn = given[0] as Record<string, unknown>;
  if (blockHash !== undefined) return withTimestamps((await ctx.forward()) as Log[], ctx);
  const touchesPending = isTag(from, 'pending') || isTag(to, 'pending');
  const state = touchesPending ? await pendingView(ctx) : ctx.view();
  const pendingBlocks = state.blocks;
  if (!touchesPending || pendingBlocks.length === 0) {
    const replaced = touchesPending
      ? [
          {
            ...filterIn,
            fromBlock: isTag(from, 'pending') ? 'latest' : filterIn.fromBlock,
            toBlock: isTag(to, 'pending') ? 'latest' : filterIn.toBlock,
          },
        ]
      : given;
    await checkRange(isTag(from, 'pending') ? latest : from, isTag(to, 'pending') ? latest : to, ctx);
    return withTimestamps((await ctx.forward(replaced)) as Log[], ctx);
  }
  const top = pendingBlocks[pendingBlocks.length - 1]!.number;
  const base = pendingBlocks[0]!.number - 1n; // the canonical block under the pending ones
  // `pending` is the newest held block (pending.ts), as a fromBlock as well as a toBlock.
  const fromNumber = from.kind === 'number' ? from.number : isTag(from, 'pending') ? top : await resolveTag(from, ctx);
  const toNumber = to.kind === 'number' ? to.number : isTag(to, 'pending') ? top : await resolveTag(to, ctx);
  if (fromNumber > toNumber) return [];
  if (toNumber - fromNumber + 1n > BigInt(ctx.limits.maxLogsRange)) {
    throw new InvalidParamsError(
      `params[0]: block range of ${toNumber - fromNumber + 1n} blocks (${fromNumber} to ${toNumber}) exceeds the limit of ${ctx.limits.maxLogsRange}`,
    );
  }
  const newest = pendingBlocks[pendingBlocks.length - 1]!;
  // Exactly the pending block: its logs under this filter depend on nothing but that block object, kept serialized.
  if (fromNumber === top && toNumber === top) {
    return pendingLogsAnswer(newest, JSON.stringify(filterIn), () =>
      candidates(newest, filter).filter((log) => matchesFilter(log, filter)),
    );
  }
  let historical: Log[] = [];
  if (fromNumber <= base) {
    const historicalTo = toNumber < base ? toNumber : base;
    historical = (await ctx.upstream.call('eth_getLogs', [
      {
        ...filterIn,
        fromBlock: numberToHex(fromNumber),
        toBlock: numberToHex(historicalTo),
      },
    ])) as Log[];
    historical = await withTimestamps(historical, ctx);
  }
  const seen = new Set(historical.map((log) => `${log.blockNumber}/${log.logIndex}`));
  const pending: RpcLog[] = [];
  for (const block of pendingBlocks) {
    if (block.number < fromNumber || block.number > toNumber) continue;
    for (const log of candidates(block, filter)) {
      if (!matchesFilter(log, filter)) continue;
      const key = `${log.blockNumber}/${log.logIndex}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pending.push(log);
    }
  }
  return historical.length ? [...historical, ...pending] : pending;
};

/** The block's logs that may match: by address through the index, else all. In block order. */
function candidates(block: PendingBlock, filter: LogFilter): readonly RpcLog[] {
  if (!filter.addresses) return block.logs;
  if (filter.addresses.size === 1) return block.logsByAddress.get(filter.addresses.values().next().value!) ?? [];
  const lists = [...filter.addresses].map((address) => block.logsByAddress.get(address) ?? []);
  return lists.flat().sort((a, b) => Number(BigInt(a.logIndex) - BigInt(b.logIndex)));
}

const isTag = (param: BlockParam, tag: string): boolean => param.kind === 'tag' && param.tag === tag;

async function resolveTag(param: BlockParam, ctx: MethodContext): Promise<bigint> {
  if (param.kind === 'number') return param.number;
  if (param.tag === 'earliest') return 0n;
  const block = (await ctx.upstream.call('eth_getBlockByNumber', [param.tag, false])) as { number?: string } | null;
  if (!block?.number) return 0n;
  return BigInt(block.number);
}

async function checkRange(from: BlockParam, to: BlockParam, ctx: MethodContext): Promise<void> {
  if (from.kind === 'tag' && to.kind === 'tag') return;
  const fromNumber = await resolveTag(from, ctx);
  const toNumber = await resolveTag(to, ctx);
  if (toNumber - fromNumber + 1n > BigInt(ctx.limits.maxLogsRange)) {
    throw new InvalidParamsError(
      `params[0]: block range of ${toNumber - fromNumber + 1n} blocks (${fromNumber} to ${toNumber}) exceeds the limit of ${ctx.limits.maxLogsRange}`,
    );
  }
}

/** Adds `blockTimestamp` to upstream logs that lack it, one header fetch per block. */
async function withTimestamps(logs: Log[], ctx: MethodContext): Promise<Log[]> {
  if (!Array.isArray(logs)) return logs;
  const missing = [...new Set(logs.filter((log) => log.blockTimestamp === undefined && log.blockNumber).map((log) => log.blockNumber!))];
  if (missing.length === 0) return logs;
  const timestamps = new Map<string, string>();
  await Promise.all(
    missing.map(async (number) => {
      const block = (await ctx.upstream.call('eth_getBlockByNumber', [number, false])) as { timestamp?: string } | null;
      if (block?.timestamp) timestamps.set(number, block.timestamp);
    }),
  );
  return logs.map((log) =>
    log.blockTimestamp === undefined && log.blockNumber && timestamps.has(log.blockNumber)
      ? { ...log, blockTimestamp: timestamps.get(log.blockNumber) }
      : log,
  );
}

export const eth_getLogs = defineMethod({ name: 'eth_getLogs', params, handler });
