import { afterAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, testContext } from '../helpers/context.ts';
import { startFlashlog, type FlashlogUnderTest } from '../helpers/execution-harness.ts';
import { assertSchemaValid } from '../helpers/openrpc-schema.ts';

/**
 * A reorg seen by a `pendingLogs` subscriber, all real: the devnet seals every 2nd block without
 * its last pre-confirmed transaction; ingest executes it (local EDR) and reconciles with the
 * devnet's canonical blocks; the gateway follows the same log. The subscriber first gets the
 * pre-confirmed log (removed: false), then, once the block seals without it, the same log with
 * removed: true.
 */
const topic = `0x${'c0ffee'.padEnd(64, '0')}` as Hex;
// Initcode that emits LOG1(topic) and deploys an empty contract: each deployment is one log.
const initcode = `0x7f${topic.slice(2)}60006000a160006000f3` as Hex;

interface Notified {
  transactionHash: string;
  blockNumber: string;
  logIndex: string;
  topics: string[];
  removed: boolean;
}

let devnet: Devnet | undefined;
let flashlog: FlashlogUnderTest | undefined;
let serve: Serve | undefined;
let socket: WebSocket | undefined;
afterAll(async () => {
  socket?.close();
  await serve?.close();
  await flashlog?.stop().catch(() => undefined);
  await devnet?.close();
}, 30_000);

describe('pendingLogs through a reorg on the devnet', () => {
  it('delivers a pre-confirmed log, then its removed: true copy when the block seals without it', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 200, reorgEvery: 2, rpcPort: 0, wsPort: 0 });
    const dropped = new Set<string>();
    devnet.onSealed((block) => {
      if (block.dropped) dropped.add(block.dropped.toLowerCase());
    });
    const ctx = testContext({ rpc: devnet.rpcUrl, executor: 'local', canonicalPollMs: 100, port: 0, headPollMs: 200 });
    flashlog = await startFlashlog(ctx, { wsUrl: devnet.wsUrl, rpcUrl: devnet.rpcUrl });
    serve = await createServe(ctx, { log: flashlog.log, rpcUrl: devnet.rpcUrl });

    const notified: Notified[] = [];
    socket = new WebSocket(serve.gateway.wsUrl);
    await new Promise((resolve, reject) => {
      socket!.once('open', resolve);
      socket!.once('error', reject);
    });
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { method?: string; params?: { result: Notified } };
      if (message.method === 'eth_subscription' && message.params) notified.push(message.params.result);
    });
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['pendingLogs', { topics: [topic] }] }));

    // One log-emitting deployment per block: with no other traffic it is the block's last
    // transaction, so every 2nd block leaves it out (and a later block includes it).
    const account = privateKeyToAccount(devnet.accounts[2]!.privateKey);
    const wallet = createWalletClient({ account, transport: http(devnet.rpcUrl) });
    const sent: string[] = [];
    let lastSealed = -1n;
    let sentAfter = -1n;
    devnet.onSealed((block) => {
      lastSealed = block.number;
    });
    const removed = await eventually(
      async () => {
        const copy = notified.find((log) => log.removed);
        if (copy) return copy;
        if (sent.length < 12 && lastSealed > sentAfter) {
          sentAfter = lastSealed;
          sent.push(
            (
              await wallet.sendTransaction({
                chain: null,
                data: initcode,
                gas: 100_000n,
                maxFeePerGas: 10_000_000_000n,
                maxPriorityFeePerGas: 1n,
              })
            ).toLowerCase(),
          );
        }
        return undefined;
      },
      40_000,
      'a removed: true pendingLogs notification',
    );

    expect(sent).toContain(removed.transactionHash.toLowerCase());
    expect(dropped.has(removed.transactionHash.toLowerCase())).toBe(true);
    expect(removed.topics).toEqual([topic]);
    // The same log came first as pre-confirmed, at the same block and index.
    const first = notified.find(
      (log) => !log.removed && log.transactionHash === removed.transactionHash && log.blockNumber === removed.blockNumber,
    );
    expect(first).toMatchObject({ logIndex: removed.logIndex, removed: false });
    expect(notified.indexOf(first!)).toBeLessThan(notified.indexOf(removed));
    for (const log of notified) assertSchemaValid('pendingLogs', log);
  }, 90_000);
});
