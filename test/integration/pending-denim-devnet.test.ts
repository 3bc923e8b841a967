import { createPublicClient, createWalletClient, defineChain, http, parseEther, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevnetBaseTime } from '../../devnet/contracts/bytecode.ts';
import { startBlocksGateway, type BlocksGateway } from '../helpers/blocks-gateway.ts';

/**
 * `pending` on a real Denim devnet (200 ms blocks, the blocks source), as a user meets it with viem
 * set up as the README says: after a transfer, the pending balance is not behind the node's
 * latest; back-to-back sends with pending nonces all go through; BaseTime's `timestampMs()` at
 * pending is never behind latest.
 */
const BASE_TIME = '0x4200000000000000000000000000000000000030' as const;

let net: BlocksGateway;
beforeAll(async () => {
  net = await startBlocksGateway({});
}, 60_000);
afterAll(async () => net?.close());

function clients(privateKey: Hex) {
  const chain = defineChain({
    id: net.devnet.chainId,
    name: 'flashlog denim devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [net.serve.gateway.url] } },
    experimental_preconfirmationTime: 200,
  });
  const transport = http(net.serve.gateway.url);
  return {
    client: createPublicClient({ chain, transport, pollingInterval: 100 }),
    wallet: createWalletClient({ chain, transport, account: privateKeyToAccount(privateKey) }),
    node: createPublicClient({ transport: http(net.devnet.rpcUrl) }),
  };
}

describe('pending on a Denim devnet, with viem', () => {
  const fresh = generatePrivateKey();
  const freshAddress = privateKeyToAccount(fresh).address;

  it("a funded address: the pending balance is the node's latest or newer, at once", async () => {
    // Account 9 is left to the user by the README.
    const { client, wallet, node } = clients(net.devnet.accounts[9]!.privateKey);
    expect(client.experimental_blockTag).toBe('pending');
    const receipt = await wallet.sendTransactionSync({ to: freshAddress, value: parseEther('1') });
    expect(receipt.status).toBe('success');
    for (let i = 0; i < 10; i++) {
      const latest = await node.getBalance({ address: freshAddress, blockTag: 'latest' });
      const pending = await client.getBalance({ address: freshAddress, blockTag: 'pending' });
      expect(pending, `sample ${i}`).toBeGreaterThanOrEqual(latest);
      expect(pending).toBe(parseEther('1'));
    }
  });

  it('back-to-back sends with pending nonces all go through (sendTransaction + receipt, and sendTransactionSync)', async () => {
    const { client, wallet, node } = clients(fresh);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const statuses: string[] = [];
    for (let i = 0; i < 10; i++) {
      const hash = await wallet.sendTransaction({ to, value: 1n });
      statuses.push((await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status);
    }
    for (let i = 0; i < 10; i++) statuses.push((await wallet.sendTransactionSync({ to, value: 1n })).status);
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 'success'));
    expect(await node.getTransactionCount({ address: freshAddress, blockTag: 'latest' })).toBe(20);
    expect(await client.getTransactionCount({ address: freshAddress, blockTag: 'pending' })).toBe(20);
  });

  it("BaseTime's timestampMs() at pending is never behind latest", async () => {
    const { client, node } = clients(net.devnet.accounts[9]!.privateKey);
    const read = { address: BASE_TIME, abi: DevnetBaseTime.abi, functionName: 'timestampMs' } as const;
    let ahead = 0;
    for (let i = 0; i < 30; i++) {
      const latest = await node.readContract({ ...read, blockTag: 'latest' });
      const pending = await client.readContract({ ...read, blockTag: 'pending' });
      expect(pending, `sample ${i}`).toBeGreaterThanOrEqual(latest);
      if (pending > latest) ahead++;
      await new Promise((resolve) => setTimeout(resolve, 37));
    }
    expect(ahead, 'samples where a newer block came between the two reads').toBeLessThan(30);
  });
});
