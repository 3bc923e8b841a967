import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { createDevnet } from '../../devnet/edr/devnet.ts';
import { eventually } from '../helpers/context.ts';
import { rpc } from '../helpers/devnet-feed.ts';

/**
 * The README keeps the devnet's accounts 8 and 9 for the user: `--load` never signs with them, on
 * either devnet, so a user's transactions from them never race the load for a nonce.
 */
describe.each([
  { name: 'flashblocks devnet', denim: false },
  { name: 'Denim devnet (--denim)', denim: true },
])('$name under --load', ({ denim }) => {
  it('sends from accounts 0-7 and never from 8 or 9', async () => {
    const devnet = await createDevnet({ denim, load: 60, blockTimeMs: denim ? 200 : 400 });
    try {
      const senders = new Map<string, number>();
      let scanned = 0;
      await eventually(
        async () => {
          const head = Number(BigInt((await rpc(devnet.rpcUrl, 'eth_blockNumber', [])) as Hex));
          for (; scanned <= head; scanned++) {
            const block = (await rpc(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${scanned.toString(16)}`, true])) as {
              transactions: { from: Hex; type: Hex }[];
            };
            for (const tx of block.transactions) {
              if (tx.type === '0x7e') continue; // deposits: the system's and fresh depositors'
              senders.set(tx.from.toLowerCase(), (senders.get(tx.from.toLowerCase()) ?? 0) + 1);
            }
          }
          return [...senders.values()].reduce((a, b) => a + b, 0) >= 150 ? true : undefined;
        },
        60_000,
        '150 transactions of the load',
      );
      const index = (address: string) => devnet.accounts.findIndex((account) => account.address.toLowerCase() === address);
      const used = [...senders.keys()].map(index).sort((a, b) => a - b);
      expect(used.filter((i) => i === 8 || i === 9)).toEqual([]);
      // Not vacuous: the load signs with most of accounts 0-7.
      expect(used.filter((i) => i >= 0 && i < 8).length).toBeGreaterThanOrEqual(6);
      for (const account of devnet.accounts.slice(8))
        expect(await rpc(devnet.rpcUrl, 'eth_getTransactionCount', [account.address, 'pending'])).toBe('0x0');
    } finally {
      await devnet.close();
    }
  }, 90_000);
});
