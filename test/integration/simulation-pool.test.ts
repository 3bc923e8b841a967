import { afterEach, describe, expect, it } from 'vitest';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { JsonRpcError } from '../../src/errors.ts';
import { createSimulationPool, type SimulationJob } from '../../src/simulate/pool.ts';

/**
 * The worker-thread pool with real threads and a real (scripted) upstream: the time limit, the
 * deadline of a job still waiting for a thread, the queue cap and shutdown.
 */
let stub: RpcStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const looper = '0x00000000000000000000000000000000000000c0';

async function jobs() {
  stub = await createRpcStub({
    eth_getBalance: () => '0x0',
    eth_getTransactionCount: () => '0x0',
    eth_getCode: () => '0x',
    eth_getStorageAt: () => `0x${'0'.repeat(64)}`,
  });
  const job = (calls: unknown[], timeoutMs: number): SimulationJob => ({
    // JUMPDEST PUSH1 0 JUMP: a loop that runs until its gas is gone
    payload: { blockStateCalls: [{ stateOverrides: { [looper]: { code: '0x5b600056' } }, calls }] } as never,
    base: {
      number: 100n,
      hash: `0x${'ab'.repeat(32)}`,
      timestamp: 1_700_000_000n,
      gasLimit: 60_000_000n,
      gasUsed: 0n,
      baseFeePerGas: 0n,
      excessBlobGas: 0n,
      blobGasUsed: 0n,
      miner: `0x${'00'.repeat(20)}`,
      difficulty: 0n,
    },
    prestate: undefined,
    rules: { chainId: 8453n, hardfork: 'prague' },
    gasCap: 50_000_000n,
    upstreamUrl: stub!.url,
    deadline: Date.now() + timeoutMs,
    timeoutMs,
  });
  return {
    long: (timeoutMs: number) => job([{ to: looper, gas: '0x2faf080' }], timeoutMs),
    quick: (timeoutMs: number) => job([{ to: '0x00000000000000000000000000000000000000c1' }], timeoutMs),
  };
}

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (error: unknown) => (error as JsonRpcError).rpcCode,
  );

describe('simulation pool', () => {
  it('answers -32016 at the time limit and replaces the thread; a job whose deadline passes in the queue is answered -32016 then', async () => {
    const { long, quick } = await jobs();
    const pool = createSimulationPool({ workers: 1 });
    try {
      await pool.run(quick(30_000)); // the thread is started and warm
      const running = code(pool.run(long(1500)));
      const queuedAt = Date.now();
      const waiting = code(pool.run(quick(300)));
      expect(await waiting).toBe(-32016);
      expect(Date.now() - queuedAt, 'answered at its own deadline, not when the thread freed').toBeLessThan(1200);
      expect(await running).toBe(-32016);
      expect(await code(pool.run(quick(30_000))), 'the replaced thread runs the next job').toBe('answered');
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('refuses at once (-32005) when 64 jobs per thread already wait, and rejects the waiting ones on close', async () => {
    const { long, quick } = await jobs();
    const pool = createSimulationPool({ workers: 1 });
    const running = code(pool.run(long(20_000)));
    const waiting = Array.from({ length: 64 }, () => code(pool.run(quick(20_000))));
    expect(await code(pool.run(quick(20_000)))).toBe(-32005);
    await pool.close();
    const answers = await Promise.all(waiting);
    expect(
      answers.every((answer) => answer === -32000),
      `waiting jobs on close: ${[...new Set(answers)]}`,
    ).toBe(true);
    await running;
  }, 60_000);
});
