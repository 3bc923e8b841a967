import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { runChecker } from '../../src/checker/checker.ts';
import { httpEndpoint } from '../../src/checker/endpoint.ts';
import { createTally } from '../../src/checker/tally.ts';
import { createMetricsRegistry } from '../../src/obs/metrics.ts';
import { spawnFlashlog } from '../helpers/flashlog-process.ts';
import { startPendingProxy, type PendingProxy } from '../helpers/pending-proxy.ts';

/**
 * The checker against stand-in gateways on a Denim devnet under load: one that answers `pending`
 * with the node's own newest block (honest by construction: 0 mismatches, reorgs counted as
 * replaced), and one that alters one field of the blocks of one height (the checker names that
 * field, exports it as a metric, and the command exits 1).
 */
let devnet: Devnet;
let reorgDevnet: Devnet;
const proxies: PendingProxy[] = [];
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  [devnet, reorgDevnet] = await Promise.all([
    createDevnet({ denim: true, load: 15 }),
    createDevnet({ denim: true, load: 15, reorgEvery: 3 }),
  ]);
}, 60_000);

afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
  await Promise.all([devnet?.close(), reorgDevnet?.close()]);
});

const check = (gatewayUrl: string, nodeUrl: string, maxBlocks: number, registry = createMetricsRegistry({ defaults: false })) =>
  runChecker({
    gateway: httpEndpoint(gatewayUrl, 5000),
    node: httpEndpoint(nodeUrl, 5000),
    logger,
    tally: createTally(registry),
    signal: new AbortController().signal,
    maxBlocks,
    graceMs: 1000,
    durationMs: 60_000,
  });

describe('check-gateway against stand-in gateways', () => {
  it("finds no mismatch in a gateway that answers the node's newest block, and counts the node's reorgs as replaced", async () => {
    const honest = await startPendingProxy(reorgDevnet.rpcUrl);
    proxies.push(honest);
    const summary = await check(honest.url, reorgDevnet.rpcUrl, 12);
    expect(summary.mismatchesByField).toEqual({});
    expect(summary.mismatches).toBe(0);
    expect(summary.blocks).toBeGreaterThanOrEqual(8);
    // Every third block is replaced after the proxy served it.
    expect(summary.replaced).toBeGreaterThanOrEqual(1);
    expect(summary.fieldsCompared).toBeGreaterThan(1000);
    // Every kind of answer was compared: a mismatch could have been seen in each.
    expect(Object.keys(summary.notCompared).filter((field) => !field.includes('(partial block)'))).toEqual([]);
  }, 90_000);

  it('names the one field a lying gateway altered, in the summary and the metrics', async () => {
    let liedAt: string | undefined;
    const lying = await startPendingProxy(devnet.rpcUrl, (method, params, result) => {
      if (method !== 'eth_getBlockByNumber' || params[1] !== true || !result) return result;
      const block = result as { number: string; gasLimit: string };
      // Every block from two past the first one served: a checker that falls behind under load
      // and skips a height still meets the lie.
      liedAt ??= `0x${(BigInt(block.number) + 2n).toString(16)}`;
      return BigInt(block.number) >= BigInt(liedAt) ? { ...block, gasLimit: `0x${(BigInt(block.gasLimit) + 1n).toString(16)}` } : block;
    });
    proxies.push(lying);
    const registry = createMetricsRegistry({ defaults: false });
    const summary = await check(lying.url, devnet.rpcUrl, 6, registry);
    expect(Object.keys(summary.mismatchesByField)).toEqual(['eth_getBlockByNumber[full].gasLimit']);
    expect(summary.mismatches).toBeGreaterThanOrEqual(1);
    expect(summary.examples[0]).toMatchObject({ field: 'eth_getBlockByNumber[full].gasLimit' });
    // The lie is named at a height that carried it, never before.
    expect(BigInt(summary.examples[0]!.block.split(' ')[0]!)).toBeGreaterThanOrEqual(BigInt(liedAt!));
    expect(await registry.metrics()).toMatch(/flashlog_checker_mismatches_total\{field="eth_getBlockByNumber\[full\]\.gasLimit"\} [1-9]/);
  }, 90_000);

  it('flashlog check-gateway exits 1 on a lying gateway and 0 on an honest one', async () => {
    const lying = await startPendingProxy(devnet.rpcUrl, (method, _params, result) =>
      method === 'eth_getBlockReceipts' && Array.isArray(result)
        ? result.map((receipt: Record<string, unknown>, i) =>
            i === 0 ? { ...receipt, status: receipt.status === '0x1' ? '0x0' : '0x1' } : receipt,
          )
        : result,
    );
    const honest = await startPendingProxy(devnet.rpcUrl);
    proxies.push(lying, honest);
    const args = (gateway: string) => [
      'check-gateway',
      '--gateway',
      gateway,
      '--node',
      devnet.rpcUrl,
      '--blocks',
      '3',
      '--no-metrics',
      '--json',
    ];
    const liar = spawnFlashlog(args(lying.url), { FLASHLOG_LOG_LEVEL: 'silent' });
    const truthful = spawnFlashlog(args(honest.url), { FLASHLOG_LOG_LEVEL: 'silent' });
    const [liarCode, truthfulCode] = await Promise.all([liar.exited, truthful.exited]);
    const summaryOf = (lines: Record<string, unknown>[]) =>
      lines.find((line) => 'mismatchesByField' in line) as { mismatchesByField: Record<string, number>; blocks: number };
    expect(liarCode).toBe(1);
    expect(Object.keys(summaryOf(liar.lines).mismatchesByField)).toEqual(['eth_getBlockReceipts[].status']);
    expect(truthfulCode).toBe(0);
    expect(summaryOf(truthful.lines)).toMatchObject({ mismatchesByField: {}, blocks: expect.any(Number) });
    expect(summaryOf(truthful.lines).blocks).toBeGreaterThanOrEqual(3);
  }, 90_000);

  it('a check that compared nothing is no pass, and a missing --node is named', async () => {
    const unreachable = spawnFlashlog(
      ['check-gateway', '--gateway', 'http://127.0.0.1:9', '--node', devnet.rpcUrl, '--minutes', '0.05', '--no-metrics'],
      {
        FLASHLOG_LOG_LEVEL: 'silent',
      },
    );
    const noNode = spawnFlashlog(['check-gateway', '--gateway', devnet.rpcUrl, '--no-metrics'], { FLASHLOG_LOG_LEVEL: 'silent' });
    expect(await unreachable.exited).toBe(1);
    expect(unreachable.lines.some((line) => String(line.text).startsWith('blocks compared: 0'))).toBe(true);
    expect(await noNode.exited).toBe(2);
  }, 60_000);
});
