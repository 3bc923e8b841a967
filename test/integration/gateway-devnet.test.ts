import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, getContractAddress, http, webSocket, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Devnet } from '../../devnet/edr/devnet.ts';
import type { Serve } from '../../streams/serve.ts';
import { eventually } from '../helpers/context.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';
import { validatingFetch } from '../helpers/openrpc-schema.ts';
import { topics } from '../../src/records/topics.ts';
import { rebuildHeaderFields } from '../../src/rpc/header-fields.ts';
import { blockRecordSchema } from '../../src/records/blocks.ts';
import type { PendingBlock } from '../../src/view/state.ts';
import { readTopic } from '../helpers/execution-harness.ts';

/**
 * The whole path on the devnet: devnet flashblocks -> ingest (local EDR executor) -> embedded log
 * -> view -> gateway, with the devnet node as the upstream and viem as the client. Transactions are
 * sent right after a block seals, so the gateway must show them while the devnet's own `latest`
 * does not have them yet.
 */
const zeroHash = `0x${'0'.repeat(64)}`;
// Initcode: SSTORE(0, 42); LOG1(topic) with no data; returns the runtime `PUSH1 42 ... RETURN` (10 bytes).
const topic = `0x${'c0ffee'.padEnd(64, '0')}` as Hex;
const runtime = '0x602a60005260206000f3' as Hex;
const initcode = `0x602a600055${'7f'}${topic.slice(2)}60006000a1600a6037600039600a6000f3${runtime.slice(2)}` as Hex;

let devnet: Devnet;
let serve: Serve;
let setup: DevnetGateway;

const raw = async (url: string, method: string, params: unknown[]) => {
  const response = await validatingFetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await response.json()) as { result?: any; error?: { code: number; message: string } };
};
/** Resolves right after the devnet seals a block, so the next one is ~blockTimeMs away. */
const afterSeal = () => setup.afterSeal();

beforeAll(async () => {
  setup = await startDevnetGateway({ blockTimeMs: 4000, flashblockMs: 200 });
  ({ devnet, serve } = setup);
}, 60_000);

afterAll(async () => {
  await setup?.close();
}, 60_000);

describe('the gateway on the devnet, with viem', () => {
  it('shows a pre-confirmed transfer and deployment (balance, code, storage, logs) before their block seals', async () => {
    const account = privateKeyToAccount(devnet.accounts[1]!.privateKey);
    const recipient = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;
    const gateway = createPublicClient({ transport: http(serve.gateway.url, { fetchFn: validatingFetch }) }) as PublicClient;
    const node = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
    const wallet = createWalletClient({ account, transport: http(devnet.rpcUrl) });
    const ws = createPublicClient({ transport: webSocket(serve.gateway.wsUrl) });
    const nonce = await node.getTransactionCount({ address: account.address });
    const contract = getContractAddress({ from: account.address, nonce: BigInt(nonce + 1) });
    const received: { address: string; topics: string[]; transactionHash: string; blockHash: string }[] = [];
    const subscribe = ws.transport.subscribe as unknown as (args: {
      params: unknown[];
      onData: (data: { result: (typeof received)[number] }) => void;
      onError: (error: unknown) => void;
    }) => Promise<{ unsubscribe: () => Promise<unknown> }>;
    const subscription = await subscribe({
      params: ['pendingLogs', { address: contract }],
      onData: (data) => {
        received.push(data.result);
      },
      onError: () => {},
    });

    await afterSeal();
    const sealedBefore = await node.getBlockNumber();
    const gas = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000n };
    const transfer = await wallet.sendTransaction({ chain: null, to: recipient, value: 12_345n, nonce, gas: 21_000n, ...gas });
    const deploy = await wallet.sendTransaction({ chain: null, data: initcode, nonce: nonce + 1, gas: 200_000n, ...gas });

    await eventually(
      async () => ((await gateway.getCode({ address: contract, blockTag: 'pending' })) === runtime ? true : undefined),
      3000,
      'pre-confirmed deployment',
    );
    const balance = await gateway.getBalance({ address: recipient, blockTag: 'pending' });
    const storage = await gateway.getStorageAt({ address: contract, slot: '0x0', blockTag: 'pending' });
    const pending = await gateway.getBlock({ blockTag: 'pending' });
    const logs = await gateway.getLogs({ address: contract, fromBlock: 'pending', toBlock: 'pending' });
    await eventually(() => (received.length >= 1 ? true : undefined), 2000, 'pendingLogs notification');
    // The node has not sealed them yet: its latest block is the one before, and it knows nothing of them.
    expect(await node.getBlockNumber()).toBe(sealedBefore);
    expect(await node.getBalance({ address: recipient })).toBe(0n);
    expect(await node.getCode({ address: contract })).toBeUndefined();

    expect(balance).toBe(12_345n);
    expect(storage).toBe(`0x${'0'.repeat(62)}2a`);
    expect(pending.number).toBe(sealedBefore + 1n);
    expect(pending.hash).toBe(zeroHash);
    expect(pending.transactions).toEqual(expect.arrayContaining([transfer, deploy]));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ address: contract.toLowerCase(), topics: [topic], transactionHash: deploy, blockHash: zeroHash });
    expect(received[0]).toMatchObject({ address: contract.toLowerCase(), topics: [topic], transactionHash: deploy, blockHash: zeroHash });
    const receipt = await gateway.getTransactionReceipt({ hash: deploy });
    expect(receipt).toMatchObject({ contractAddress: contract.toLowerCase(), status: 'success', blockHash: zeroHash });

    // Once sealed, the same reads come from the node, with the real block hash.
    await eventually(async () => ((await node.getBlockNumber()) > sealedBefore ? true : undefined), 8000, 'the seal');
    const sealedReceipt = await gateway.getTransactionReceipt({ hash: deploy });
    expect(sealedReceipt.blockHash).not.toBe(zeroHash);
    expect(await gateway.getCode({ address: contract })).toBe(runtime);
    await subscription.unsubscribe();
    await (await ws.transport.getRpcClient()).close();
  }, 40_000);

  it('serves every pending method and passes the node errors through', async () => {
    const account = privateKeyToAccount(devnet.accounts[2]!.privateKey);
    const wallet = createWalletClient({ account, transport: http(devnet.rpcUrl) });
    const node = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
    await afterSeal();
    const nonce = await node.getTransactionCount({ address: account.address });
    const hash = await wallet.sendTransaction({
      chain: null,
      data: initcode,
      nonce,
      gas: 200_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const url = serve.gateway.url;
    await eventually(
      async () => ((await raw(url, 'eth_getTransactionReceipt', [hash])).result ? true : undefined),
      3000,
      'pending receipt',
    );
    const block = (await raw(url, 'eth_getBlockByNumber', ['pending', true])).result;
    const position = block.transactions.findIndex((tx: { hash: string }) => tx.hash === hash);
    expect(position, JSON.stringify(block.transactions.map((tx: { type: string; hash: string }) => [tx.type, tx.hash]))).toBeGreaterThan(0); // the L1-attributes deposit is first
    expect(block.transactions[0].type).toBe('0x7e');
    const receipts = (await raw(url, 'eth_getBlockReceipts', ['pending'])).result;
    expect(receipts[position].transactionHash).toBe(hash);
    expect((await raw(url, 'eth_getTransactionByHash', [hash])).result).toMatchObject({
      hash,
      blockHash: null,
      blockNumber: block.number,
      from: account.address.toLowerCase(),
    });
    expect((await raw(url, 'eth_getBlockTransactionCountByNumber', ['pending'])).result).toBe(
      `0x${block.transactions.length.toString(16)}`,
    );
    expect((await raw(url, 'eth_getTransactionCount', [account.address, 'pending'])).result).toBe(`0x${(nonce + 1).toString(16)}`);
    expect((await raw(url, 'eth_getTransactionCount', [account.address, 'latest'])).result).toBe(`0x${nonce.toString(16)}`);
    // A mixed range: historical logs of earlier blocks from the node, then the pending ones, each with blockTimestamp.
    const mixed = (await raw(url, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: 'pending', topics: [topic] }])).result as {
      blockNumber: string;
      transactionHash: string;
      blockTimestamp?: string;
    }[];
    expect(mixed.at(-1)!.transactionHash).toBe(hash);
    expect(mixed.length).toBeGreaterThanOrEqual(2);
    expect(mixed.every((entry) => entry.blockTimestamp !== undefined)).toBe(true);
    expect(new Set(mixed.map((entry) => `${entry.blockNumber}/${entry.transactionHash}`)).size).toBe(mixed.length);
    // Forwarded: chain id; the node's own errors pass through with their codes.
    expect((await raw(url, 'eth_chainId', [])).result).toBe(`0x${devnet.chainId.toString(16)}`);
    const unknown = await raw(url, 'eth_noSuchMethod', []);
    const nodeUnknown = await raw(devnet.rpcUrl, 'eth_noSuchMethod', []);
    expect(unknown.error).toEqual(nodeUnknown.error);
    const replay = await raw(url, 'eth_sendRawTransaction', ['0x02']);
    expect(replay.error).toEqual((await raw(devnet.rpcUrl, 'eth_sendRawTransaction', ['0x02'])).error);
    expect((await raw(url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1000' }])).error?.code).toBe(-32602);
  }, 40_000);

  it('rebuilds the header fields the feed does not send as the node seals them: transactionsRoot, size, requestsHash', async () => {
    await afterSeal();
    await afterSeal();
    const records = (await readTopic(setup.log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    let compared = 0;
    for (const record of records) {
      // The devnet's index-0 and last flashblocks carry the real block's hash (trial ones in between do not).
      const node = await raw(devnet.rpcUrl, 'eth_getBlockByHash', [record.header.flashblockHash, false]);
      if (!node.result) continue;
      const block = {
        number: BigInt(record.blockNumber),
        header: record.header,
        transactions: record.transactions,
      } as unknown as PendingBlock;
      const fields = await rebuildHeaderFields(block);
      expect(fields.exact).toBe(true);
      expect({ transactionsRoot: fields.transactionsRoot, requestsHash: fields.requestsHash }).toEqual({
        transactionsRoot: node.result.transactionsRoot,
        requestsHash: node.result.requestsHash,
      });
      // The size is go-ethereum's (and reth's): rlp([header, transactions, [], withdrawals]), a typed
      // transaction as an RLP string of its envelope. The devnet answers it so (EDR's own `size`
      // leaves out those strings' headers; devnet/edr/op-geth-shape.ts).
      expect(fields.size).toBe(node.result.size);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(2);
  }, 20_000);
});
