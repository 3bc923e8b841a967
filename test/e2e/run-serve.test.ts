import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotli, loadFixture, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { eventually, tempDir } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';

/**
 * `flashlog run` as a real process: a real flashblocks WebSocket (Base Sepolia block 33439826, 11
 * flashblocks) -> ingest -> embedded log -> view -> gateway. Then the process is killed (SIGKILL)
 * and `flashlog serve` over the same data directory gives the same answers.
 */
const messages = loadFixture('base-sepolia-33439826.json');
const blockNumber = 33439826;
const txCount = messages.reduce((sum, message) => sum + (message.diff as { transactions: unknown[] }).transactions.length, 0);
let feed: FeedServer;
let stub: RpcStub;
let dir: ReturnType<typeof tempDir>;
const processes: FlashlogProcess[] = [];

const call = async (url: string, method: string, params: unknown[]) => {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await response.json()) as { result: any }).result;
};
const gatewayUrl = async (process: FlashlogProcess) =>
  (await process.waitFor((line) => line.msg === 'gateway listening', 30_000)).url as string;

beforeAll(async () => {
  dir = tempDir();
  feed = await startFeedServer(() => messages.map((message) => ({ send: brotli(JSON.stringify(message)) })));
  stub = await createRpcStub({ eth_blockNumber: () => `0x${(blockNumber - 1).toString(16)}`, eth_chainId: () => '0x14a34' });
});

afterAll(async () => {
  for (const process of processes) await process.stop('SIGKILL');
  await feed?.close();
  await stub?.close();
  dir?.remove();
});

describe('flashlog run, then flashlog serve on the same log', () => {
  it('serves the pre-confirmed block from the feed, and the same after a kill and restart', async () => {
    const run = spawnFlashlog([
      'run',
      '--no-execute',
      '--ws',
      feed.url,
      '--rpc',
      stub.url,
      '--data-dir',
      dir.path,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--head-poll-ms',
      '200',
    ]);
    processes.push(run);
    const url = await gatewayUrl(run);
    await run.waitFor((line) => typeof line.text === 'string' && line.text.startsWith('flashlog gateway: http://127.0.0.1:'));
    const block = await eventually(
      async () => {
        const pending = await call(url, 'eth_getBlockByNumber', ['pending', false]);
        return pending?.number === `0x${blockNumber.toString(16)}` && pending.transactions.length === txCount ? pending : undefined;
      },
      30_000,
      'the pending block of the feed',
    );
    expect(block.hash).toBe(`0x${'0'.repeat(64)}`);
    const count = await call(url, 'eth_getBlockTransactionCountByNumber', ['pending']);
    expect(count).toBe(`0x${txCount.toString(16)}`);
    expect(await call(url, 'eth_chainId', [])).toBe('0x14a34');
    await run.stop('SIGKILL');

    const serve = spawnFlashlog([
      'serve',
      '--source',
      'flashblocks',
      '--rpc',
      stub.url,
      '--data-dir',
      dir.path,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--head-poll-ms',
      '200',
    ]);
    processes.push(serve);
    const servedUrl = await gatewayUrl(serve);
    expect(await call(servedUrl, 'eth_getBlockByNumber', ['pending', false])).toEqual(block);
    expect(await call(servedUrl, 'eth_getBlockTransactionCountByNumber', ['pending'])).toBe(count);
    expect(await serve.stop('SIGTERM')).toBe(0);
  }, 90_000);

  it('serve without --rpc exits 2 with a message naming the setting', async () => {
    const serve = spawnFlashlog(['serve', '--data-dir', dir.path, '--port', '0', '--metrics-port', '0']);
    processes.push(serve);
    expect(await serve.exited).toBe(2);
  });
});

describe('flashlog run --devnet', () => {
  it('prints the gateway URL and a stats line, and serves a transaction sent to the devnet before its block seals', async () => {
    const devnetDir = tempDir();
    const run = spawnFlashlog([
      'run',
      '--devnet',
      '--data-dir',
      devnetDir.path,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--head-poll-ms',
      '200',
    ]);
    processes.push(run);
    try {
      const url = await gatewayUrl(run);
      const devnetLine = await run.waitFor((line) => typeof line.text === 'string' && line.text.startsWith('  devnet: RPC '), 30_000);
      const devnetRpc = /RPC (http:\/\/\S+),/.exec(devnetLine.text as string)![1]!;
      await run.waitFor(
        (line) => typeof line.text === 'string' && /^pending block \d+ fb \d+|^no pending block yet/.test(line.text),
        30_000,
      );
      // The executor is warm once a pending block comes with receipts (its L1-attributes deposit).
      await eventually(
        async () => {
          const receipts = await call(url, 'eth_getBlockReceipts', ['pending']);
          return Array.isArray(receipts) && receipts.length > 0 && receipts[0].blockHash === `0x${'0'.repeat(64)}` ? true : undefined;
        },
        30_000,
        'pending receipts',
      );
      // The default --load 10 sends traffic: pending blocks carry user transactions beyond the
      // L1-attributes deposit before this test sends any.
      await eventually(
        async () => {
          const block = await call(url, 'eth_getBlockByNumber', ['pending', false]);
          return Array.isArray(block?.transactions) && block.transactions.length > 1 ? true : undefined;
        },
        20_000,
        'load-generator transactions in a pending block',
      );
      const { createWalletClient, http } = await import('viem');
      const { mnemonicToAccount } = await import('viem/accounts');
      // account 9: the load (--load 10 by default) never sends from it, so the nonces never race
      const account = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 9 });
      const wallet = createWalletClient({ account, transport: http(devnetRpc) });
      const hash = await wallet.sendTransaction({
        chain: null,
        to: '0x000000000000000000000000000000000000dEaD',
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 10_000_000_000n,
        maxPriorityFeePerGas: 1n,
      });
      const receipt = await eventually(
        async () => {
          const found = await call(url, 'eth_getTransactionReceipt', [hash]);
          return found?.blockHash === `0x${'0'.repeat(64)}` ? found : undefined;
        },
        3000,
        'the pre-confirmed receipt',
      );
      expect(receipt).toMatchObject({ transactionHash: hash, status: '0x1' });
      const pending = await call(url, 'eth_getBlockByNumber', ['pending', false]);
      expect(pending.transactions).toContain(hash);
      expect(await run.stop('SIGTERM')).toBe(0);
    } finally {
      devnetDir.remove();
    }
  }, 60_000);
});
