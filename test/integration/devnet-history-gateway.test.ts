import { Registry } from 'prom-client';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/context.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';
import { rpc } from '../helpers/devnet-feed.ts';

/**
 * The whole path (devnet -> ingest with the local EDR executor -> log -> gateway) over a devnet
 * whose history is bounded to 4 blocks: the executor forks the devnet at the canonical parent and
 * reads its state lazily, through the devnet's current EVM and, below its last fork block, through
 * the fork source. Across rollovers, a transaction sent to the devnet still gets its pre-confirmed
 * receipt from the gateway, and the sealed one after.
 */
let net: DevnetGateway;
const metrics = new Registry();
const rollovers = async (): Promise<number> =>
  (await metrics.getSingleMetric('flashlog_devnet_rollovers_total')?.get())?.values[0]?.value ?? 0;

beforeAll(async () => {
  net = await startDevnetGateway({ blockTimeMs: 400, flashblockMs: 100, historyBlocks: 4, metrics });
}, 30_000);
afterAll(async () => {
  await net?.close();
});

describe('the gateway over a devnet with a bounded history', () => {
  it('serves pre-confirmed and sealed receipts across rollovers', async () => {
    const account = privateKeyToAccount(net.devnet.accounts[3]!.privateKey);
    const gateway = net.serve.gateway.url;
    for (const wanted of [2, 4]) {
      await eventually(async () => ((await rollovers()) >= wanted ? true : undefined), 30_000, `${wanted} rollovers`);
      await net.afterSeal();
      const nonce = Number(await rpc<Hex>(net.devnet.rpcUrl, 'eth_getTransactionCount', [account.address, 'pending']));
      const raw = await account.signTransaction({
        chainId: net.devnet.chainId,
        type: 'eip1559',
        to: net.devnet.accounts[4]!.address,
        value: 1_000n + BigInt(wanted),
        gas: 21_000n,
        nonce,
        maxFeePerGas: 10_000_000_000n,
        maxPriorityFeePerGas: 1n,
      });
      const hash = await rpc<Hex>(net.devnet.rpcUrl, 'eth_sendRawTransaction', [raw]);
      const preconfirmed = await eventually(
        async () => (await rpc<{ status: Hex; blockNumber: Hex } | null>(gateway, 'eth_getTransactionReceipt', [hash])) ?? undefined,
        5_000,
        `the pre-confirmed receipt after ${wanted} rollovers`,
      );
      expect(preconfirmed.status).toBe('0x1');
      const sealed = await eventually(
        async () =>
          (await rpc<{ blockHash: Hex; blockNumber: Hex } | null>(net.devnet.rpcUrl, 'eth_getTransactionReceipt', [hash])) ?? undefined,
        5_000,
        'the sealed receipt on the devnet',
      );
      expect(BigInt(preconfirmed.blockNumber)).toBe(BigInt(sealed.blockNumber));
      await eventually(
        async () => {
          const receipt = await rpc<{ blockHash: Hex } | null>(gateway, 'eth_getTransactionReceipt', [hash]);
          return receipt?.blockHash === sealed.blockHash ? true : undefined;
        },
        5_000,
        'the gateway serving the sealed receipt',
      );
    }
  }, 60_000);
});
