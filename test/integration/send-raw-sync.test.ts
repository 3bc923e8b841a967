import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { filter, firstValueFrom, race, startWith, timer } from 'rxjs';
import { createPublicClient, createWalletClient, http, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { findPendingTransaction } from '../../src/view/state.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';

/**
 * eth_sendRawTransactionSync (EIP-7966) through the gateway, on a devnet that pre-confirms a
 * transaction at once. The gateway's upstream is a proxy in front of the devnet that holds the
 * answer to eth_sendRawTransaction until the gateway's view holds the pre-confirmed transaction
 * (and 300 ms more; at most 1 s for one it never holds): the receipt reaches the view before the answer to the send
 * (base/base#3826). The gateway watches the view before sending, so it answers with the
 * pre-confirmed receipt (block hash 0x00…00) at once; a gateway that began watching for new view
 * states after the answer would see none until the devnet's next flashblock, 3 s later (the
 * gateway does not poll heads here, so nothing else changes the view).
 */
const zeroHash = `0x${'0'.repeat(64)}`;
let setup: DevnetGateway;
let proxy: Server;

/** Forwards every call to the devnet; holds a send's answer until the view holds the transaction. */
async function startHoldingProxy(devnetUrl: () => string): Promise<string> {
  proxy = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = await fetch(devnetUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await answer.text();
      const call = JSON.parse(body) as { method?: string; params?: unknown[] };
      if (call.method === 'eth_sendRawTransaction' && !text.includes('"error"')) {
        const hash = keccak256(call.params![0] as Hex);
        // (A transaction that cannot be included is answered after 1 s.)
        await firstValueFrom(
          race(
            setup.serve.view.states$.pipe(
              startWith(setup.serve.view.current()),
              filter((state) => findPendingTransaction(state, hash) !== undefined),
            ),
            timer(1000),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

const rpc = async (url: string, method: string, params: unknown[]) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: any; error?: { code: number; message: string; data?: unknown } };
};

beforeAll(async () => {
  let devnetUrl = '';
  const proxyUrl = await startHoldingProxy(() => devnetUrl);
  setup = await startDevnetGateway(
    { blockTimeMs: 6000, flashblockMs: 3000, preconfirmOnSubmit: { answerDelayMs: 0 } },
    { headPollMs: 0 },
    (devnet) => {
      devnetUrl = devnet.rpcUrl;
      return proxyUrl;
    },
  );
}, 60_000);

afterAll(async () => {
  await setup?.close();
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
}, 60_000);

describe('eth_sendRawTransactionSync', () => {
  it('answers with the pre-confirmed receipt that reached the view before the send was answered', async () => {
    const { devnet, serve } = setup;
    const account = privateKeyToAccount(devnet.accounts[2]!.privateKey);
    const node = createPublicClient({ transport: http(devnet.rpcUrl) });
    await setup.afterSeal();
    const nonce = await node.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const raw = await account.signTransaction({
      type: 'eip1559',
      chainId: devnet.chainId,
      nonce,
      to: '0x00000000000000000000000000000000000000aa',
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
    const hash = keccak256(raw);
    const events: string[] = [];
    const watching = serve.view.states$.subscribe((state) => {
      if (findPendingTransaction(state, hash) && !events.includes('in view')) events.push('in view');
    });
    // The devnet's next flashblock after the transaction's own (its block seals 3 s later).
    const offFlashblock = devnet.onFlashblock(() => {
      if (events.includes('in view') && !events.includes('next flashblock')) events.push('next flashblock');
    });
    const wallet = createWalletClient({ transport: http(serve.gateway.url) });
    const receipt = await wallet.sendRawTransactionSync({ serializedTransaction: raw, timeout: 6000 });
    events.push('answered');
    watching.unsubscribe();
    offFlashblock();
    // Answered from the flashblock that carried it, not from a later view state.
    expect(events).toEqual(['in view', 'answered']);
    expect(receipt.transactionHash).toBe(hash);
    expect(receipt.status).toBe('success');
    expect(receipt.gasUsed).toBe(21_000n);
    // Pre-confirmed, not the sealed block's receipt.
    expect(receipt.blockHash).toBe(zeroHash);
  });

  it('answers error 4 with the hash as data when no receipt comes within the timeout (hex or number)', async () => {
    const { devnet, serve } = setup;
    const account = privateKeyToAccount(devnet.accounts[3]!.privateKey);
    const node = createPublicClient({ transport: http(devnet.rpcUrl) });
    const nonce = await node.getTransactionCount({ address: account.address, blockTag: 'pending' });
    // Nonce gaps: the node takes them into its mempool, but cannot include them.
    for (const [timeout, offset] of [
      ['0x1f4', 5],
      [500, 6],
    ] as const) {
      const raw = await account.signTransaction({
        type: 'eip1559',
        chainId: devnet.chainId,
        nonce: nonce + offset,
        to: '0x00000000000000000000000000000000000000aa',
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 10_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
      });
      const answer = await rpc(serve.gateway.url, 'eth_sendRawTransactionSync', [raw, timeout]);
      expect(answer.error).toEqual({
        code: 4,
        message: "The transaction was added to the mempool but wasn't processed in 0.5s.",
        data: keccak256(raw),
      });
    }
  });

  it('passes a refused send through, and names a bad raw transaction', async () => {
    const { serve } = setup;
    const refused = await rpc(serve.gateway.url, 'eth_sendRawTransactionSync', ['0x02c0']);
    expect(refused.error?.code).not.toBe(4);
    expect(refused.error?.code).toBeLessThan(0);
    const bad = await rpc(serve.gateway.url, 'eth_sendRawTransactionSync', ['hello']);
    expect(bad.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('params[0]: expected a signed transaction as 0x-hex bytes'),
    });
    const missing = await rpc(serve.gateway.url, 'eth_sendRawTransactionSync', []);
    expect(missing.error).toMatchObject({ code: -32602, message: expect.stringContaining('params[0]') });
  });
});
