import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, kafkaBrokers, testContext } from '../helpers/context.ts';
import { prefixedLog } from '../helpers/prefixed-log.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, chainRecord, sender, signedTransfers } from '../helpers/view-records.ts';
import { validatingFetch } from '../helpers/openrpc-schema.ts';

/**
 * Two gateways, each with its own Kafka client and ephemeral reader, on one Kafka log (this run's
 * own topics on the test broker): they answer the same, before and after more records arrive.
 */
const prefix = `gw${Date.now().toString(36)}-`;
let stub: RpcStub;
const logs: Log[] = [];
const serves: Serve[] = [];

const call = async (serve: Serve, method: string, params: unknown[]) => {
  const response = await validatingFetch(serve.gateway.url, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: unknown; error?: unknown };
};
const queries = (hash: string): [string, unknown[]][] => [
  ['eth_getBlockByNumber', ['pending', true]],
  ['eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]],
  ['eth_getBalance', [sender.address, 'pending']],
  ['eth_getBlockReceipts', ['pending']],
  ['eth_getTransactionReceipt', [hash]],
];

beforeAll(async () => {
  stub = await createRpcStub({ eth_blockNumber: () => '0x13', eth_getTransactionReceipt: () => null, eth_getBalance: () => '0x1' });
  for (let i = 0; i < 2; i++) {
    const log = prefixedLog(createKafkaLog({ brokers: kafkaBrokers(), clientId: `gateway-test-${i}`, maxWaitMs: 50 }), prefix);
    logs.push(log);
  }
  await logs[0]!.ensureTopics(allTopics.map((name) => ({ name, partitions: 1 })));
}, 60_000);

afterAll(async () => {
  for (const serve of serves) await serve.close();
  for (const log of logs) await log.close();
  await stub?.close();
});

describe('two gateways on one Kafka log', () => {
  it('build the same view and give the same answers', async () => {
    const txs = await signedTransfers(4);
    const sealed = blockBuilder(19n);
    const pending = blockBuilder(20n);
    await logs[0]!.produce([
      ...sealed.flashblock([txs[0]!]),
      chainRecord({ type: 'sealed', blockNumber: '0x13', blockHash: `0x${'13'.repeat(32)}`, transactions: [txs[0]!.hash] }),
      ...pending.flashblock([txs[1]!], { stateDiff: { [sender.address]: { balance: '0x99', nonce: '0x2' } } }),
    ]);
    for (let i = 0; i < 2; i++) {
      const ctx = testContext({ port: 0, rpc: stub.url, headPollMs: 0, log: 'kafka', kafkaBrokers: kafkaBrokers() });
      serves.push(await createServe(ctx, { log: logs[i]!, rpcUrl: stub.url }));
    }
    const [a, b] = serves as [Serve, Serve];
    const first = await Promise.all(queries(txs[1]!.hash).map(([m, p]) => call(a, m, p)));
    expect((first[0]!.result as { number: string }).number).toBe('0x14');
    expect(first[2]!.result).toBe('0x99');
    expect(await Promise.all(queries(txs[1]!.hash).map(([m, p]) => call(b, m, p)))).toEqual(first);
    // More flashblocks arrive live: both follow.
    await logs[1]!.produce(pending.flashblock([txs[2]!, txs[3]!]));
    for (const serve of serves) {
      await eventually(
        async () => ((await call(serve, 'eth_getBlockTransactionCountByNumber', ['pending'])).result === '0x3' ? true : undefined),
        15_000,
        'live flashblock',
      );
    }
    const second = await Promise.all(queries(txs[3]!.hash).map(([m, p]) => call(a, m, p)));
    expect((second[3]!.result as unknown[]).length).toBe(3);
    expect(await Promise.all(queries(txs[3]!.hash).map(([m, p]) => call(b, m, p)))).toEqual(second);
  }, 60_000);
});
