import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { AssembledBlock } from '../chain/assemble.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { createCanonicalHeads } from './canonical-heads.ts';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
const hex = (n: number) => `0x${n.toString(16)}`;

/** A scripted upstream: its head, its blocks by number, and whether it answers at all. */
function scriptedUpstream() {
  const script = { head: 0, down: false, blocks: new Map<number, `0x${string}`[]>(), calls: [] as string[] };
  const rpc: Upstream = {
    call: async (method: string, params: readonly unknown[]) => {
      script.calls.push(method);
      if (script.down) throw new Error('connect ECONNREFUSED');
      if (method === 'eth_blockNumber') return hex(script.head);
      if (method === 'eth_getBlockByNumber') {
        const n = Number(BigInt(params[0] as string));
        return { number: hex(n), hash: hash(1000 + n), transactions: script.blocks.get(n) ?? [] };
      }
      if (method === 'eth_getLogs') return [];
      throw new Error(`unexpected ${method}`);
    },
  } as Upstream;
  return { rpc, script };
}

/** The fields of an assembled block that reconciliation reads. */
const preconfirmed = (n: number, transactions: `0x${string}`[]) =>
  ({ blockNumber: BigInt(n), index: 0, firstNew: 0, transactions: transactions.map((h) => ({ hash: h })) }) as unknown as AssembledBlock;

describe('the canonical-heads source', () => {
  it('seals a matching block, rides out an outage, then reads every block it missed, in order', async () => {
    const { rpc, script } = scriptedUpstream();
    const metrics = createMetricsRegistry({ defaults: false });
    const controller = new AbortController();
    const heads = createCanonicalHeads({
      rpc,
      pollMs: 5,
      prefixGraceMs: 0,
      signal: controller.signal,
      logger: createLogger({ level: 'silent' }),
      metrics,
    });
    const steps = firstValueFrom(heads.canonical$.pipe(take(4), toArray()));
    script.blocks.set(10, [hash(1)]);
    script.blocks.set(12, [hash(2)]);
    await heads.execute(preconfirmed(10, [hash(1)]), async () => ({ receipts: [], stateDiff: null }));
    await heads.execute(preconfirmed(12, [hash(3)]), async () => ({ receipts: [], stateDiff: null }));
    script.head = 10;
    heads.start();
    await firstValueFrom(heads.canonical$); // block 10, the head at the first poll
    script.down = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
    script.down = false;
    script.head = 13;
    const seen = await steps;
    controller.abort();
    await heads.close();

    expect(seen.map((step) => step.blockNumber)).toEqual([10n, 11n, 12n, 13n]);
    expect(seen.map((step) => step.reconciled.map((event) => event.type))).toEqual([['sealed'], [], ['reorg'], []]);
    const errors = (await metrics.getSingleMetric('flashlog_upstream_errors_total')!.get()).values[0]?.value;
    expect(errors).toBeGreaterThan(0);
    expect(heads.state().canonical).toBe(13n);
  }, 10_000);
});
