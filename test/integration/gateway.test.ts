import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, metricValue, tempDir, testContext } from '../helpers/context.ts';
import { createRpcStub, hang, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, chainRecord, emitter, sender, signedTransfers, transferTopic, zeroHash } from '../helpers/view-records.ts';
import { assertSchemaValid, validatedCounts, validatingFetch } from '../helpers/openrpc-schema.ts';

/**
 * The gateway over a real embedded log and real HTTP/WebSocket servers; the upstream is a scripted
 * JSON-RPC server (the devnet-backed tests are in gateway-devnet.test.ts).
 */
const account = '0x00000000000000000000000000000000000000aa';
const untouched = '0x00000000000000000000000000000000000000bb';
const slot = `0x${'0'.repeat(63)}1`;
const word = `0x${'0'.repeat(62)}2a`;
const historicalLog = {
  address: emitter,
  topics: [transferTopic],
  data: '0x',
  blockNumber: '0x9',
  blockHash: `0x${'99'.repeat(32)}`,
  transactionHash: `0x${'98'.repeat(32)}`,
  transactionIndex: '0x0',
  logIndex: '0x0',
  removed: false,
};
const canonicalReceiptHash = `0x${'77'.repeat(32)}`;
const stubHeader = {
  parentHash: `0x${'88'.repeat(32)}`,
  sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
  miner: '0x4200000000000000000000000000000000000011',
  stateRoot: `0x${'01'.repeat(32)}`,
  transactionsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421',
  receiptsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421',
  logsBloom: `0x${'0'.repeat(512)}`,
  difficulty: '0x0',
  gasLimit: '0x1c9c380',
  gasUsed: '0x0',
  extraData: '0x',
  mixHash: `0x${'02'.repeat(32)}`,
  nonce: '0x0000000000000000',
  baseFeePerGas: '0x3b9aca00',
  size: '0x260',
  uncles: [],
};
const stubReceipt = {
  transactionIndex: '0x0',
  blockNumber: '0x9',
  from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  to: emitter,
  cumulativeGasUsed: '0x5208',
  gasUsed: '0x5208',
  effectiveGasPrice: '0x3b9aca00',
  contractAddress: null,
  logs: [],
  logsBloom: `0x${'0'.repeat(512)}`,
  status: '0x1',
  type: '0x2',
};

let dir: ReturnType<typeof tempDir>;
let log: Log;
let stub: RpcStub;
let serve: Serve;
let ctx: ReturnType<typeof testContext>;
let txs: Awaited<ReturnType<typeof signedTransfers>>;
const block10 = blockBuilder(10n);

async function rpc(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await validatingFetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}
const call = async (method: string, params: unknown[] = [], url = serve.gateway.url) =>
  (await rpc(url, { jsonrpc: '2.0', id: 1, method, params })).body;

function startServe(overrides: Parameters<typeof testContext>[0] = {}) {
  ctx = testContext({ port: 0, rpc: stub.url, rpcTimeoutMs: 400, headPollMs: 100, ...overrides });
  return createServe(ctx, { log, rpcUrl: stub.url });
}

beforeAll(async () => {
  dir = tempDir();
  log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  txs = await signedTransfers(6);
  stub = await createRpcStub({
    eth_blockNumber: () => '0x9',
    eth_chainId: () => '0x385',
    // Well-formed answers (every answer of this suite is held against the execution-apis schemas).
    eth_getBlockByNumber: ([tag]) => ({
      ...stubHeader,
      number: tag === 'latest' ? '0x9' : tag,
      hash: `0x${'99'.repeat(32)}`,
      timestamp: '0x1234',
      transactions: [],
    }),
    eth_getTransactionReceipt: ([hash]) =>
      hash === canonicalReceiptHash ? { ...stubReceipt, transactionHash: canonicalReceiptHash, blockHash: `0x${'99'.repeat(32)}` } : null,
    eth_getTransactionByHash: () => null,
    eth_getBalance: () => '0x7',
    eth_getTransactionCount: () => '0x3',
    eth_getCode: () => '0x',
    eth_getStorageAt: () => `0x${'0'.repeat(64)}`,
    eth_getLogs: () => [historicalLog],
    eth_getBlockReceipts: () => [],
  });
  await log.produce([
    ...block10.flashblock([txs[0]!], {
      stateDiff: { [account]: { balance: '0x10', nonce: '0x1', code: '0x6000', storage: { [slot]: word } } },
    }),
    ...block10.flashblock([txs[1]!, txs[2]!], { stateDiff: { [sender.address.toLowerCase()]: { balance: '0x20', nonce: '0x3' } } }),
  ]);
  serve = await startServe();
}, 30_000);

afterAll(async () => {
  await serve?.close();
  await stub?.close();
  await log?.close();
  dir?.remove();
});

describe('JSON-RPC 2.0 framing', () => {
  it('echoes ids, answers batches in order and notifications with nothing', async () => {
    const single = await rpc(serve.gateway.url, { jsonrpc: '2.0', id: 'abc', method: 'eth_chainId', params: [] });
    expect(single.body).toEqual({ jsonrpc: '2.0', id: 'abc', result: '0x385' });
    const batch = await rpc(serve.gateway.url, [
      { jsonrpc: '2.0', id: 7, method: 'eth_chainId' },
      { jsonrpc: '2.0', method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 8, method: 'eth_getBlockTransactionCountByNumber', params: ['pending'] },
    ]);
    expect(batch.body).toEqual([
      { jsonrpc: '2.0', id: 7, result: '0x385' },
      { jsonrpc: '2.0', id: 8, result: '0x3' },
    ]);
    const notification = await rpc(serve.gateway.url, { jsonrpc: '2.0', method: 'eth_chainId' });
    expect(notification.status).toBe(204);
  });

  it('answers -32700, -32600, -32601 and -32602 with messages that say what is wrong', async () => {
    expect((await rpc(serve.gateway.url, '{"jsonrpc":')).body.error.code).toBe(-32700);
    expect((await rpc(serve.gateway.url, '{"jsonrpc":')).body.id).toBeNull();
    const noVersion = (await rpc(serve.gateway.url, { id: 1, method: 'eth_chainId' })).body;
    expect(noVersion.error).toMatchObject({ code: -32600, message: expect.stringContaining('jsonrpc: expected "2.0"') });
    expect((await rpc(serve.gateway.url, [])).body.error).toMatchObject({ code: -32600, message: expect.stringContaining('empty batch') });
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' }));
    expect((await rpc(serve.gateway.url, tooMany)).body.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('limit of 100'),
    });
    expect((await rpc(serve.gateway.url, [1])).body[0].error.code).toBe(-32600);
    expect((await call('eth_noSuchMethod')).error.code).toBe(-32601);
    expect((await call('eth_subscribe', ['newFlashblocks'])).error.code).toBe(-32601);
    const badTag = await call('eth_getBlockByNumber', ['yesterday', false]);
    expect(badTag.error).toEqual({
      code: -32602,
      message: 'params[0]: expected hex block number or tag (latest, pending, safe, finalized, earliest), got "yesterday"',
    });
    expect((await call('eth_getBalance', ['0x12', 'pending'])).error.message).toBe(
      'params[0]: expected a 20-byte 0x-hex address, got "0x12"',
    );
    expect((await call('eth_getLogs', [{ fromBlock: 'soon' }])).error.message).toContain(
      'params[0].fromBlock: expected hex block number or tag',
    );
    expect((await call('eth_getLogs', [{ topics: [[transferTopic, '0x1']] }])).error.message).toContain(
      'params[0].topics[0][1]: expected a 32-byte 0x-hex hash, got "0x1"',
    );
    expect((await call('eth_getTransactionReceipt', [])).error.message).toBe('params[0]: expected a transaction hash, got nothing');
  });

  it('limits the body size (413) and takes only POST (405)', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['x'.repeat(1024 * 1024 + 10)] });
    const tooLarge = await rpc(serve.gateway.url, huge);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.message).toContain('exceeds the limit of 1048576 bytes');
    expect((await fetch(serve.gateway.url)).status).toBe(405);
    const preflight = await fetch(serve.gateway.url, { method: 'OPTIONS' });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, '*']);
  });
});

describe('pending methods from the view', () => {
  it('eth_getBlockByNumber(pending) is the pre-confirmed block with hash 0x00..00; other tags go upstream', async () => {
    const block = (await call('eth_getBlockByNumber', ['pending', false])).result;
    expect(block).toMatchObject({ number: '0xa', hash: zeroHash, transactions: txs.slice(0, 3).map((tx) => tx.hash) });
    const full = (await call('eth_getBlockByNumber', ['pending', true])).result;
    expect(full.transactions[1]).toMatchObject({
      hash: txs[1]!.hash,
      from: sender.address.toLowerCase(),
      blockHash: null,
      blockNumber: '0xa',
      transactionIndex: '0x1',
      type: '0x2',
      nonce: '0x1',
      value: '0x2',
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    });
    expect((await call('eth_getBlockByNumber', ['latest', false])).result.number).toBe('0x9');
  });

  it('eth_getBlockReceipts(pending), eth_getTransactionReceipt and ByHash canonical first then pending', async () => {
    const receipts = (await call('eth_getBlockReceipts', ['pending'])).result;
    expect(receipts.map((receipt: { transactionHash: string }) => receipt.transactionHash)).toEqual(txs.slice(0, 3).map((tx) => tx.hash));
    // The EIP-1898 object form, as go-ethereum's ethclient.BlockReceipts always sends it.
    expect((await call('eth_getBlockReceipts', [{ blockNumber: 'pending' }])).result).toEqual(receipts);
    expect((await call('eth_getBlockReceipts', [{ blockNumber: '0x9' }])).result).toEqual([]);
    expect((await call('eth_getBlockReceipts', [{ blockNumber: 'yesterday' }])).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('params[0].blockNumber'),
    });
    expect((await call('eth_getTransactionReceipt', [txs[2]!.hash])).result).toMatchObject({
      transactionHash: txs[2]!.hash,
      blockHash: zeroHash,
      blockNumber: '0xa',
    });
    expect((await call('eth_getTransactionReceipt', [canonicalReceiptHash])).result.blockHash).toBe(`0x${'99'.repeat(32)}`);
    expect((await call('eth_getTransactionReceipt', [`0x${'55'.repeat(32)}`])).result).toBeNull();
    expect((await call('eth_getTransactionByHash', [txs[0]!.hash])).result).toMatchObject({
      hash: txs[0]!.hash,
      blockHash: null,
      blockNumber: '0xa',
      transactionIndex: '0x0',
    });
  });

  it('eth_getLogs: pending, mixed ranges without duplicates, address and topic filters, range limit, blockTimestamp', async () => {
    const pending = (await call('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }])).result;
    expect(pending.map((l: { transactionHash: string }) => l.transactionHash)).toEqual(txs.slice(0, 3).map((tx) => tx.hash));
    expect(pending.every((l: { blockTimestamp?: string }) => l.blockTimestamp === `0x${block10.timestamp.toString(16)}`)).toBe(true);
    const mixed = (await call('eth_getLogs', [{ fromBlock: '0x9', toBlock: 'pending' }])).result;
    expect(mixed.map((l: { blockNumber: string }) => l.blockNumber)).toEqual(['0x9', '0xa', '0xa', '0xa']);
    expect(mixed[0].blockTimestamp).toBe('0x1234');
    const upstreamRange = stub.calls.filter((c) => c.method === 'eth_getLogs').at(-1)!.params[0] as Record<string, string>;
    expect([upstreamRange.fromBlock, upstreamRange.toBlock]).toEqual(['0x9', '0x9']);
    // fromBlock defaults to latest (block 9 upstream): its log plus the three pending ones.
    expect(
      (await call('eth_getLogs', [{ toBlock: 'pending', address: [untouched, emitter.toUpperCase().replace('0X', '0x')] }])).result,
    ).toHaveLength(4);
    expect((await call('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending', address: untouched }])).result).toEqual([]);
    expect(
      (
        await call('eth_getLogs', [
          {
            fromBlock: 'pending',
            toBlock: 'pending',
            topics: [null, [zeroHash, `0x${sender.address.slice(2).toLowerCase().padStart(64, '0')}`]],
          },
        ])
      ).result,
    ).toHaveLength(3);
    expect((await call('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending', topics: [zeroHash] }])).result).toEqual([]);
    const wide = await call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'pending' }]);
    expect(wide.result).toHaveLength(4);
    const narrow = await startServe({ maxLogsRange: 5, headPollMs: 0 });
    try {
      const tooWide = await call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'pending' }], narrow.gateway.url);
      expect(tooWide.error).toEqual({ code: -32602, message: 'params[0]: block range of 11 blocks (0 to 10) exceeds the limit of 5' });
      expect((await call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x9' }], narrow.gateway.url)).error.code).toBe(-32602);
    } finally {
      await narrow.close();
    }
    expect((await call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x1000' }])).error.message).toBe(
      'params[0]: block range of 4096 blocks (1 to 4096) exceeds the limit of 2000',
    );
  });

  it('eth_getBalance/TransactionCount/Code/StorageAt(pending) from the diff, else upstream at the canonical block', async () => {
    expect((await call('eth_getBalance', [account, 'pending'])).result).toBe('0x10');
    expect((await call('eth_getTransactionCount', [sender.address, 'pending'])).result).toBe('0x3');
    expect((await call('eth_getCode', [account, 'pending'])).result).toBe('0x6000');
    expect((await call('eth_getStorageAt', [account, '0x1', 'pending'])).result).toBe(word);
    expect((await call('eth_getBalance', [untouched, 'pending'])).result).toBe('0x7');
    expect(stub.calls.filter((c) => c.method === 'eth_getBalance').at(-1)!.params).toEqual([untouched, '0x9']);
    expect((await call('eth_getStorageAt', [account, '0x2', 'pending'])).result).toBe(`0x${'0'.repeat(64)}`);
    expect(stub.calls.filter((c) => c.method === 'eth_getStorageAt').at(-1)!.params).toEqual([account, '0x2', '0x9']);
    expect((await call('eth_getBalance', [account, 'latest'])).result).toBe('0x7');
    expect((await call('eth_getBlockTransactionCountByNumber', ['pending'])).result).toBe('0x3');
  });
});

describe('upstream', () => {
  it('passes upstream errors through with their code, and turns a hang or an unreachable upstream into -32000', async () => {
    stub.handlers.eth_sendRawTransaction = () => {
      throw { code: -32003, message: 'insufficient funds for gas * price + value', data: '0xdead' };
    };
    expect((await call('eth_sendRawTransaction', ['0x00'])).error).toEqual({
      code: -32003,
      message: 'insufficient funds for gas * price + value',
      data: '0xdead',
    });
    stub.handlers.eth_gasPrice = () => hang;
    const started = Date.now();
    const timedOut = await call('eth_gasPrice');
    expect(timedOut.error).toEqual({ code: -32000, message: 'upstream RPC did not answer eth_gasPrice within 400 ms' });
    expect(Date.now() - started).toBeLessThan(3000);
    const gone = testContext({ port: 0, rpcTimeoutMs: 400, headPollMs: 0 });
    const lonely = await createServe(gone, { log, rpcUrl: 'http://127.0.0.1:1' });
    try {
      const unreachable = await call('eth_chainId', [], lonely.gateway.url);
      expect(unreachable.error.code).toBe(-32000);
      expect(unreachable.error.message).toMatch(/^upstream RPC unreachable: /);
    } finally {
      await lonely.close();
    }
  });
});

describe('public mode', () => {
  it('refuses eth_getBlockReceipts with HTTP 403 and rate-limits per client with HTTP 429', async () => {
    const publicServe = await startServe({ public: true, rateLimit: 5, headPollMs: 0 });
    try {
      const refused = await rpc(publicServe.gateway.url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockReceipts', params: ['pending'] });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('eth_getBlockReceipts is not available');
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await rpc(publicServe.gateway.url, { jsonrpc: '2.0', id: i, method: 'eth_chainId' })).status);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses).toContain(429);
      const limited = await rpc(publicServe.gateway.url, { jsonrpc: '2.0', id: 1, method: 'eth_chainId' });
      expect(limited).toMatchObject({ status: 429, body: { error: { code: -32005 } } });
      // WebSocket calls draw on the same per-client budget.
      const socket = await openSocket(publicServe.gateway.wsUrl);
      const answers = await Promise.all(Array.from({ length: 8 }, () => socket.send('eth_chainId', [])));
      expect(answers.some((answer) => answer.error?.code === -32005)).toBe(true);
      socket.socket.close();
    } finally {
      await publicServe.close();
    }
  });
});

function openSocket(
  url: string,
): Promise<{ socket: WebSocket; messages: any[]; send: (method: string, params: unknown[]) => Promise<any> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const messages: any[] = [];
    const waiting = new Map<number, (value: any) => void>();
    let id = 0;
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.id !== undefined && waiting.has(message.id)) waiting.get(message.id)!(message);
      else messages.push(message);
    });
    socket.once('error', reject);
    socket.once('open', () =>
      resolve({
        socket,
        messages,
        send: (method, params) =>
          new Promise((done) => {
            id += 1;
            waiting.set(id, done);
            socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
          }),
      }),
    );
  });
}

describe('subscriptions over WebSocket', () => {
  it('delivers only what the latest flashblock added, filtered, and removed logs on a reorg', async () => {
    const client = await openSocket(serve.gateway.wsUrl);
    try {
      const all = (await client.send('eth_subscribe', ['pendingLogs'])).result as string;
      const none = (await client.send('eth_subscribe', ['pendingLogs', { address: untouched }])).result as string;
      const blocks = (await client.send('eth_subscribe', ['newFlashblocks'])).result as string;
      const hashes = (await client.send('eth_subscribe', ['newFlashblockTransactions'])).result as string;
      const full = (await client.send('eth_subscribe', ['newFlashblockTransactions', true])).result as string;
      expect(new Set([all, none, blocks, hashes, full]).size).toBe(5);
      expect((await client.send('eth_subscribe', ['newHeadsX'])).error.code).toBe(-32602);
      expect((await client.send('eth_chainId', [])).result).toBe('0x385');
      await log.produce(block10.flashblock([txs[3]!, txs[4]!]));
      const of = (id: string) => client.messages.filter((m) => m.params?.subscription === id).map((m) => m.params.result);
      await eventually(
        () => (of(all).length >= 2 && of(full).length >= 2 && of(blocks).length >= 1 ? true : undefined),
        5000,
        'notifications',
      );
      // Well-formed by the execution-apis schemas: logs, the block, full transactions (Base's kinds
      // extend the standard objects: the transaction carries its receipt's fields and logs).
      for (const entry of of(all)) assertSchemaValid('pendingLogs', entry);
      for (const block of of(blocks)) assertSchemaValid('eth_getBlockByNumber', block);
      for (const tx of of(full)) assertSchemaValid('eth_getTransactionByHash', tx);
      expect(of(all).map((l) => l.transactionHash)).toEqual([txs[3]!.hash, txs[4]!.hash]);
      expect(of(none)).toEqual([]);
      expect(of(hashes)).toEqual([txs[3]!.hash, txs[4]!.hash]);
      expect(of(full)[0]).toMatchObject({
        hash: txs[3]!.hash,
        from: sender.address.toLowerCase(),
        logs: [{ transactionHash: txs[3]!.hash }],
      });
      expect(of(blocks)[0]).toMatchObject({ number: '0xa', hash: zeroHash });
      expect(of(blocks)[0].transactions).toHaveLength(5);
      expect((await client.send('eth_unsubscribe', [blocks])).result).toBe(true);
      expect((await client.send('eth_unsubscribe', [blocks])).result).toBe(false);
      await log.produce([
        chainRecord({
          type: 'reorg',
          blockNumber: '0xa',
          blockHash: `0x${'aa'.repeat(32)}`,
          transactions: txs.slice(0, 4).map((tx) => tx.hash),
          removedTransactions: [txs[4]!.hash],
        }),
      ]);
      await eventually(() => (of(all).length >= 3 ? true : undefined), 5000, 'removed log');
      expect(of(all)[2]).toMatchObject({ transactionHash: txs[4]!.hash, removed: true });
      expect(of(blocks)).toHaveLength(1);
      // Block 10 is gone from the view: pending answers as latest now.
      expect((await call('eth_getBlockByNumber', ['pending', false])).result.number).toBe('0x9');
    } finally {
      client.socket.close();
    }
  });

  it('limits subscriptions per connection and connections; disconnects a slow subscriber with a reason', async () => {
    const limited = await startServe({ maxSubscriptions: 2, maxConnections: 2, maxBufferedBytes: 64 * 1024, headPollMs: 0 });
    try {
      const slow = await openSocket(limited.gateway.wsUrl);
      const fast = await openSocket(limited.gateway.wsUrl);
      await expect(openSocket(limited.gateway.wsUrl)).rejects.toThrow(/503/);
      expect((await slow.send('eth_subscribe', ['newFlashblocks'])).result).toMatch(/^0x/);
      expect((await slow.send('eth_subscribe', ['newFlashblocks'])).result).toMatch(/^0x/);
      expect((await slow.send('eth_subscribe', ['newFlashblocks'])).error).toEqual({
        code: -32005,
        message: 'subscription limit reached: at most 2 per connection',
      });
      expect((await fast.send('eth_subscribe', ['newFlashblockTransactions'])).result).toMatch(/^0x/);
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        slow.socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      // The slow client stops reading; the fast one keeps receiving.
      (slow.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
      const block = blockBuilder(11n);
      const more = await signedTransfers(400, 100);
      for (let i = 0; i < 50; i++) await log.produce(block.flashblock(more.slice(i * 8, i * 8 + 8)));
      await eventually(() => (fast.messages.length >= 400 ? true : undefined), 15_000, 'fast subscriber notifications');
      (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
      const result = await closed;
      expect(result.code).toBe(1008);
      expect(result.reason).toMatch(/^subscriber too slow: \d+ bytes unsent exceeds 65536$/);
      fast.socket.close();
    } finally {
      await limited.close();
    }
  }, 40_000);
});

describe('restart', () => {
  it('a new gateway over the same log gives the same answers', async () => {
    const queries: [string, unknown[]][] = [
      ['eth_getBlockByNumber', ['pending', true]],
      ['eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]],
      ['eth_getBalance', [account, 'pending']],
      ['eth_getBlockTransactionCountByNumber', ['pending']],
      ['eth_getTransactionReceipt', [txs[3]!.hash]],
    ];
    const before = await Promise.all(queries.map(([method, params]) => call(method, params)));
    expect(before[0].result.number).toBe('0xb');
    await serve.close();
    serve = await startServe();
    const after = await Promise.all(queries.map(([method, params]) => call(method, params)));
    expect(after).toEqual(before);
    const blocksEnd = (await log.endOffsets('flashlog.blocks'))[0]!.offset;
    expect(serve.view.current().offsets['flashlog.blocks/0']).toBe(blocksEnd);
    expect(await metricValue(ctx, 'flashlog_view_applied_offset', { topic: 'flashlog.blocks', partition: '0' })).toBe(Number(blocksEnd));
    expect(await metricValue(ctx, 'flashlog_view_replay_progress_ratio')).toBe(1);
    expect(await metricValue(ctx, 'flashlog_view_records_total')).toBeGreaterThan(0);
  });
});

describe('schemas', () => {
  it('held the answers of this suite against the execution-apis schemas, method by method', () => {
    for (const method of [
      'eth_getBlockByNumber',
      'eth_getTransactionByHash',
      'eth_getTransactionReceipt',
      'eth_getBlockReceipts',
      'eth_getLogs',
    ])
      expect(validatedCounts.get(method) ?? 0, method).toBeGreaterThan(0);
  });
});
