import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, getContractAddress, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import { eventually } from '../helpers/context.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';

/**
 * Base's current `newFlashblockTransactions` shapes on the whole devnet path, over a real
 * WebSocket: `false` (hashes), `true` (full transactions with their receipt's outcome and all
 * their logs) and a filter `{address, topics}` (only the full transactions whose logs match).
 * And the filter limits of eth_getLogs (1,000 addresses, 1,000 topics per position).
 */
// Initcode: SSTORE(0, 42); LOG1(topic) with no data; returns a 10-byte runtime.
const topic = `0x${'c0ffee'.padEnd(64, '0')}` as Hex;
const initcode = `0x602a600055${'7f'}${topic.slice(2)}60006000a1600a6037600039600a6000f3602a60005260206000f3` as Hex;
let setup: DevnetGateway;

type Notification = { params: { subscription: string; result: any } };

beforeAll(async () => {
  setup = await startDevnetGateway({ blockTimeMs: 2000, flashblockMs: 200 });
}, 60_000);

afterAll(async () => {
  await setup?.close();
}, 60_000);

async function connect(url: string) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const notifications: Notification[] = [];
  const answers = new Map<number, { result?: unknown; error?: { code: number; message: string } }>();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Notification & {
      id?: number;
      result?: unknown;
      error?: { code: number; message: string };
    };
    if (message.id !== undefined) answers.set(message.id, message);
    else notifications.push(message);
  });
  let id = 0;
  const call = async (method: string, params: unknown[]) => {
    const mine = ++id;
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }));
    return eventually(() => answers.get(mine), 10_000, `answer ${mine}`);
  };
  return { ws, notifications, call };
}

const rpc = async (url: string, method: string, params: unknown[]) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: any; error?: { code: number; message: string } };
};

describe('newFlashblockTransactions', () => {
  it('sends hashes (false), full transactions with receipt fields and logs (true), and only matching ones (filter)', async () => {
    const { devnet, serve } = setup;
    const client = await connect(serve.gateway.wsUrl);
    const account = privateKeyToAccount(devnet.accounts[4]!.privateKey);
    const node = createPublicClient({ transport: http(devnet.rpcUrl) });
    const nonce = await node.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const contract = getContractAddress({ from: account.address, nonce: BigInt(nonce + 1) }).toLowerCase();
    const hashes = (await client.call('eth_subscribe', ['newFlashblockTransactions'])).result as string;
    const explicitHashes = (await client.call('eth_subscribe', ['newFlashblockTransactions', false])).result as string;
    const full = (await client.call('eth_subscribe', ['newFlashblockTransactions', true])).result as string;
    const filtered = (await client.call('eth_subscribe', ['newFlashblockTransactions', { address: contract, topics: [topic] }]))
      .result as string;
    const unmatched = (
      await client.call('eth_subscribe', ['newFlashblockTransactions', { address: contract, topics: [`0x${'ab'.repeat(32)}`] }])
    ).result as string;

    // The gateway follows from a block's first flashblock on: send in a block it has from the start.
    await setup.afterSeal();
    const common = { chainId: devnet.chainId, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000n, type: 'eip1559' as const };
    const transfer = await account.signTransaction({
      ...common,
      nonce,
      to: '0x00000000000000000000000000000000000000bb',
      value: 5n,
      gas: 21_000n,
    });
    const deploy = await account.signTransaction({ ...common, nonce: nonce + 1, to: null, data: initcode, gas: 300_000n });
    const transferHash = (await rpc(devnet.rpcUrl, 'eth_sendRawTransaction', [transfer])).result as string;
    const deployHash = (await rpc(devnet.rpcUrl, 'eth_sendRawTransaction', [deploy])).result as string;
    const of = (id: string) => client.notifications.filter((n) => n.params.subscription === id).map((n) => n.params.result);
    await eventually(
      () => (of(full).some((tx) => tx.hash === deployHash) && of(filtered).length > 0 ? true : undefined),
      15_000,
      'both transactions',
    );

    expect(of(hashes)).toEqual(expect.arrayContaining([transferHash, deployHash]));
    expect(of(explicitHashes)).toEqual(of(hashes));
    const fullTransfer = of(full).find((tx) => tx.hash === transferHash);
    const fullDeploy = of(full).find((tx) => tx.hash === deployHash);
    expect(fullTransfer).toMatchObject({ hash: transferHash, gasUsed: '0x5208', status: '0x1', contractAddress: null, logs: [] });
    expect(fullTransfer.cumulativeGasUsed).toMatch(/^0x[0-9a-f]+$/);
    expect(fullTransfer.logsBloom).toMatch(/^0x[0-9a-f]{512}$/);
    expect(fullDeploy).toMatchObject({ hash: deployHash, status: '0x1', contractAddress: contract, to: null });
    expect(fullDeploy.logs).toHaveLength(1);
    expect(fullDeploy.logs[0]).toMatchObject({ address: contract, topics: [topic], transactionHash: deployHash });
    expect(BigInt(fullDeploy.logsBloom)).not.toBe(0n);
    // The filter: the deployment (its log matches), in full with all its logs; never the transfer.
    expect(of(filtered).map((tx) => tx.hash)).toEqual([deployHash]);
    expect(of(filtered)[0]).toEqual(fullDeploy);
    expect(of(unmatched)).toEqual([]);

    const bad = await client.call('eth_subscribe', ['newFlashblockTransactions', 5]);
    expect(bad.error).toEqual({ code: -32602, message: 'params[1]: expected false, true or a filter {address, topics}, got 5' });
    const badAddress = await client.call('eth_subscribe', ['newFlashblockTransactions', { address: '0x12' }]);
    expect(badAddress.error).toMatchObject({ code: -32602, message: expect.stringContaining('params[1].address') });
    client.ws.close();
  });
});

describe('eth_getLogs filter limits', () => {
  const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
  const word = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;

  it('takes 1,000 addresses and 1,000 topics in a position, and refuses more naming the limit', async () => {
    const url = setup.serve.gateway.url;
    const atLimit = await rpc(url, 'eth_getLogs', [
      {
        fromBlock: 'latest',
        toBlock: 'latest',
        address: Array.from({ length: 1000 }, (_, i) => address(i + 1)),
        topics: [Array.from({ length: 1000 }, (_, i) => word(i + 1))],
      },
    ]);
    expect(atLimit.error).toBeUndefined();
    expect(atLimit.result).toEqual([]);
    const addresses = await rpc(url, 'eth_getLogs', [
      { fromBlock: 'pending', toBlock: 'pending', address: Array.from({ length: 1001 }, (_, i) => address(i + 1)) },
    ]);
    expect(addresses.error).toEqual({ code: -32602, message: 'params[0].address: expected at most 1000 addresses, got 1001' });
    const topics = await rpc(url, 'eth_getLogs', [
      { fromBlock: 'latest', topics: [null, Array.from({ length: 1001 }, (_, i) => word(i + 1))] },
    ]);
    expect(topics.error).toEqual({ code: -32602, message: 'params[0].topics[1]: expected at most 1000 topics in one position, got 1001' });
  });
});
