import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { DevnetToken } from '../../devnet/contracts/bytecode.ts';
import { gethBinary, startGethDev, type GethDev } from '../../bench/peers/geth-dev.ts';
import { eventually } from '../helpers/context.ts';
import { goPrograms } from '../helpers/strict-clients.ts';

/**
 * The geth peer of `npm run bench -- gateway` (bench/peers/geth-dev.ts) on the real geth v1.17.10
 * that test/go/build.sh builds: it finds the binary or says in one line why not, and its chain is
 * what the bench's figures describe (blocks of about 93 logs from the load, an ERC-20 whose
 * `balanceOf` the bench calls).
 */
let geth: GethDev;
/** The head once the peer started: its contracts are deployed by then, later blocks hold the load alone. */
let startHead: bigint;
const rpc = async <T>(method: string, params: unknown[]): Promise<T> => {
  const response = await fetch(geth.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
};

beforeAll(async () => {
  geth = await startGethDev(goPrograms().geth, { periodS: 1, logsPerBlock: 93 });
  startHead = BigInt(await rpc<Hex>('eth_blockNumber', []));
}, 60_000);
afterAll(async () => geth?.close());

describe('the bench geth peer', () => {
  it('takes the binary from FLASHLOG_BENCH_GETH, else the built one, and names what is missing in one line', () => {
    expect(gethBinary({ FLASHLOG_BENCH_GETH: goPrograms().geth })).toEqual({ path: goPrograms().geth });
    const missing = gethBinary({ FLASHLOG_BENCH_GETH: '/nonexistent/geth' });
    expect(missing).toEqual({ skip: 'geth peer skipped: FLASHLOG_BENCH_GETH=/nonexistent/geth does not exist' });
    expect('path' in gethBinary({})).toBe(true); // test/go/build.sh's geth, built for this test
  });

  it("makes blocks of about 93 logs from the load, the workload contract's", async () => {
    const range = (n: bigint) => ({ fromBlock: `0x${n.toString(16)}`, toBlock: `0x${n.toString(16)}` });
    // Five blocks in a row after the contracts' deployment, each with the load's logs.
    const blocks = await eventually(
      async () => {
        const head = BigInt(await rpc<Hex>('eth_blockNumber', []));
        if (head - 5n <= startHead) return undefined;
        const logs = await Promise.all([1n, 2n, 3n, 4n, 5n].map((back) => rpc<{ address: Hex }[]>('eth_getLogs', [range(head - back)])));
        return logs.every((block) => block.length > 0) ? logs : undefined;
      },
      30_000,
      'five blocks with logs in a row',
    );
    for (const logs of blocks) {
      // 31 logs a transaction (emitMany(30): 30 Ping and one Note), all from the workload contract.
      expect(logs.length % 31).toBe(0);
      expect(new Set(logs.map((log) => log.address.toLowerCase()))).toEqual(new Set([geth.workload.toLowerCase()]));
    }
    // Three transactions a second, sent apart: about 93 logs a block on average.
    const mean = blocks.reduce((sum, logs) => sum + logs.length, 0) / blocks.length;
    expect(mean).toBeGreaterThanOrEqual(62);
    expect(mean).toBeLessThanOrEqual(124);
    expect(geth.sent().failed).toBe(0);
  });

  it("answers eth_call of the token's balanceOf with the dev account's supply", async () => {
    const data = encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [geth.account] });
    const result = await rpc<Hex>('eth_call', [{ to: geth.token, data }, 'latest']);
    expect(decodeFunctionResult({ abi: DevnetToken.abi, functionName: 'balanceOf', data: result })).toBe(10n ** 27n);
  });
});
