import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, webSocket, type Hex } from 'viem';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, tempDir, testContext } from '../helpers/context.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, emitter, sender, signedTransfers } from '../helpers/view-records.ts';
import { validatingFetch } from '../helpers/openrpc-schema.ts';

/**
 * viem as a real client of the gateway (http and webSocket transports): its formatters accept the
 * pending block, transactions, receipts and logs the gateway serves. The upstream here is scripted;
 * gateway-devnet.test.ts runs the same client against the whole pipeline on the devnet.
 */
let dir: ReturnType<typeof tempDir>;
let log: Log;
let stub: RpcStub;
let serve: Serve;
const contract = '0x00000000000000000000000000000000000000cc' as Hex;
const block = blockBuilder(42n);
let txs: Awaited<ReturnType<typeof signedTransfers>>;

beforeAll(async () => {
  dir = tempDir();
  log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  stub = await createRpcStub({
    eth_blockNumber: () => '0x29',
    eth_chainId: () => '0x385',
    eth_getBalance: () => '0x0',
    eth_getCode: () => '0x',
    eth_getStorageAt: () => `0x${'0'.repeat(64)}`,
    eth_getTransactionReceipt: () => null,
  });
  txs = await signedTransfers(3);
  await log.produce(
    block.flashblock([txs[0]!], {
      stateDiff: {
        [sender.address]: { balance: '0xde0b6b3a7640000', nonce: '0x1' },
        [contract]: { code: '0x6080', storage: { [`0x${'0'.repeat(64)}`]: `0x${'0'.repeat(63)}7` } },
      },
    }),
  );
  serve = await createServe(testContext({ port: 0, rpc: stub.url, headPollMs: 100 }), { log, rpcUrl: stub.url });
}, 30_000);

afterAll(async () => {
  await serve?.close();
  await stub?.close();
  await log?.close();
  dir?.remove();
});

describe('viem against the gateway', () => {
  it('reads the pending block, logs and state over http', async () => {
    const client = createPublicClient({ transport: http(serve.gateway.url, { fetchFn: validatingFetch }) });
    const pending = await client.getBlock({ blockTag: 'pending', includeTransactions: true });
    expect(pending.number).toBe(42n);
    expect(pending.transactions[0]).toMatchObject({ hash: txs[0]!.hash, from: sender.address.toLowerCase(), type: 'eip1559', value: 1n });
    const logs = await client.getLogs({ fromBlock: 'pending', toBlock: 'pending', address: emitter });
    expect(logs.map((entry) => entry.transactionHash)).toEqual([txs[0]!.hash]);
    expect(await client.getBalance({ address: sender.address, blockTag: 'pending' })).toBe(10n ** 18n);
    expect(await client.getBalance({ address: sender.address })).toBe(0n);
    expect(await client.getCode({ address: contract, blockTag: 'pending' })).toBe('0x6080');
    expect(await client.getStorageAt({ address: contract, slot: '0x0', blockTag: 'pending' })).toBe(`0x${'0'.repeat(63)}7`);
    expect(await client.getTransactionCount({ address: sender.address, blockTag: 'pending' })).toBe(1);
    const receipt = await client.getTransactionReceipt({ hash: txs[0]!.hash });
    expect(receipt.status).toBe('success');
  });

  it('receives pendingLogs over webSocket as flashblocks arrive', async () => {
    const client = createPublicClient({ transport: webSocket(serve.gateway.wsUrl) });
    const received: { transactionHash: string; removed: boolean }[] = [];
    // viem types eth_subscribe with the standard kinds only; Base's kinds go through the same call.
    const subscribe = client.transport.subscribe as unknown as (args: {
      params: unknown[];
      onData: (data: { result: { transactionHash: string; removed: boolean } }) => void;
      onError: (error: unknown) => void;
    }) => Promise<{ unsubscribe: () => Promise<unknown> }>;
    const { unsubscribe } = await subscribe({
      params: ['pendingLogs', { address: emitter }],
      onData: (data) => {
        received.push(data.result);
      },
      onError: () => {},
    });
    await log.produce(block.flashblock([txs[1]!, txs[2]!]));
    await eventually(() => (received.length >= 2 ? true : undefined), 5000, 'pendingLogs');
    expect(received.map((entry) => entry.transactionHash)).toEqual([txs[1]!.hash, txs[2]!.hash]);
    const pending = await client.getBlock({ blockTag: 'pending' });
    expect(pending.transactions).toHaveLength(3);
    await unsubscribe();
    await (await client.transport.getRpcClient()).close();
  });
});
