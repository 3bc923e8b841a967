import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssembledBlock } from '../chain/assemble.ts';
import { ConfigError } from '../errors.ts';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { ZERO_HASH } from '../schemas/hex.ts';
import { createExecutor } from './create.ts';
import { createNodeExecutor } from './node.ts';

/**
 * The node executor against a real HTTP upstream that plays a flashblocks-aware node: a receipt
 * becomes visible after a few asks, and one answer can be made malformed.
 */
const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as `0x${string}`;
const block: AssembledBlock = {
  blockNumber: 0x20n,
  index: 1,
  payloadId: '0x0000000000000001',
  header: { number: '0x20', timestamp: '0x6553f100' } as AssembledBlock['header'],
  transactions: [
    { hash: h(1), raw: '0x01' },
    { hash: h(2), raw: '0x02' },
    { hash: h(3), raw: '0x03' },
  ],
  firstNew: 1,
  metadataReceipts: null,
  metadataBalances: null,
};
const receipt = (hash: string, index: number) => ({
  transactionHash: hash,
  transactionIndex: `0x${index.toString(16)}`,
  blockHash: h(0xbb),
  blockNumber: '0x20',
  from: '0x00000000000000000000000000000000000000aa',
  to: null,
  cumulativeGasUsed: '0x5208',
  gasUsed: '0x5208',
  contractAddress: null,
  logsBloom: `0x${'0'.repeat(512)}`,
  status: '0x1',
  type: '0x2',
  l1Fee: '0x10',
  logs: [
    {
      address: '0x00000000000000000000000000000000000000cc',
      topics: [h(9)],
      data: '0x',
      blockNumber: '0x20',
      blockHash: h(0xbb),
      transactionHash: hash,
      transactionIndex: `0x${index.toString(16)}`,
      logIndex: '0x0',
      removed: false,
    },
  ],
});

describe('node executor', () => {
  let url = '';
  let close = () => {};
  const asks = new Map<string, number>();
  let malformed = false;
  beforeAll(async () => {
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => {
        text += chunk;
      });
      req.on('end', () => {
        const batch = JSON.parse(text) as { id: number; params: [string] }[];
        const replies = batch.map((request) => {
          const hash = request.params[0];
          const n = (asks.get(hash) ?? 0) + 1;
          asks.set(hash, n);
          // h(3) becomes visible on the third ask.
          if ((hash === h(3) && n < 3) || hash === h(4)) return { jsonrpc: '2.0', id: request.id, result: null };
          const index = hash === h(2) ? 1 : 2;
          return { jsonrpc: '2.0', id: request.id, result: malformed ? { ...receipt(hash, index), status: 'yes' } : receipt(hash, index) };
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(replies));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it('asks in batches until every receipt is visible and returns them in the pending shape', async () => {
    const metrics = createMetricsRegistry({ defaults: false });
    const executor = createNodeExecutor({ upstreamUrl: url, timeoutMs: 1000, metrics });
    const output = await executor.execute(block);
    expect(output.stateDiff).toBeNull();
    expect(output.receipts.map((r) => r.transactionHash)).toEqual([h(2), h(3)]);
    expect(asks.get(h(3))).toBe(3);
    expect(asks.get(h(2))).toBe(1);
    for (const r of output.receipts) {
      expect(r.blockHash).toBe(ZERO_HASH);
      expect(r.l1Fee).toBe('0x10');
      expect(r.logs[0]).toMatchObject({ blockHash: ZERO_HASH, blockTimestamp: '0x6553f100', removed: false });
    }
    expect((await metrics.getSingleMetric('flashlog_executor_node_retries_total')!.get()).values[0]!.value).toBe(2);
  });

  it('a malformed receipt is an error naming the field; one never visible times out naming its hash', async () => {
    malformed = true;
    try {
      const executor = createNodeExecutor({ upstreamUrl: url, timeoutMs: 1000, metrics: createMetricsRegistry({ defaults: false }) });
      await expect(executor.execute(block)).rejects.toThrow(/receipt of 0x0+2: status/);
    } finally {
      malformed = false;
    }
    const missing = { ...block, transactions: [...block.transactions, { hash: h(4), raw: '0x04' as const }] };
    const slow = createNodeExecutor({
      upstreamUrl: url,
      timeoutMs: 1000,
      metrics: createMetricsRegistry({ defaults: false }),
      visibleWithinMs: 200,
    });
    await expect(slow.execute(missing)).rejects.toThrow(/not visible upstream within 200 ms \(first: 0x0+4\)/);
  });

  it('createExecutor refuses local and node without --rpc, naming the setting', async () => {
    const deps = {
      rpcUrl: undefined,
      timeoutMs: 1000,
      logger: createLogger({ level: 'silent', name: 't' }),
      metrics: createMetricsRegistry({ defaults: false }),
    };
    await expect(createExecutor('node', deps)).rejects.toThrow(ConfigError);
    await expect(createExecutor('local', deps)).rejects.toThrow(/--rpc \(FLASHLOG_RPC\)/);
    expect((await createExecutor('metadata', deps)).kind).toBe('metadata');
  });
});
