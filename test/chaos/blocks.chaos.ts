import type { Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/records/topics.ts';
import { blockRecordSchema } from '../../src/records/blocks.ts';
import { chainRecordSchema } from '../../src/records/chain.ts';
import { startBlocksGateway, type BlocksGateway } from '../helpers/blocks-gateway.ts';
import { eventually, metricValue } from '../helpers/context.ts';
import { rpc } from '../helpers/devnet-feed.ts';
import { readTopic } from '../helpers/execution-harness.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { report, rssMiB, sleep } from './harness.ts';

/**
 * Scenario 11, the node's WebSocket cut: a Denim devnet (200 ms blocks, load, the unsafe head
 * replaced every 5 blocks) feeds the blocks source through a TCP proxy carrying its newHeads
 * WebSocket. The proxy drops every connection and refuses new ones for CHAOS_BLOCKS_CUT_SECONDS
 * (default 10) while blocks keep coming; the source's safety poll is off, so only the reconnect
 * can backfill. Every canonical block must be published exactly once (0 lost, 0 duplicated), and
 * nothing else but the replaced heads.
 */
const cutSeconds = Number(process.env.CHAOS_BLOCKS_CUT_SECONDS ?? 10);
let net: BlocksGateway | undefined;
let proxy: Awaited<ReturnType<typeof startTcpProxy>> | undefined;
afterAll(async () => {
  await net?.close();
  await proxy?.close();
});

describe('scenario 11: blocks source, node WebSocket cut', () => {
  it(`the newHeads WebSocket cut for ${cutSeconds} s while 200 ms blocks keep coming: backfilled, 0 lost, 0 duplicated`, async () => {
    net = await startBlocksGateway(
      { reorgEvery: 5, load: 20, safeLagBlocks: 5, finalizedLagBlocks: 10 },
      { blocksPollMs: 600_000, reconnectMinMs: 200, reconnectMaxMs: 1000, pingIntervalMs: 500 },
      async (devnet) => {
        proxy = await startTcpProxy({ host: '127.0.0.1', port: devnet.rpcPort });
        return `ws://127.0.0.1:${proxy.port}`;
      },
    );
    const rssBefore = rssMiB(process.pid);
    const { devnet } = net;
    const headNumber = async () => BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_blockNumber'));
    const held = () => metricValue(net!.ctx, 'flashlog_blocks_source_head');
    await eventually(async () => ((await held()) >= 10 ? true : undefined), 20_000, 'the source to follow');
    proxy!.cut(true);
    const cutAt = await headNumber();
    await sleep(cutSeconds * 1000);
    const heldDuringCut = await held();
    proxy!.cut(false);
    const restoredAt = Date.now();
    const restoredHead = await headNumber();
    await eventually(async () => ((await held()) >= Number(restoredHead) ? true : undefined), 30_000, 'the backfill');
    const recoveryMs = Date.now() - restoredAt;
    await sleep(2000);
    const safe = BigInt((await rpc<{ number: Hex }>(devnet.rpcUrl, 'eth_getBlockByNumber', ['safe', false])).number);
    await net.stopIngest();

    const blocks = (await readTopic(net.log, topics.blocks)).map((record) => {
      const block = blockRecordSchema.parse(JSON.parse(record.value));
      return { number: BigInt(block.blockNumber), hash: (block.header as unknown as { hash: string }).hash };
    });
    const replaced = new Set(
      (await readTopic(net.log, topics.chain))
        .map((record) => chainRecordSchema.parse(JSON.parse(record.value)))
        .flatMap((record) => (record.type === 'reorg' && record.replacedBlockHash ? [record.replacedBlockHash] : [])),
    );
    const first = blocks[0]!.number;
    let lost = 0;
    let duplicated = 0;
    const canonical = new Set<string>();
    for (let n = first; n <= safe; n++) {
      const hash = (await rpc<{ hash: Hex }>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash;
      canonical.add(hash);
      const copies = blocks.filter((block) => block.hash === hash).length;
      if (copies === 0) lost += 1;
      if (copies > 1) duplicated += copies - 1;
    }
    const inRange = blocks.filter((block) => block.number <= safe);
    const strangers = inRange.filter((block) => !canonical.has(block.hash) && !replaced.has(block.hash)).length;
    const blocksDuringCut = Number(restoredHead - cutAt);
    report({
      scenario: '11 blocks source: node WebSocket cut',
      load: '200 ms blocks, 20 tx/s, head replaced every 5 blocks',
      faults: `newHeads WebSocket cut ${cutSeconds} s (${blocksDuringCut} blocks missed)`,
      lost,
      duplicates: duplicated,
      recoveryMs,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssMiB(process.pid),
      notes: `blocks ${first}..${safe} checked; held during the cut stayed at ${heldDuringCut}; backfilled ${await metricValue(net.ctx, 'flashlog_blocks_source_backfilled_total')} blocks by parent hash; ${replaced.size} replaced heads`,
    });
    expect(blocksDuringCut).toBeGreaterThan(cutSeconds * 3);
    expect(heldDuringCut).toBeLessThan(Number(restoredHead));
    expect(await metricValue(net.ctx, 'flashlog_blocks_source_problems_total', { reason: 'ws_disconnected' })).toBeGreaterThan(0);
    expect({ lost, duplicated, strangers }).toEqual({ lost: 0, duplicated: 0, strangers: 0 });
    expect(safe - first).toBeGreaterThan(BigInt(blocksDuringCut));
  });
});
