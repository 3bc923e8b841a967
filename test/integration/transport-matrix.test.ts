import { z } from 'zod';
import { of } from 'rxjs';
import { keccak256, numberToHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';
import { createExecutionMethods, type ExecutionMethods } from '../../src/rpc/execution.ts';
import type { MethodSpec, Transport } from '../../src/rpc/method.ts';
import { createRateLimiter, type RateLimiter } from '../../src/rpc/rate-limit.ts';
import { registry } from '../../src/rpc/registry.ts';
import { createGateway, type Gateway } from '../../src/rpc/server.ts';
import { materialize, type Materialized } from '../../streams/materialize.ts';
import { tempDir, testContext } from '../helpers/context.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, sender, signedTransfers } from '../helpers/view-records.ts';

/**
 * The transport matrix: every method of the registry × {HTTP, HTTP batch, WebSocket, WebSocket
 * batch} × {private, public} gives the same answer, or the same refusal, and public mode's rate
 * limit takes one token per call. It iterates the registry, so a method added there is covered
 * without a new test; its sample params go in `samples` below (a test fails while one is missing).
 * The expected refusals come from each method's declaration (transports, public policy), not
 * from the gateway. The view holds a real pending block (signed transactions, a state diff); the
 * upstream is a stub that answers per block (this tests transports, not answers).
 */

const head = 9n;
const account = '0x00000000000000000000000000000000000000aa';
const recipient = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const slot = numberToHex(1, { size: 32 });

let txs: Awaited<ReturnType<typeof signedTransfers>>;

interface Sample {
  /** Valid params: in private mode, over the method's own transports, the answer is a result. */
  readonly params: () => readonly unknown[];
  /** The part of the result that is the same on every call (a fresh subscription id is not). */
  readonly normalize?: (result: unknown) => unknown;
}

const subscriptionId = (result: unknown): unknown =>
  typeof result === 'string' && /^0x[0-9a-f]+$/.test(result) ? '<subscription id>' : result;

/** One sample per registry entry: the matrix refuses to run a method without one. */
const samples: Readonly<Record<string, Sample>> = {
  eth_call: { params: () => [{ from: sender.address, to: account, data: '0x12345678' }, 'pending'] },
  eth_estimateGas: { params: () => [{ from: sender.address, to: recipient, value: '0x1' }, 'pending'] },
  eth_getBalance: { params: () => [account, 'pending'] },
  eth_getBlockByNumber: { params: () => ['pending', true] },
  eth_getBlockReceipts: { params: () => ['pending'] },
  eth_getBlockTransactionCountByNumber: { params: () => ['pending'] },
  eth_getCode: { params: () => [account, 'pending'] },
  eth_getLogs: { params: () => [{ fromBlock: numberToHex(head), toBlock: 'pending' }] },
  eth_getStorageAt: { params: () => [account, slot, 'pending'] },
  eth_getTransactionByHash: { params: () => [txs[1]!.hash] },
  eth_getTransactionCount: { params: () => [sender.address, 'pending'] },
  eth_getTransactionReceipt: { params: () => [txs[1]!.hash] },
  eth_sendRawTransactionSync: { params: () => [txs[0]!.raw] },
  eth_simulateV1: { params: () => [{ blockStateCalls: [{ calls: [{ from: sender.address, to: recipient, value: '0x1' }] }] }, 'pending'] },
  eth_subscribe: { params: () => ['newHeads'], normalize: subscriptionId },
  eth_unsubscribe: { params: () => ['0x0123456789abcdef'] },
};

/** A forwarded method (not in the registry) rides along: the upstream answers it over every transport. */
const forwarded: MethodSpec = {
  name: 'eth_chainId',
  params: z.array(z.unknown()),
  call: () => undefined,
  transports: ['http', 'ws'],
  public: 'allowed',
  executes: false,
};
const forwardedSample: Sample = { params: () => [] };

// --- the upstream: a stub that answers per block ---

const hashOf = (n: bigint): Hex => keccak256(numberToHex(n));
const headerNotFound = { code: -32000, message: 'header not found' };

/** The block a param names: a tag, a number, or an EIP-1898 object; past the head the node has none. */
function blockOf(param: unknown): bigint {
  let n: bigint | undefined;
  if (param === undefined || param === 'latest' || param === 'safe' || param === 'finalized' || param === 'pending') n = head;
  else if (param === 'earliest') n = 0n;
  else if (typeof param === 'string') n = BigInt(param);
  else if (typeof param === 'object' && param !== null) {
    const { blockHash, blockNumber } = param as { blockHash?: string; blockNumber?: string };
    if (blockNumber !== undefined) n = BigInt(blockNumber);
    else for (let i = 0n; i <= head && n === undefined; i++) if (hashOf(i) === blockHash) n = i;
  }
  if (n === undefined || n > head) throw headerNotFound;
  return n;
}

const header = (n: bigint) => ({
  number: numberToHex(n),
  hash: hashOf(n),
  parentHash: n === 0n ? `0x${'00'.repeat(32)}` : hashOf(n - 1n),
  timestamp: numberToHex(1_700_000_000n + n * 2n),
  gasLimit: '0x1c9c380',
  gasUsed: numberToHex(21_000n * n),
  baseFeePerGas: numberToHex(1_000_000n + n),
  miner: '0x4200000000000000000000000000000000000011',
  difficulty: '0x0',
  transactions: [],
});

/** A quantity that differs by account and block, so an answer read at the wrong block shows. */
const perBlock = (address: unknown, n: bigint, salt: bigint): Hex =>
  numberToHex(
    (BigInt(keccak256(`0x${String(address).slice(2).padStart(40, '0')}${n.toString(16).padStart(16, '0')}`)) % 1_000_000n) + salt,
  );

function upstreamHandlers(): Record<string, (params: unknown[]) => unknown> {
  return {
    eth_chainId: () => '0x385',
    eth_blockNumber: () => numberToHex(head),
    eth_getBlockByNumber: ([tag]) => header(blockOf(tag)),
    eth_getBlockByHash: ([hash]) => header(blockOf({ blockHash: hash })),
    eth_getBalance: ([address, block]) => perBlock(address, blockOf(block), 10n ** 18n),
    eth_getTransactionCount: ([address, block]) => perBlock(address, blockOf(block), 0n),
    eth_getCode: ([, block]) => (blockOf(block), '0x'),
    eth_getStorageAt: ([address, position, block]) =>
      numberToHex(BigInt(perBlock(address, blockOf(block), BigInt(String(position)))), { size: 32 }),
    eth_call: ([, block]) => numberToHex(blockOf(block), { size: 32 }),
    eth_getLogs: ([filter]) => {
      const { fromBlock, toBlock } = filter as { fromBlock?: string; toBlock?: string };
      const logs = [];
      for (let n = blockOf(fromBlock); n <= blockOf(toBlock); n++) {
        logs.push({
          address: account,
          topics: [hashOf(n)],
          data: '0x',
          blockNumber: numberToHex(n),
          blockHash: hashOf(n),
          transactionHash: keccak256(hashOf(n)),
          transactionIndex: '0x0',
          logIndex: '0x0',
          removed: false,
        });
      }
      return logs;
    },
    eth_getBlockReceipts: ([block]) => (blockOf(block), []),
    eth_getTransactionByHash: () => null,
    eth_getTransactionReceipt: () => null,
    eth_sendRawTransaction: ([raw]) => keccak256(raw as Hex),
  };
}

// --- the gateways: private and public over one view ---

let dir: ReturnType<typeof tempDir>;
let log: Log;
let stub: RpcStub;
let view: Materialized;
let execution: ExecutionMethods;
const gateways: Gateway[] = [];
/** Tokens the public gateway's limiter was asked for, per client. */
let tokensTaken = 0;
let privateGateway: Gateway;
let publicGateway: Gateway;

async function startGateway(options: { public: boolean; limiter?: RateLimiter; rateLimit?: number }): Promise<Gateway> {
  const ctx = testContext();
  const upstream = createUpstream(stub.url, { timeoutMs: 5000 });
  const gateway = await createGateway({
    host: '127.0.0.1',
    port: 0,
    view: view.current,
    states$: view.states$,
    upstream,
    logger: ctx.logger,
    metrics: ctx.metrics,
    public: options.public,
    rateLimit: options.rateLimit ?? 1_000_000,
    ...(options.limiter ? { limiter: options.limiter } : {}),
    maxBodyBytes: 1 << 20,
    maxBatch: 100,
    maxConnections: 100,
    maxSubscriptions: 100,
    maxBufferedBytes: 1 << 22,
    maxLogsRange: 2000,
    methods: execution.methods,
  });
  gateways.push(gateway);
  return gateway;
}

beforeAll(async () => {
  dir = tempDir();
  log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  txs = await signedTransfers(3);
  stub = await createRpcStub(upstreamHandlers());
  const block = blockBuilder(head + 1n);
  await log.produce([
    ...block.flashblock([txs[0]!], {
      stateDiff: { [account]: { balance: '0x10', nonce: '0x1', code: '0x6000', storage: { [slot]: numberToHex(42, { size: 32 }) } } },
    }),
    ...block.flashblock([txs[1]!, txs[2]!], {
      stateDiff: { [sender.address.toLowerCase()]: { balance: '0xde0b6b3a7640000', nonce: '0x3' } },
    }),
  ]);
  const ctx = testContext();
  view = await materialize(ctx, { log, heads$: of(head) });
  await view.replayed;
  const upstream = createUpstream(stub.url, { timeoutMs: 5000 });
  execution = createExecutionMethods({ gasCap: 50_000_000n, timeoutMs: 10_000 });
  privateGateway = await startGateway({ public: false });
  const counted = createRateLimiter(1_000_000);
  publicGateway = await startGateway({
    public: true,
    limiter: {
      take(client, cost, nowMs) {
        tokensTaken += cost;
        return counted.take(client, cost, nowMs);
      },
    },
  });
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await execution?.close();
  await view?.close();
  await stub?.close();
  await log?.close();
  dir?.remove();
});

// --- the four transports ---

type Response = { jsonrpc: string; id: unknown; result?: unknown; error?: { code: number; message: string } };
type Way = 'http' | 'http batch' | 'ws' | 'ws batch';
const ways: readonly Way[] = ['http', 'http batch', 'ws', 'ws batch'];
const transportOf = (way: Way): Transport => (way.startsWith('ws') ? 'ws' : 'http');
/** Calls per batch: a batch of one would not show a batch charged as one call. */
const BATCH = 2;

let nextId = 1;

async function overHttp(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** One WebSocket connection per gateway; answers matched by the id of their first call. */
const sockets = new Map<Gateway, Promise<{ send(body: unknown, firstId: number): Promise<unknown>; socket: WebSocket }>>();
function socketOf(gateway: Gateway) {
  let opened = sockets.get(gateway);
  if (!opened) {
    opened = new Promise((resolve, reject) => {
      const socket = new WebSocket(gateway.wsUrl);
      const waiting = new Map<number, (message: unknown) => void>();
      socket.on('message', (data) => {
        const message = JSON.parse(data.toString()) as Response | Response[];
        const first = Array.isArray(message) ? message[0] : message;
        if (first && typeof first.id === 'number') waiting.get(first.id)?.(message);
      });
      socket.once('error', reject);
      socket.once('open', () =>
        resolve({
          socket,
          send: (body, firstId) =>
            new Promise((answered) => {
              waiting.set(firstId, answered);
              socket.send(JSON.stringify(body));
            }),
        }),
      );
    });
    sockets.set(gateway, opened);
  }
  return opened;
}

/** Sends `method` one way and gives every call's response, and the HTTP status where there is one. */
async function send(
  gateway: Gateway,
  way: Way,
  method: string,
  params: readonly unknown[],
): Promise<{ responses: Response[]; status?: number }> {
  const count = way.endsWith('batch') ? BATCH : 1;
  const calls = Array.from({ length: count }, () => ({ jsonrpc: '2.0', id: nextId++, method, params }));
  const body = way.endsWith('batch') ? calls : calls[0];
  if (transportOf(way) === 'http') {
    const answer = await overHttp(gateway.url, body);
    return { responses: (Array.isArray(answer.body) ? answer.body : [answer.body]) as Response[], status: answer.status };
  }
  const answer = await (await socketOf(gateway)).send(body, calls[0]!.id);
  return { responses: (Array.isArray(answer) ? answer : [answer]) as Response[] };
}

/** What a response says, without its id: the result (normalized) or the error. */
const outcome = (response: Response, sample: Sample): unknown =>
  response.error ? { error: response.error } : { result: sample.normalize ? sample.normalize(response.result) : response.result };

// --- the matrix ---

describe('the transport matrix', () => {
  it('has sample params for every method of the registry, and none for a method it does not hold', () => {
    const names = registry.map((spec) => spec.name);
    expect(
      names.filter((name) => !(name in samples)),
      'methods without a sample in transport-matrix.test.ts',
    ).toEqual([]);
    expect(Object.keys(samples).filter((name) => !names.includes(name))).toEqual([]);
  });

  describe.each([...registry, forwarded].map((spec) => [spec.name, spec] as const))('%s', (name, spec) => {
    const sample = name === forwarded.name ? forwardedSample : samples[name];

    it('gives the same answer, or the refusal its declaration says, over every transport, private and public; one token per call', async () => {
      if (!sample) throw new Error(`${name} has no sample params: add one to \`samples\` in test/integration/transport-matrix.test.ts`);
      const answers: Record<string, unknown> = {};
      for (const mode of ['private', 'public'] as const) {
        const gateway = mode === 'public' ? publicGateway : privateGateway;
        for (const way of ways) {
          const before = tokensTaken;
          const { responses, status } = await send(gateway, way, name, sample.params());
          const calls = way.endsWith('batch') ? BATCH : 1;
          const where = `${name} ${mode} over ${way}`;
          expect(responses, where).toHaveLength(calls);
          expect(tokensTaken - before, `${where}: tokens taken`).toBe(mode === 'public' ? calls : 0);
          const outcomes = responses.map((response) => outcome(response, sample));
          for (const other of outcomes) expect(other, `${where}: every call of the batch`).toEqual(outcomes[0]);

          const forbidden = mode === 'public' && spec.public === 'forbidden';
          const onTransport = spec.transports.includes(transportOf(way));
          if (!onTransport) {
            expect(outcomes[0], where).toMatchObject({ error: { code: -32601, message: expect.stringContaining(name) } });
            if (status !== undefined) expect(status, `${where}: HTTP status`).toBe(200);
          } else if (forbidden) {
            expect(outcomes[0], where).toEqual({ error: { code: -32001, message: `${name} is not available on this public endpoint` } });
            if (status !== undefined) expect(status, `${where}: HTTP status`).toBe(403);
          } else {
            expect(outcomes[0], `${where}: a result (the sample params are valid)`).not.toHaveProperty('error');
            if (status !== undefined) expect(status, `${where}: HTTP status`).toBe(200);
            // One answer for the method, whatever the transport or mode.
            answers.served ??= outcomes[0];
            expect(outcomes[0], where).toEqual(answers.served);
          }
          answers[`${mode} ${way}`] = outcomes[0];
        }
      }
      // Refusals too are the same in single calls and batches.
      for (const mode of ['private', 'public']) {
        expect(answers[`${mode} http batch`], `${name} ${mode}: HTTP batch as single`).toEqual(answers[`${mode} http`]);
        expect(answers[`${mode} ws batch`], `${name} ${mode}: WebSocket batch as single`).toEqual(answers[`${mode} ws`]);
      }
    }, 30_000);
  });
});

describe('public mode over a batch that mixes refused and served calls', () => {
  it('refuses the forbidden call and serves the others, the same over HTTP and WebSocket', async () => {
    const forbidden = registry.find((spec) => spec.public === 'forbidden');
    expect(forbidden, 'the registry declares a method refused in public mode').toBeDefined();
    const batch = (first: number) => [
      { jsonrpc: '2.0', id: first, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: first + 1, method: forbidden!.name, params: samples[forbidden!.name]!.params() },
    ];
    const expected = (first: number) => [
      { jsonrpc: '2.0', id: first, result: '0x385' },
      { jsonrpc: '2.0', id: first + 1, error: { code: -32001, message: `${forbidden!.name} is not available on this public endpoint` } },
    ];
    const overHttpBatch = await overHttp(publicGateway.url, batch(900));
    expect(overHttpBatch).toEqual({ status: 200, body: expected(900) });
    const ws = await socketOf(publicGateway);
    expect(await ws.send(batch(910), 910)).toEqual(expected(910));
  });
});

describe('the rate limit', () => {
  it('takes one token per call on every transport: a batch of 50 under a limit of 5 serves 5 and answers -32005 to the rest; the connection stays open', async () => {
    let nowMs = 1_000_000;
    const gateway = await startGateway({ public: true, rateLimit: 5, limiter: createRateLimiter(5, () => nowMs) });
    const batch = (first: number) =>
      Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: first + i, method: 'eth_chainId', params: [] }));
    const served = (responses: Response[]) => responses.filter((response) => response.result === '0x385').length;
    const limited = (responses: Response[]) =>
      responses.filter(
        (response) => response.error?.code === -32005 && /rate limit exceeded: at most 5 calls per second/.test(response.error.message),
      ).length;
    const socket = new WebSocket(gateway.wsUrl);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const next = () =>
      new Promise<Response | Response[]>((resolve) => socket.once('message', (data) => resolve(JSON.parse(data.toString()))));
    try {
      // WebSocket first: the bucket holds 5.
      let answer = next();
      socket.send(JSON.stringify(batch(1)));
      const overWs = (await answer) as Response[];
      expect([overWs.length, served(overWs), limited(overWs)]).toEqual([50, 5, 45]);
      // The budget is the client's, whatever the transport: HTTP finds it empty, and says 429.
      const empty = await overHttp(gateway.url, batch(100));
      expect(empty.status).toBe(429);
      expect([served(empty.body as Response[]), limited(empty.body as Response[])]).toEqual([0, 50]);
      const single = await overHttp(gateway.url, { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] });
      expect(single).toMatchObject({ status: 429, body: { id: 7, error: { code: -32005 } } });
      // A second later, HTTP is charged as WebSocket was.
      nowMs += 1000;
      const overHttpBatch = await overHttp(gateway.url, batch(200));
      expect(overHttpBatch.status).toBe(200);
      expect([served(overHttpBatch.body as Response[]), limited(overHttpBatch.body as Response[])]).toEqual([5, 45]);
      // The WebSocket connection is still open, and served again once the budget refills.
      answer = next();
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 300, method: 'eth_chainId', params: [] }));
      expect(await answer).toMatchObject({ id: 300, error: { code: -32005 } });
      nowMs += 1000;
      answer = next();
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 301, method: 'eth_chainId', params: [] }));
      expect(await answer).toEqual({ jsonrpc: '2.0', id: 301, result: '0x385' });
      expect(socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      socket.close();
    }
  });
});
