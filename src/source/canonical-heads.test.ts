import { ReplaySubject, Subject, firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AssembledBlock } from '../chain/assemble.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { createCanonicalHeads } from './canonical-heads.ts';
import type { SourceExecution } from './port.ts';

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

const done = async () => ({ receipts: [], stateDiff: null });

/**
 * Canonical heads polled every 5 ms; `execute` tells them of an execution as the ingest does (on
 * their `executions$` input, replayed to the test's first subscription, which starts the polls).
 */
function heads(rpc: Upstream, metrics = createMetricsRegistry({ defaults: false })) {
  const stop$ = new Subject<void>();
  const executions$ = new ReplaySubject<SourceExecution>();
  const canonical = createCanonicalHeads({
    rpc,
    pollMs: 5,
    prefixGraceMs: 0,
    executions$,
    stop$,
    logger: createLogger({ level: 'silent' }),
    metrics,
  });
  const execute = (block: AssembledBlock, output: SourceExecution['output']) => executions$.next({ block, output });
  return { canonical, execute, stop: () => stop$.next(), metrics };
}

/** The `replaced` event of canonical block `n` (scripted hash 1000 + n) that withdrew a pre-confirmation. */
const replaced = (n: number, transactions: string[], removedTransactions: string[], index: number, removedLogs: unknown[]) => ({
  type: 'replaced',
  blockNumber: BigInt(n),
  replacedHash: null,
  byHash: hash(1000 + n),
  transactions,
  removedTransactions,
  index,
  removedLogs,
});

// Fake time: each poll (every 5 ms) and each outage run on the clock the test moves, not the wall's.
beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the canonical heads of a flashblocks chain', () => {
  it('seals a matching block, rides out an outage, then reads every block it missed, in order', async () => {
    const { rpc, script } = scriptedUpstream();
    const { canonical, execute, stop, metrics } = heads(rpc);
    script.blocks.set(10, [hash(1)]);
    script.blocks.set(12, [hash(2)]);
    execute(preconfirmed(10, [hash(1)]), done());
    execute(preconfirmed(12, [hash(3)]), done());
    script.head = 10;
    const steps = firstValueFrom(canonical.steps$.pipe(take(4), toArray()));
    await vi.advanceTimersByTimeAsync(0); // block 10, the head at the first poll
    expect(canonical.state().canonical).toBe(10n);
    script.down = true;
    script.calls.length = 0;
    await vi.advanceTimersByTimeAsync(50);
    // Ten polls in 50 ms, each refused; nothing reconciled meanwhile.
    expect(script.calls).toEqual(Array(10).fill('eth_blockNumber'));
    expect(canonical.state().canonical).toBe(10n);
    script.down = false;
    script.head = 13;
    await vi.advanceTimersByTimeAsync(5);
    const seen = await steps;
    stop();

    expect(seen.map((step) => step.blockNumber)).toEqual([10n, 11n, 12n, 13n]);
    expect(seen.map((step) => step.events.map((event) => event.type))).toEqual([['lifecycle'], ['lifecycle'], ['replaced'], ['lifecycle']]);
    // Block 10 sealed its pre-confirmation; 11 and 13 were never pre-confirmed: canonical, nothing sealed.
    expect(seen[0]!.events[0]).toEqual({
      type: 'lifecycle',
      level: 'canonical',
      blockNumber: 10n,
      blockHash: hash(1010),
      sealedTransactions: [hash(1)],
    });
    expect(seen[1]!.events[0]).toEqual({ type: 'lifecycle', level: 'canonical', blockNumber: 11n, blockHash: hash(1011) });
    expect(seen[2]!.events[0]).toEqual(replaced(12, [hash(2)], [hash(3)], 0, []));
    const errors = (await metrics.getSingleMetric('flashlog_upstream_errors_total')!.get()).values[0]?.value;
    expect(errors).toBe(10);
    expect(canonical.state().canonical).toBe(13n);
  });

  it('waits for an execution in flight, and withdraws the logs it found that the canonical block does not hold', async () => {
    const { rpc, script } = scriptedUpstream();
    const { canonical, execute, stop } = heads(rpc);
    let finish!: () => void;
    const log = {
      transactionHash: hash(7),
      transactionIndex: '0x0',
      logIndex: '0x0',
      address: `0x${'aa'.repeat(20)}`,
      topics: [],
      data: '0x',
    };
    const output = new Promise<{ receipts: never[]; stateDiff: null }>((resolve) => {
      finish = () => resolve({ receipts: [{ logs: [log] }] as never[], stateDiff: null });
    });
    execute({ ...preconfirmed(20, [hash(7)]), index: 2 } as AssembledBlock, output);
    script.blocks.set(20, [hash(8)]);
    script.head = 20;
    const step = firstValueFrom(canonical.steps$);
    await vi.advanceTimersByTimeAsync(50);
    expect(canonical.state().canonical).toBeNull(); // still waiting for the execution
    // The poll that found block 20 (and its logs: the lists differ) waits for the execution rather than polling on.
    expect(script.calls).toEqual(['eth_blockNumber', 'eth_getBlockByNumber', 'eth_getLogs']);
    finish();
    const { events } = await step;
    stop();
    expect(events).toEqual([replaced(20, [hash(8)], [hash(7)], 2, [{ ...log, removed: true }])]);
  });
});
