import type { Hex } from 'viem';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/records/topics.ts';
import { chainRecordSchema, type ChainRecord } from '../../src/records/chain.ts';
import { logRecordSchema } from '../../src/records/logs.ts';
import { blockRecordSchema } from '../../src/records/blocks.ts';
import { eventually } from '../helpers/context.ts';
import { rpc } from '../helpers/devnet-feed.ts';
import { readTopic } from '../helpers/execution-harness.ts';
import { startBlocksGateway, type BlocksGateway } from '../helpers/blocks-gateway.ts';
import { assertSchemaValid, validatedRpc } from '../helpers/openrpc-schema.ts';

/**
 * The blocks source end to end on a real Denim devnet (200 ms blocks, the unsafe head replaced
 * every 4 blocks, load): newHeads over the node's WebSocket -> link -> embedded log -> view ->
 * gateway. What it published is the chain, block by block; every reorg withdraws exactly the
 * replaced block's logs; a gateway started later answers as the one that never stopped; `logs`
 * and `pendingLogs` subscribers of the gateway get every log once, in the log's order; `newHeads`
 * and the pending block carry the node's header, field by field. Every answer of the gateway is
 * held against the execution-apis schema of its method (validatedRpc).
 */
type Json = Record<string, unknown>;
const strip = ({ v: _v, index: _index, ...log }: Json) => log;

let net: BlocksGateway;
type Kind = 'logs' | 'pendingLogs' | 'newHeads';
const received: Record<Kind, Json[]> = { logs: [], pendingLogs: [], newHeads: [] };
const kinds: Record<number, Kind> = { 1: 'logs', 2: 'pendingLogs', 3: 'newHeads' };
let blockRecords: { number: bigint; hash: string }[] = [];
let logRecords: Json[] = [];
let chainRecords: ChainRecord[] = [];
let safeNumber = 0n;

beforeAll(async () => {
  net = await startBlocksGateway({ reorgEvery: 4, load: 30, safeLagBlocks: 6, finalizedLagBlocks: 12 });
  const socket = new WebSocket(net.serve.gateway.wsUrl);
  const ids: Record<string, Kind> = {};
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { id?: number; result?: string; params?: { subscription: string; result: Json } };
    if (message.id !== undefined) ids[message.result!] = kinds[message.id]!;
    else if (message.params) received[ids[message.params.subscription]!].push(message.params.result);
  });
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['logs'] }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['pendingLogs', {}] }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_subscribe', params: ['newHeads'] }));
  await eventually(() => (Object.keys(ids).length === 3 ? true : undefined));
  // ~40 blocks (10 replaced heads) under load.
  await eventually(
    async () => (BigInt(await rpc<Hex>(net.devnet.rpcUrl, 'eth_blockNumber')) >= 40n ? true : undefined),
    30_000,
    '40 blocks',
  );
  safeNumber = BigInt((await rpc<{ number: Hex }>(net.devnet.rpcUrl, 'eth_getBlockByNumber', ['safe', false])).number);
  await net.stopIngest();
  await new Promise((resolve) => setTimeout(resolve, 500));
  socket.close();
  blockRecords = (await readTopic(net.log, topics.blocks)).map((record) => {
    const block = blockRecordSchema.parse(JSON.parse(record.value));
    return { number: BigInt(block.blockNumber), hash: (block.header as unknown as { hash: string }).hash };
  });
  logRecords = (await readTopic(net.log, topics.logs)).map((record) => logRecordSchema.parse(JSON.parse(record.value)) as Json);
  chainRecords = (await readTopic(net.log, topics.chain)).map((record) => chainRecordSchema.parse(JSON.parse(record.value)));
}, 60_000);
afterAll(async () => net?.close());

describe('blocks source on a Denim devnet', () => {
  it("publishes each canonical block once, its logs equal to the node's logs block by block", async () => {
    const first = blockRecords[0]!.number;
    expect(safeNumber - first).toBeGreaterThan(10n);
    for (let n = first; n <= safeNumber; n++) {
      const canonical = await rpc<{ hash: Hex }>(net.devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
      expect(blockRecords.filter((block) => block.hash === canonical.hash)).toHaveLength(1);
      const published = logRecords.filter((log) => log.blockHash === canonical.hash && !log.removed).map(strip);
      const nodeLogs = await rpc<Json[]>(net.devnet.rpcUrl, 'eth_getLogs', [{ blockHash: canonical.hash }]);
      expect(published).toEqual(nodeLogs);
    }
  });

  it('withdraws exactly the logs of every replaced head, as removed: true', async () => {
    const reorgs = chainRecords.filter((record) => record.type === 'reorg' && record.replacedBlockHash);
    expect(reorgs.length).toBeGreaterThanOrEqual(3);
    let withdrawn = 0;
    for (const record of reorgs) {
      if (record.type !== 'reorg') continue;
      const replaced = record.replacedBlockHash!;
      const announced = logRecords.filter((log) => log.blockHash === replaced && !log.removed);
      const removed = logRecords.filter((log) => log.blockHash === replaced && log.removed);
      expect(removed.map((log) => ({ ...log, removed: false }))).toEqual(announced);
      withdrawn += removed.length;
      const canonical = await rpc<{ hash: Hex }>(net.devnet.rpcUrl, 'eth_getBlockByNumber', [record.blockNumber, false]);
      expect(canonical.hash).not.toBe(replaced);
    }
    expect(withdrawn).toBeGreaterThan(0);
  });

  it("publishes safe and finalized as they advance, with the node's hashes", async () => {
    for (const level of ['safe', 'finalized'] as const) {
      const heads = chainRecords.filter((record) => record.type === level);
      expect(heads.length).toBeGreaterThan(1);
      const numbers = heads.map((record) => BigInt(record.blockNumber));
      expect(numbers).toEqual([...numbers].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      const last = heads.at(-1)!;
      const block = await rpc<{ hash: Hex }>(net.devnet.rpcUrl, 'eth_getBlockByNumber', [last.blockNumber, false]);
      expect(block.hash).toBe(last.blockHash);
    }
  });

  it("gives logs and pendingLogs subscribers every log once, in the log's order", () => {
    const expected = logRecords.map(strip);
    for (const kind of ['logs', 'pendingLogs'] as const) {
      const got = received[kind];
      expect(got.length).toBeGreaterThan(20);
      for (const log of got) assertSchemaValid(kind, log);
      const start = expected.findIndex((log) => JSON.stringify(log) === JSON.stringify(got[0]));
      expect(start).toBeGreaterThanOrEqual(0);
      expect(got).toEqual(expected.slice(start));
    }
  });

  it('answers pending as the node answers for the block it names, never older than latest, from a gateway started now too', async () => {
    // The source has stopped and the node has moved on: `pending` is now the node's `latest`
    // (the view cannot reach the node's head), for every method, in both gateways.
    const restarted = await net.startServe();
    for (const gateway of [net.serve.gateway.url, restarted.gateway.url]) {
      await eventually(
        async () => {
          const latest = BigInt(await rpc<Hex>(net.devnet.rpcUrl, 'eth_blockNumber'));
          const pending = await validatedRpc<{ number: Hex; hash: Hex; timestampMs: Hex; transactions: Hex[] }>(
            gateway,
            'eth_getBlockByNumber',
            ['pending', false],
          );
          expect(BigInt(pending.number), 'pending is never older than latest').toBeGreaterThanOrEqual(latest);
          expect(pending.timestampMs).toMatch(/^0x/);
          const logs = await validatedRpc<Json[]>(gateway, 'eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]);
          const count = await validatedRpc<Hex>(gateway, 'eth_getBlockTransactionCountByNumber', ['pending']);
          const receipts = await validatedRpc<{ transactionHash: Hex; logs: Json[] }[]>(gateway, 'eth_getBlockReceipts', ['pending']);
          const again = await validatedRpc<{ hash: Hex }>(gateway, 'eth_getBlockByNumber', ['pending', false]);
          if (again.hash !== pending.hash) return undefined; // a block came in between: sample again
          const node = await rpc<{ transactions: Hex[] } | null>(net.devnet.rpcUrl, 'eth_getBlockByHash', [pending.hash, false]);
          if (node === null) return undefined; // replaced at the node meanwhile
          expect(pending.transactions).toEqual(node.transactions);
          expect(BigInt(count)).toBe(BigInt(node.transactions.length));
          expect(receipts.map((receipt) => receipt.transactionHash)).toEqual(node.transactions);
          expect(logs).toEqual(receipts.flatMap((receipt) => receipt.logs));
          expect(logs).toEqual(await rpc<Json[]>(net.devnet.rpcUrl, 'eth_getLogs', [{ blockHash: pending.hash }]));
          return true;
        },
        15_000,
        'a pending sample within one block',
      );
    }
  });

  it("sends newHeads with the node's header, field by field, each valid by the execution-apis schema", async () => {
    const heads = received.newHeads;
    expect(heads.length).toBeGreaterThan(20);
    let compared = 0;
    for (const head of heads) {
      assertSchemaValid('newHeads', head);
      const node = await rpc<Json | null>(net.devnet.rpcUrl, 'eth_getBlockByHash', [head.hash, false]);
      if (!node) continue; // a replaced head the node no longer holds
      const { transactions: _transactions, uncles: _uncles, ...header } = node;
      expect(Object.fromEntries(Object.keys(header).map((field) => [field, head[field]])), `block ${String(head.number)}`).toEqual(header);
      compared++;
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('answers the pending block (full transactions) as the node answers that block, by hash', async () => {
    const pending = await validatedRpc<Json>(net.serve.gateway.url, 'eth_getBlockByNumber', ['pending', true]);
    const node = await rpc<Json | null>(net.devnet.rpcUrl, 'eth_getBlockByHash', [pending.hash, true]);
    if (!node) return expect(blockRecords.at(-1)!.hash).toBe(pending.hash); // replaced since: nothing to compare with
    const { transactions, ...header } = node;
    expect(Object.fromEntries(Object.keys(header).map((field) => [field, pending[field]]))).toEqual(header);
    expect((pending.transactions as Json[]).map((tx) => tx.hash)).toEqual((transactions as Json[]).map((tx) => tx.hash));
  });
});
