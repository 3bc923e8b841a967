import { encodeFunctionData, numberToHex, parseEther, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevnetToken } from '../../devnet/contracts/bytecode.ts';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { viewCatchUpMs } from '../../src/rpc/pending.ts';
import { sourceEventRecords } from '../../src/source/event-records.ts';
import { createNodeReader } from '../../src/source/node-reader.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { tempDir, testContext } from '../helpers/context.ts';
import { rpc } from '../helpers/devnet-feed.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, sender, signedTransfers } from '../helpers/view-records.ts';

/**
 * `pending` on a blocks source (200 ms complete blocks, Base since Denim) is the newest block the
 * view holds, for every method, and its state is the node's state at that block. Held against a
 * real node (EDR, every block different: each moves the sender's nonce, balance and token
 * balance, and emits logs): with 1, 2 and 3 blocks held, every pending answer equals the node's
 * answer for that block, and the methods agree with each other. When the node's head has passed
 * the newest held block, pending is not older than `latest`.
 *
 * The records are the blocks source's own (node reader -> source event records), written to an
 * embedded log a gateway (`serve --source blocks`) reads.
 */
type Json = Record<string, unknown>;
const user = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const others: Address[] = ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8', '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'];

let chain: EdrChain;
let token: Address;
let nonce = 0;
/** The chain's blocks this test made, oldest first: number and hash. */
const made: { number: bigint; hash: Hex }[] = [];

const node = <T>(method: string, params: unknown[] = []) => rpc<T>(chain.url, method, params);

async function send(tx: { to: Address; data?: Hex; value?: bigint }): Promise<Hex> {
  const raw = await user.signTransaction({
    chainId: chain.chainId,
    type: 'eip1559',
    nonce: nonce++,
    gas: 100_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 1n,
    ...tx,
  });
  return node<Hex>('eth_sendRawTransaction', [raw]);
}

/** A block with `count` transactions of the user: token transfers (logs) and plain transfers. */
async function block(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const to = others[i % others.length]!;
    if (i % 2 === 0)
      await send({
        to: token,
        data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'transfer', args: [to, BigInt(made.length + 1)] }),
      });
    else await send({ to, value: BigInt(made.length + 1) });
  }
  await node('evm_mine');
  const head = await node<{ number: Hex; hash: Hex }>('eth_getBlockByNumber', ['latest', false]);
  made.push({ number: BigInt(head.number), hash: head.hash });
}

/** A gateway whose view holds exactly `blocks`, as the blocks source publishes them. */
async function gatewayHolding(blocks: readonly { hash: Hex }[]): Promise<{ serve: Serve; log: Log; close(): Promise<void> }> {
  const dir = tempDir('flashlog-pending-');
  const log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const reader = createNodeReader(createUpstream(chain.url, { timeoutMs: 5000 }));
  for (const { hash } of blocks) {
    const read = (await reader.read(hash))!;
    await log.produce(sourceEventRecords({ type: 'grew', block: read.block, receipts: read.receipts, receivedAt: Date.now() }));
  }
  const ctx = testContext({ port: 0, source: 'blocks', headPollMs: 0, rpcTimeoutMs: 5000 });
  const serve = await createServe(ctx, { log, rpcUrl: chain.url, source: 'blocks' });
  return {
    serve,
    log,
    async close() {
      await serve.close();
      await log.close();
      dir.remove();
    },
  };
}

beforeAll(async () => {
  chain = await startEdrChain();
  await chain.request('hardhat_setBalance', [user.address, numberToHex(parseEther('100'))]);
  await chain.request('evm_setAutomine', [false]);
  const hash = await node<Hex>('eth_sendRawTransaction', [
    await user.signTransaction({
      chainId: chain.chainId,
      type: 'eip1559',
      nonce: nonce++,
      gas: 2_000_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      data: `${DevnetToken.bytecode}${numberToHex(10n ** 24n, { size: 32 }).slice(2)}` as Hex,
    }),
  ]);
  await node('evm_mine');
  token = (await node<{ contractAddress: Address }>('eth_getTransactionReceipt', [hash])).contractAddress;
  for (const count of [2, 3, 1, 4]) await block(count);
}, 60_000);
afterAll(async () => chain?.close());

const withoutMillisUnless = (log: Json, like: Json | undefined): Json => {
  if (like && 'blockTimestampMs' in like) return log;
  const { blockTimestampMs: _ms, ...rest } = log;
  return rest;
};

const balanceOf = (account: Address) => ({
  to: token,
  data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [account] }),
});

describe.each([1, 2, 3])('pending on a blocks source, %i block(s) held', (held) => {
  let gateway: Awaited<ReturnType<typeof gatewayHolding>>;
  const at = () => made.at(-1)!; // the newest held block; the node's head
  const call = <T>(method: string, params: unknown[]) => rpc<T>(gateway.serve.gateway.url, method, params);
  beforeAll(async () => {
    gateway = await gatewayHolding(made.slice(-held));
  });
  afterAll(async () => gateway?.close());

  it('is the newest held block for every method: block, logs, receipts, count, transactions', async () => {
    const pending = await call<{ number: Hex; hash: Hex; transactions: Json[] }>('eth_getBlockByNumber', ['pending', true]);
    expect(BigInt(pending.number)).toBe(at().number);
    expect(pending.hash).toBe(at().hash);
    const receipts = await call<{ logs: Json[] }[]>('eth_getBlockReceipts', ['pending']);
    const logs = await call<Json[]>('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toEqual(receipts.flatMap((receipt) => receipt.logs));
    expect(logs.every((log) => log.blockNumber === pending.number && log.blockHash === pending.hash)).toBe(true);
    // This node is a plain EVM chain: it has no `blockTimestampMs`, which the blocks source adds.
    const nodeLogs = await node<Json[]>('eth_getLogs', [{ blockHash: at().hash }]);
    expect(logs.map((log) => withoutMillisUnless(log, nodeLogs[0]))).toEqual(nodeLogs);
    expect(BigInt(await call<Hex>('eth_getBlockTransactionCountByNumber', ['pending']))).toBe(BigInt(pending.transactions.length));
    expect(pending.transactions.map((tx) => tx.hash)).toEqual(
      (await node<{ transactions: Hex[] }>('eth_getBlockByHash', [at().hash, false])).transactions,
    );
    for (const tx of pending.transactions) {
      const byHash = await call<Json>('eth_getTransactionByHash', [tx.hash]);
      expect(byHash.hash).toBe(tx.hash);
      expect(byHash.blockNumber).toBe(pending.number);
      expect(byHash.blockHash).toBe(pending.hash);
      expect(byHash.transactionIndex).toBe(tx.transactionIndex);
      expect(byHash.nonce).toBe(tx.nonce);
      expect(byHash.input).toBe(tx.input);
      expect(BigInt(byHash.r as Hex)).toBe(BigInt(tx.r as Hex));
      expect(BigInt(byHash.s as Hex)).toBe(BigInt(tx.s as Hex));
    }
  });

  it("state is the node's at that block, by hash: balance, nonce, code, storage, eth_call, estimateGas, simulateV1", async () => {
    const byHash = { blockHash: at().hash };
    for (const [method, params] of [
      ['eth_getBalance', [user.address]],
      ['eth_getTransactionCount', [user.address]],
      ['eth_getBalance', [others[0]!]],
      ['eth_getCode', [token]],
      ['eth_getStorageAt', [token, numberToHex(0, { size: 32 })]],
    ] as const) {
      expect(await call(method, [...params, 'pending']), `${method} ${params[0]}`).toEqual(await node(method, [...params, byHash]));
    }
    // Every block moved the user's nonce: a read at any other block would differ.
    const nonceAt = async (n: bigint) => BigInt(await node<Hex>('eth_getTransactionCount', [user.address, numberToHex(n)]));
    expect(await nonceAt(at().number - 1n)).toBeLessThan(await nonceAt(at().number));
    expect(BigInt(await call<Hex>('eth_getTransactionCount', [user.address, 'pending']))).toBe(BigInt(nonce));
    expect(await call('eth_call', [balanceOf(others[0]!), 'pending'])).toEqual(await node('eth_call', [balanceOf(others[0]!), byHash]));
    expect(BigInt(await call<Hex>('eth_estimateGas', [{ from: user.address, to: others[1]!, value: '0x1' }, 'pending']))).toBe(21_000n);
    const [simulated] = await call<{ number: Hex; calls: { returnData: Hex; status: Hex }[] }[]>('eth_simulateV1', [
      { blockStateCalls: [{ calls: [balanceOf(others[0]!)] }] },
      'pending',
    ]);
    expect(BigInt(simulated!.number), 'simulated on top of the pending block').toBe(at().number + 1n);
    expect(simulated!.calls[0]!.returnData).toBe(await node('eth_call', [balanceOf(others[0]!), byHash]));
  });
});

describe('pending when the node has passed the newest held block', () => {
  it('is never older than latest: every method answers as latest once the view does not catch up', async () => {
    const gateway = await gatewayHolding(made.slice(-2));
    try {
      await block(2); // the node moves on; nothing publishes the new block to this gateway's log
      const latest = made.at(-1)!;
      const call = <T>(method: string, params: unknown[]) => rpc<T>(gateway.serve.gateway.url, method, params);
      const started = Date.now();
      expect(await call('eth_getTransactionCount', [user.address, 'pending'])).toBe(
        await node('eth_getTransactionCount', [user.address, 'latest']),
      );
      expect(Date.now() - started, 'waited for the view, then answered').toBeGreaterThanOrEqual(viewCatchUpMs - 20);
      expect(await call('eth_getBalance', [user.address, 'pending'])).toBe(await node('eth_getBalance', [user.address, 'latest']));
      expect(await call('eth_call', [balanceOf(others[0]!), 'pending'])).toBe(await node('eth_call', [balanceOf(others[0]!), 'latest']));
      const nodeLogs = await node<Json[]>('eth_getLogs', [{ blockHash: latest.hash }]);
      expect(nodeLogs.length).toBeGreaterThan(0);
      expect(await call('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }])).toEqual(nodeLogs);
      const pending = await call<{ hash: Hex; transactions: Hex[] }>('eth_getBlockByNumber', ['pending', false]);
      expect(pending.hash).toBe(latest.hash);
      expect(await call('eth_getBlockTransactionCountByNumber', ['pending'])).toBe(numberToHex(pending.transactions.length));
      // eth_getBlockReceipts goes to this node as `latest` too, which does not have the method.
    } finally {
      await gateway.close();
    }
  });

  it('answers from the newer block as soon as the view holds it', async () => {
    const gateway = await gatewayHolding(made.slice(-3, -1));
    try {
      const newest = made.at(-1)!;
      const call = <T>(method: string, params: unknown[]) => rpc<T>(gateway.serve.gateway.url, method, params);
      const reader = createNodeReader(createUpstream(chain.url, { timeoutMs: 5000 }));
      const read = (await reader.read(newest.hash))!;
      const answer = call<Hex>('eth_getTransactionCount', [user.address, 'pending']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await gateway.log.produce(sourceEventRecords({ type: 'grew', block: read.block, receipts: read.receipts, receivedAt: Date.now() }));
      expect(await answer).toBe(await node('eth_getTransactionCount', [user.address, { blockHash: newest.hash }]));
      const pending = await call<{ hash: Hex }>('eth_getBlockByNumber', ['pending', false]);
      expect(pending.hash).toBe(newest.hash);
    } finally {
      await gateway.close();
    }
  });
});

/**
 * A flashblocks source: `pending` is the block being built (the newest held), its state the
 * canonical block under the held blocks with their diffs. The view's canonical head lags (it knows
 * no canonical block; the node has sealed the first held block already). The node is a stub that
 * answers per block: the sender's nonce and balance move every block, an untouched account's
 * balance changed below the held blocks, and a block above the node's head is unknown to it.
 */
describe.each([1, 2, 3])('pending on a flashblocks source, %i block(s) held, the canonical head lagging', (held) => {
  const first = 100n; // the first held block; the node has sealed it, the view does not know
  const newest = first + BigInt(held) - 1n;
  const untouched = '0x00000000000000000000000000000000000000bb' as const;
  const nodeHead = first;
  /** The node's state after block n. */
  const senderNonce = (n: bigint) => 2n * n;
  const senderBalance = (n: bigint) => 10n ** 20n - n;
  const untouchedBalance = (n: bigint) => (n < first - 1n ? 5n : 7n); // last changed in block 99
  let stub: RpcStub;
  let gateway: { serve: Serve; close(): Promise<void> };
  let forwardedAt: unknown[] = [];
  const call = <T>(method: string, params: unknown[]) => rpc<T>(gateway.serve.gateway.url, method, params);

  beforeAll(async () => {
    const at = (block: unknown): bigint => {
      const n = block === 'latest' ? nodeHead : BigInt(block as string);
      if (n > nodeHead) throw { code: -32000, message: `header not found: block ${n}` };
      return n;
    };
    stub = await createRpcStub({
      eth_blockNumber: () => numberToHex(nodeHead),
      eth_getBalance: ([address, block]) => {
        forwardedAt.push(block);
        const n = at(block);
        return numberToHex(String(address).toLowerCase() === untouched ? untouchedBalance(n) : senderBalance(n));
      },
      eth_getTransactionCount: ([, block]) => numberToHex(senderNonce(at(block))),
      // Each sealed block holds the three transactions the view pre-confirmed for it.
      eth_getBlockTransactionCountByNumber: ([block]) => (at(block), '0x3'),
      eth_getTransactionByHash: () => null,
      eth_getTransactionReceipt: () => null,
    });
    const txs = await signedTransfers(3 * held, Number(senderNonce(first - 1n)));
    const records = [];
    for (let i = 0; i < held; i++) {
      const number = first + BigInt(i);
      const builder = blockBuilder(number);
      const diff = { [sender.address]: { balance: numberToHex(senderBalance(number)), nonce: numberToHex(senderNonce(number)) } };
      records.push(...builder.flashblock(txs.slice(3 * i, 3 * i + 2)), ...builder.flashblock([txs[3 * i + 2]!], { stateDiff: diff }));
    }
    const dir = tempDir('flashlog-pending-fb-');
    const log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    await log.produce(records);
    const serve = await createServe(testContext({ port: 0, source: 'flashblocks', headPollMs: 0, rpcTimeoutMs: 5000 }), {
      log,
      rpcUrl: stub.url,
    });
    gateway = {
      serve,
      async close() {
        await serve.close();
        await log.close();
        dir.remove();
      },
    };
  });
  afterAll(async () => {
    await gateway?.close();
    await stub?.close();
  });

  it('is the newest held block for every method: block, logs, receipts, count, transactions', async () => {
    const pending = await call<{ number: Hex; transactions: Json[] }>('eth_getBlockByNumber', ['pending', true]);
    expect(BigInt(pending.number)).toBe(newest);
    const receipts = await call<{ logs: Json[] }[]>('eth_getBlockReceipts', ['pending']);
    const logs = await call<Json[]>('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]);
    expect(logs).toHaveLength(3);
    expect(logs).toEqual(receipts.flatMap((receipt) => receipt.logs));
    expect(logs.every((log) => log.blockNumber === pending.number)).toBe(true);
    expect(BigInt(await call<Hex>('eth_getBlockTransactionCountByNumber', ['pending']))).toBe(BigInt(pending.transactions.length));
    for (const tx of pending.transactions) expect(await call('eth_getTransactionByHash', [tx.hash])).toEqual(tx);
  });

  it('state: the diff of the newest held block, else the node at the block under the held ones; never older than latest', async () => {
    const nonce = BigInt(await call<Hex>('eth_getTransactionCount', [sender.address, 'pending']));
    expect(nonce).toBe(senderNonce(newest));
    expect(nonce).toBeGreaterThanOrEqual(BigInt(await rpc<Hex>(stub.url, 'eth_getTransactionCount', [sender.address, 'latest'])));
    expect(BigInt(await call<Hex>('eth_getBalance', [sender.address, 'pending']))).toBe(senderBalance(newest));
    forwardedAt = [];
    const fallThrough = await call<Hex>('eth_getBalance', [untouched, 'pending']);
    expect(forwardedAt).toEqual([numberToHex(first - 1n)]);
    expect(fallThrough).toBe(await rpc<Hex>(stub.url, 'eth_getBalance', [untouched, forwardedAt[0]]));
    expect(BigInt(fallThrough)).toBe(BigInt(await rpc<Hex>(stub.url, 'eth_getBalance', [untouched, 'latest'])));
  });
});

/**
 * Nothing held (a gateway started before the first pre-confirmation, or a view emptied by the
 * canonical head): `pending` is the node's `latest`, for every method, and not its `finalized`
 * block, which would be older than what the same node answers for `latest`. The stub node answers
 * every block tag with a different block.
 */
describe('pending with nothing held', () => {
  const heights: Record<string, bigint> = { latest: 50n, safe: 40n, finalized: 30n, earliest: 0n };
  const height = (tag: unknown) => heights[String(tag)] ?? BigInt(tag as string);
  let stub: RpcStub;
  let gateway: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    const log = (n: bigint) => ({
      address: '0x00000000000000000000000000000000000000cc',
      topics: [],
      data: '0x',
      blockNumber: numberToHex(n),
      blockHash: numberToHex(n, { size: 32 }),
      blockTimestamp: numberToHex(1_700_000_000n + n),
      transactionHash: numberToHex(n + 1000n, { size: 32 }),
      transactionIndex: '0x0',
      logIndex: '0x0',
      removed: false,
    });
    stub = await createRpcStub({
      eth_blockNumber: () => numberToHex(heights.latest!),
      eth_getBlockByNumber: ([tag]) => ({
        number: numberToHex(height(tag)),
        hash: numberToHex(height(tag), { size: 32 }),
        transactions: [],
      }),
      eth_getBlockReceipts: ([tag]) => [{ blockNumber: numberToHex(height(tag)), logs: [log(height(tag))] }],
      eth_getBlockTransactionCountByNumber: ([tag]) => numberToHex(height(tag) % 7n),
      eth_getBalance: ([, tag]) => numberToHex(height(tag) * 10n),
      eth_getTransactionCount: ([, tag]) => numberToHex(height(tag)),
      eth_getCode: ([, tag]) => numberToHex(height(tag), { size: 4 }),
      eth_getStorageAt: ([, , tag]) => numberToHex(height(tag), { size: 32 }),
      eth_call: ([, tag]) => numberToHex(height(tag), { size: 32 }),
      eth_getLogs: ([filter]) => [log(height((filter as { toBlock: unknown }).toBlock))],
    });
    const dir = tempDir('flashlog-pending-none-');
    const store = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
    await store.ensureTopics(allTopics.map((name) => ({ name })));
    const serve = await createServe(testContext({ port: 0, headPollMs: 0, rpcTimeoutMs: 5000 }), { log: store, rpcUrl: stub.url });
    gateway = {
      url: serve.gateway.url,
      async close() {
        await serve.close();
        await store.close();
        dir.remove();
      },
    };
  });
  afterAll(async () => {
    await gateway?.close();
    await stub?.close();
  });

  it.each([
    ['eth_getBlockByNumber', (tag: string) => [tag, false]],
    ['eth_getBlockReceipts', (tag: string) => [tag]],
    ['eth_getBlockTransactionCountByNumber', (tag: string) => [tag]],
    ['eth_getBalance', (tag: string) => [sender.address, tag]],
    ['eth_getTransactionCount', (tag: string) => [sender.address, tag]],
    ['eth_getCode', (tag: string) => [sender.address, tag]],
    ['eth_getStorageAt', (tag: string) => [sender.address, '0x0', tag]],
    ['eth_call', (tag: string) => [{ to: sender.address }, tag]],
    ['eth_getLogs', (tag: string) => [{ fromBlock: tag, toBlock: tag }]],
  ] as const)("%s: pending is the node's latest, not its finalized block", async (method, params) => {
    const pending = await rpc(gateway.url, method, [...params('pending')]);
    expect(pending).toEqual(await rpc(stub.url, method, [...params('latest')]));
    expect(pending).not.toEqual(await rpc(stub.url, method, [...params('finalized')]));
  });
});
