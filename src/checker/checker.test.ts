import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { keccak256, numberToHex, toHex, type Hex } from 'viem';
import { createMetricsRegistry, type Registry } from '../obs/metrics.ts';
import { CheckerChainMismatchError } from './chains.ts';
import { runChecker, type CheckerOptions } from './checker.ts';
import type { Answer } from './compare.ts';
import type { Endpoint } from './endpoint.ts';
import { createTally } from './tally.ts';

/**
 * runChecker against two table endpoints over a chain of empty blocks: what the checker does
 * before it compares answers (the chains), when (heights below the node's head at start), and what
 * it says when it compares nothing.
 */
const hashOf = (chain: string, number: bigint): Hex => keccak256(toHex(`${chain} block ${number}`));
const blockOf = (chain: string, number: bigint) => ({
  number: numberToHex(number),
  hash: hashOf(chain, number),
  parentHash: number === 0n ? `0x${'00'.repeat(32)}` : hashOf(chain, number - 1n),
  transactions: [],
});

interface Side {
  /** Which chain it serves: the genesis (and every block) is named by it. */
  chain: string;
  /** The node's head, or the gateway's pending height. */
  height: bigint;
  /** Throw on every call (unreachable). */
  down?: boolean;
}

/** A node or a gateway over `side.chain`: the gateway serves block `side.height` as pending, the node has `side.height` as head. */
function endpoint(url: string, side: Side): Endpoint {
  return {
    url,
    async call(method, params): Promise<Answer> {
      if (side.down) throw new Error(`${url} unreachable`);
      const tag = params[0];
      switch (method) {
        case 'eth_chainId':
          return { result: '0x539' };
        case 'eth_blockNumber':
          return { result: numberToHex(side.height) };
        case 'eth_getCode':
          return { result: '0x' };
        case 'eth_getBlockByNumber': {
          const number = tag === 'pending' || tag === 'latest' ? side.height - (tag === 'latest' ? 1n : 0n) : BigInt(tag as string);
          return { result: number <= side.height ? blockOf(side.chain, number) : null };
        }
        case 'eth_getBlockByHash': {
          for (let n = 0n; n <= side.height; n++) if (hashOf(side.chain, n) === tag) return { result: blockOf(side.chain, n) };
          return { result: null };
        }
        case 'eth_getBlockReceipts':
        case 'eth_getLogs':
          return { result: [] };
        default:
          throw new Error(`${url}: unexpected ${method}`);
      }
    },
  };
}

const logged: Record<string, unknown>[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });

const gaugeValue = async (registry: Registry, name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;

function check(gateway: Side, node: Side, options: Partial<CheckerOptions> = {}) {
  const registry = createMetricsRegistry({ defaults: false });
  const controller = new AbortController();
  const run = runChecker({
    gateway: endpoint('http://gateway', gateway),
    node: endpoint('http://node', node),
    logger,
    tally: createTally(registry),
    metrics: registry,
    signal: controller.signal,
    pollMs: 5,
    graceMs: 0,
    settleMs: 500,
    durationMs: 10_000,
    ...options,
  });
  return { run, registry, stop: () => controller.abort() };
}

describe('runChecker: the chains first', () => {
  it('stops with both chains named when the gateway serves another genesis than the node', async () => {
    const { run, registry } = check({ chain: 'devnet B', height: 30n }, { chain: 'devnet A', height: 20n });
    const error = await run.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CheckerChainMismatchError);
    const message = (error as Error).message;
    expect(message).toContain(`the gateway http://gateway serves chain id 1337, genesis ${hashOf('devnet B', 0n)}`);
    expect(message).toContain(`the node http://node is chain id 1337, genesis ${hashOf('devnet A', 0n)}`);
    expect(await gaugeValue(registry, 'flashlog_checker_chain_mismatch')).toBe(1);
  });

  it('as a canary, waits with the mismatch exported and compares once the chains agree again', async () => {
    const gateway: Side = { chain: 'devnet B', height: 19n };
    const { run, registry, stop } = check(
      gateway,
      { chain: 'devnet A', height: 20n },
      { onChainMismatch: 'wait', chainCheckMs: 20, durationMs: undefined },
    );
    await expect.poll(() => gaugeValue(registry, 'flashlog_checker_chain_mismatch')).toBe(1);
    expect(logged.some((line) => line.level === 50 && String(line.msg).includes(hashOf('devnet B', 0n)))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await gaugeValue(registry, 'flashlog_checker_fields_compared_total')).toBe(0);
    // The gateway is wired to the right node again.
    gateway.chain = 'devnet A';
    await expect.poll(() => gaugeValue(registry, 'flashlog_checker_chain_mismatch')).toBe(0);
    await expect.poll(() => gaugeValue(registry, 'flashlog_checker_fields_compared_total')).toBeGreaterThan(0);
    stop();
    expect((await run).mismatches).toBe(0);
  });

  it('compares the chains again after a poll failed (a reconnect)', async () => {
    const gateway: Side = { chain: 'devnet A', height: 20n };
    const { run } = check(gateway, { chain: 'devnet A', height: 21n }, { chainCheckMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The gateway goes away and comes back wired to another chain, well within chainCheckMs.
    gateway.down = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
    Object.assign(gateway, { down: false, chain: 'devnet B' });
    await expect(run).rejects.toBeInstanceOf(CheckerChainMismatchError);
  });
});

describe('runChecker: which heights are judged', () => {
  it('dates heights anew when both sides move to another chain together (a devnet restarted behind both)', async () => {
    const gateway: Side = { chain: 'devnet A', height: 29n };
    const node: Side = { chain: 'devnet A', height: 30n };
    const { run, stop } = check(gateway, node, { durationMs: undefined, chainCheckMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Both restart as a new chain: the gateway's pending (6) is past the new node's head (5), below the old one (30).
    node.down = gateway.down = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
    Object.assign(node, { chain: 'devnet B', height: 5n, down: false });
    Object.assign(gateway, { chain: 'devnet B', height: 6n, down: false });
    await expect.poll(() => logged.some((line) => String(line.msg).includes('both serve another chain than before'))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop();
    const summary = await run;
    expect(summary.skipped['a height could not be judged']).toBeUndefined();
    expect(summary.mismatches).toBe(0);
  });

  it('judges a pending height below the head the node had at start', async () => {
    // The gateway serves 12 as pending while the node's head is 20 and stays there.
    const { run } = check({ chain: 'devnet A', height: 12n }, { chain: 'devnet A', height: 20n }, { maxBlocks: 1, durationMs: 3000 });
    const summary = await run;
    expect(summary).toMatchObject({ blocks: 1, mismatches: 0 });
    expect(summary.skipped['not sealed by the node before the end']).toBeUndefined();
  });
});

describe('runChecker: a checker that judges nothing', () => {
  it('says so once and exports it, so an alert can fire', async () => {
    const before = logged.length;
    const { run, registry, stop } = check(
      { chain: 'devnet A', height: 20n, down: true },
      { chain: 'devnet A', height: 20n },
      {
        durationMs: undefined,
        idleAlertMs: 100,
      },
    );
    await expect.poll(() => gaugeValue(registry, 'flashlog_checker_idle')).toBe(1);
    const warnings = () => logged.slice(before).filter((line) => String(line.msg).includes('no pending height judged'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: 40, chains: 'unknown' });
    expect(await gaugeValue(registry, 'flashlog_checker_last_judged_timestamp_seconds')).toBeLessThanOrEqual(Date.now() / 1000 - 0.1);
    stop();
    expect((await run).blocks).toBe(0);
  });

  it('reports progress while it runs', async () => {
    const reports: unknown[] = [];
    const { run, stop } = check(
      { chain: 'devnet A', height: 20n },
      { chain: 'devnet A', height: 21n },
      {
        durationMs: undefined,
        progressMs: 20,
        onProgress: (progress) => reports.push(progress),
      },
    );
    await expect.poll(() => reports.length).toBeGreaterThan(1);
    stop();
    await run;
    expect(reports.at(-1)).toMatchObject({ chains: 'same', summary: { blocks: 1 } });
  });
});
