import { createPublicClient, http, toHex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * `flashlog devnet --reorg-every K` alone (no --load): the blocks it replaces hold transactions to
 * withdraw. With --load at its default of 0 the devnet sent none, and every reorg replaced a block
 * of deposits only.
 */
const processes: FlashlogProcess[] = [];
afterAll(async () => {
  for (const process of processes) await process.stop('SIGKILL');
});

describe('devnet --reorg-every without --load', () => {
  it('sends transactions, so a replaced head has one to withdraw', async () => {
    const devnet = spawnFlashlog([
      'devnet',
      '--denim',
      '--reorg-every',
      '3',
      '--devnet-port',
      '0',
      '--devnet-ws-port',
      '0',
      '--no-metrics',
    ]);
    processes.push(devnet);
    const started = await devnet.waitFor((line) => line.msg === 'devnet started', 90_000);
    expect(Number(started.load)).toBeGreaterThan(0);
    const client = createPublicClient({ transport: http(String(started.rpc)) });
    // A user transaction (not a deposit) in one of the blocks sealed so far.
    const userTransactions = await eventually(
      async () => {
        const head = await client.getBlockNumber();
        let count = 0;
        for (let number = 1n; number <= head; number++) {
          const block = (await client.request({ method: 'eth_getBlockByNumber', params: [toHex(number), true] })) as {
            transactions: { type: string }[];
          } | null;
          count += (block?.transactions ?? []).filter((tx) => tx.type !== '0x7e').length;
        }
        return count > 0 ? count : undefined;
      },
      60_000,
      'a user transaction in a devnet block',
    );
    expect(userTransactions).toBeGreaterThan(0);
  }, 180_000);
});
