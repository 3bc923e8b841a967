import { createWalletClient, http, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { rpc, subscribe, until } from '../helpers/devnet-feed.ts';

/**
 * A transaction sent with the nonce of one already pre-confirmed, as a viem app meets it: the
 * error names the nonce, not viem's "Missing or invalid parameters" (the words viem gives any
 * -32000 it does not recognise).
 */
let devnet: Devnet | undefined;
afterEach(async () => {
  await devnet?.close();
  devnet = undefined;
});

describe('a pending-nonce collision on the devnet', () => {
  it('reaches viem as a nonce too low, with the pre-confirmed transaction named', async () => {
    devnet = await createDevnet({ blockTimeMs: 2000, flashblockMs: 100 });
    const feed = await subscribe(devnet.wsUrl);
    await until(() => feed.frames.some((frame) => frame.flashblock.index === 0));
    const account = privateKeyToAccount(devnet.accounts[8]!.privateKey);
    const chain = {
      id: 1337,
      name: 'devnet',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [devnet.rpcUrl] } },
    } as const;
    const wallet = createWalletClient({ account, chain, transport: http(devnet.rpcUrl) });
    const transfer = { to: devnet.accounts[0]!.address, gas: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, nonce: 0 };
    const first = await wallet.sendTransaction({ ...transfer, value: 1n });
    const preconfirmed = () => feed.frames.flatMap((frame) => frame.flashblock.diff.transactions);
    // Pre-confirmed: in a flashblock the feed sent.
    await until(() => preconfirmed().some((raw) => keccak256(raw as Hex) === first), 3000);
    const sent = wallet.sendTransaction({ ...transfer, value: 2n, maxPriorityFeePerGas: 10n ** 9n, maxFeePerGas: 2n * 10n ** 10n });
    const error = await sent.then(
      () => null,
      (caught: unknown) => caught as { shortMessage?: string; message: string; walk(fn?: (e: unknown) => boolean): unknown },
    );
    feed.close();
    expect(error, 'the second send is refused').not.toBeNull();
    expect(error!.shortMessage).not.toContain('Missing or invalid parameters');
    expect(error!.walk((cause) => (cause as { name?: string }).name === 'NonceTooLowError')).toBeTruthy();
    expect(error!.message).toContain(`${first} has the same sender and nonce and is already pre-confirmed`);
    expect(await rpc<Hex>(devnet.rpcUrl, 'eth_getTransactionCount', [account.address, 'pending'])).toBe('0x1');
  }, 60_000);
});
