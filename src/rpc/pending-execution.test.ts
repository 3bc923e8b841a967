import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EMPTY } from 'rxjs';
import { JsonRpcError } from '../errors.ts';
import { apply, initialViewState, type ViewState } from '../view/state.ts';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';
import { createRpcStub, hang, type RpcStub } from '../../test/helpers/rpc-stub.ts';
import { createTransactionFormatter } from './format.ts';
import type { ExecutionLimits, Method, MethodContext, SimulationDeps } from './method.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import { bindExecution } from './execution.ts';
import { eth_call } from './methods/eth_call.ts';
import { eth_estimateGas } from './methods/eth_estimateGas.ts';
import { eth_simulateV1 } from './methods/eth_simulateV1.ts';
import { createSimulationPool } from '../simulate/pool.ts';

/**
 * The executing methods against a scripted upstream (a real HTTP server): where a pending call
 * runs (canonical base block, pending diff under the caller's overrides), the estimator's search,
 * eth_simulateV1's pending base and prestate, and the time limit. The devnet test proves them on a real EVM.
 */
const touched = '0x00000000000000000000000000000000000000c0';
const slot = `0x${'0'.repeat(63)}1`;
const limits = { gasCap: 1_000_000n, timeoutMs: 800 };

const ECRECOVER = '0x0000000000000000000000000000000000000001';

/** Block 101 pre-confirmed over canonical 100; `touched` changed, and with `paidPrecompile` 0x01's balance too. */
async function pendingView(paidPrecompile = false): Promise<ViewState> {
  const builder = blockBuilder(101n);
  const [tx] = await signedTransfers(1);
  const diff = { [touched]: { balance: '0x64', nonce: '0x1', code: '0x00', storage: { [slot]: `0x${'0'.repeat(63)}5` } } };
  const records = builder.flashblock([tx!], { stateDiff: paidPrecompile ? { ...diff, [ECRECOVER]: { balance: '0x5' } } : diff });
  let state = apply(initialViewState(), { type: 'head', blockNumber: 100n });
  records.forEach((record, offset) => {
    state = apply(state, {
      type: 'record',
      record: { ...record, key: record.key ?? null, partition: 0, offset: BigInt(offset), timestamp: 0 },
    });
  });
  return state;
}

let stub: RpcStub | undefined;
/** A node whose head is block 100, the canonical block under the pending block 101 (a pending read asks it first). */
const nodeStub = (handlers: Parameters<typeof createRpcStub>[0]) => createRpcStub({ eth_blockNumber: () => '0x64', ...handlers });
/** What went upstream besides the head checks. */
const sent = () => stub!.calls.filter((call) => call.method !== 'eth_blockNumber');
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

function context(url: string, state: ViewState): MethodContext {
  const upstream = createUpstream(url, { timeoutMs: 5000 });
  return {
    view: () => state,
    states$: EMPTY,
    upstream,
    formatter: createTransactionFormatter(),
    limits: { maxLogsRange: 2000 },
    forward: (params = []) => upstream.call('eth_call', params),
  };
}
const ethCall = (limits: ExecutionLimits) => bindExecution(eth_call, { limits });
const ethEstimateGas = (limits: ExecutionLimits) => bindExecution(eth_estimateGas, { limits });
const ethSimulateV1 = (limits: ExecutionLimits, simulation: SimulationDeps) => bindExecution(eth_simulateV1, { limits, simulation });
const invoke = (method: Method, params: unknown[], ctx: MethodContext) => Promise.resolve(method(params, ctx));

describe('eth_estimateGas with pending', () => {
  it.each([21_000n, 21_001n, 53_211n, 640_000n, 999_999n, 1_000_000n])(
    'finds exactly the least gas that succeeds (%s) at the canonical base with the pending diff',
    async (need) => {
      stub = await nodeStub({
        eth_call: ([call]) => {
          if (BigInt((call as { gas: string }).gas) < need) throw { code: -32000, message: 'out of gas' };
          return '0x';
        },
      });
      const state = await pendingView();
      const result = await invoke(ethEstimateGas(limits), [{ to: touched, data: '0x01' }, 'pending'], context(stub.url, state));
      expect(BigInt(result as string)).toBe(need);
      const [first] = sent();
      expect(first!.params[1]).toBe('0x64'); // block 100, under pending block 101
      expect(first!.params[2]).toMatchObject({
        [touched]: { balance: '0x64', nonce: '0x1', code: '0x00', stateDiff: { [slot]: `0x${'0'.repeat(63)}5` } },
      });
      expect(sent().length, 'upstream calls of one estimate').toBeLessThanOrEqual(40);
    },
  );

  it('a revert at the cap is the answer (code 3 and data); out of gas at the cap is "gas required exceeds allowance"', async () => {
    stub = await nodeStub({
      eth_call: () => {
        throw { code: 3, message: 'execution reverted', data: '0xdeadbeef' };
      },
    });
    const state = await pendingView();
    await expect(invoke(ethEstimateGas(limits), [{ to: touched }, 'pending'], context(stub.url, state))).rejects.toMatchObject({
      rpcCode: 3,
      data: '0xdeadbeef',
    });
    stub.handlers = {
      eth_call: () => {
        throw { code: -32000, message: 'out of gas' };
      },
    };
    await expect(invoke(ethEstimateGas(limits), [{ to: touched }, 'pending'], context(stub.url, state))).rejects.toThrow(
      'gas required exceeds allowance (1000000)',
    );
  });

  it('caller overrides lie over the pending diff; a gas above the cap is lowered to it; no pending block means latest', async () => {
    stub = await nodeStub({ eth_call: () => '0x', eth_estimateGas: () => '0x5208' });
    const state = await pendingView();
    const ctx = context(stub.url, state);
    await invoke(
      ethCall(limits),
      [{ to: touched, gas: '0xffffffff' }, 'pending', { [touched]: { balance: '0x1', stateDiff: { [slot]: `0x${'0'.repeat(63)}9` } } }],
      ctx,
    );
    expect(sent()[0]!.params).toEqual([
      { to: touched, gas: '0xf4240' },
      '0x64',
      expect.objectContaining({ [touched]: { balance: '0x1', nonce: '0x1', code: '0x00', stateDiff: { [slot]: `0x${'0'.repeat(63)}9` } } }),
    ]);
    await invoke(ethEstimateGas(limits), [{ to: touched }, 'pending'], context(stub.url, initialViewState()));
    expect(sent()[1]).toEqual({ method: 'eth_estimateGas', params: [{ to: touched }, 'latest'] });
    await invoke(ethCall(limits), [{ to: touched }, '0x10'], ctx);
    expect(sent()[2]).toEqual({ method: 'eth_call', params: [{ to: touched }, '0x10'] });
  });
});

describe('eth_call with pending: what goes upstream', () => {
  it('leaves a precompile the pending diff touched out of the overrides (geth would remove the precompile), unless the caller names it', async () => {
    stub = await nodeStub({ eth_call: () => '0x' });
    const ctx = context(stub.url, await pendingView(true));
    await invoke(ethCall(limits), [{ to: ECRECOVER }, 'pending'], ctx);
    const overrides = sent()[0]!.params[2] as Record<string, unknown>;
    expect(overrides).toHaveProperty(touched);
    expect(overrides).not.toHaveProperty(ECRECOVER);
    await invoke(ethCall(limits), [{ to: ECRECOVER }, 'pending', { [ECRECOVER]: { code: '0x00' } }], ctx);
    expect(sent()[1]!.params[2], "named by the caller: the pending balance under the caller's code").toHaveProperty(ECRECOVER, {
      balance: '0x5',
      code: '0x00',
    });
  });

  it('forwards an EIP-1898 block hash as given, and a { blockNumber } as its number', async () => {
    stub = await nodeStub({ eth_call: () => '0x' });
    const ctx = context(stub.url, await pendingView());
    const byHash = { blockHash: `0x${'cd'.repeat(32)}`, requireCanonical: true };
    await invoke(ethCall(limits), [{ to: touched }, byHash], ctx);
    expect(sent()[0]!.params[1]).toEqual(byHash);
    await invoke(ethCall(limits), [{ to: touched }, { blockNumber: '0x20' }], ctx);
    expect(sent()[1]!.params[1]).toBe('0x20');
    await invoke(ethCall(limits), [{ to: touched }, { blockNumber: 'safe' }], ctx);
    expect(sent()[2]!.params[1], 'a tag in object form goes as the tag').toBe('safe');
    await expect(invoke(ethCall(limits), [{ to: touched }, { blockHash: 'x' }], ctx)).rejects.toThrow('params[1].blockHash');
  });
});

/** Blocks source: blocks 101-103 held, each with its real hash (the header's `hash`), no state diff. */
async function blocksSourceView(): Promise<ViewState> {
  let state = initialViewState();
  let offset = 0n;
  for (const number of [101n, 102n, 103n]) {
    const [tx] = await signedTransfers(1, Number(number));
    for (const record of blockBuilder(number).flashblock([tx!])) {
      const value = JSON.parse(record.value) as { header: Record<string, unknown>; stateDiff: unknown };
      if (record.topic === 'flashlog.blocks') {
        value.header.hash = hashOf(number);
        value.stateDiff = null;
      }
      state = apply(state, {
        type: 'record',
        record: { ...record, value: JSON.stringify(value), key: record.key ?? null, partition: 0, offset: offset++, timestamp: 0 },
      });
    }
  }
  return state;
}
const hashOf = (number: bigint) => `0x${number.toString(16).padStart(64, '0')}`;

describe('pending on a blocks source: the node at the newest held block, by hash', () => {
  it('eth_call and eth_estimateGas run at {blockHash} of the newest block with only the caller overrides; a stub answering per block tells', async () => {
    // The node answers with the number of the block it is asked about: a call at any other block answers another value.
    const numberOf = (block: unknown) =>
      typeof block === 'object' && block !== null ? BigInt((block as { blockHash: string }).blockHash) : BigInt(block as string);
    stub = await createRpcStub({
      eth_blockNumber: () => '0x67',
      eth_call: ([call, block]) => {
        if ((call as { gas?: string }).gas !== undefined && BigInt((call as { gas: string }).gas) < 30_000n)
          throw { code: -32000, message: 'out of gas' };
        return `0x${numberOf(block).toString(16).padStart(64, '0')}`;
      },
    });
    const ctx = context(stub.url, await blocksSourceView());
    const answer = await invoke(ethCall(limits), [{ to: touched }, 'pending', { [touched]: { balance: '0x1' } }], ctx);
    expect(BigInt(answer as string)).toBe(103n);
    expect(sent()[0]!.params.slice(1)).toEqual([{ blockHash: hashOf(103n) }, { [touched]: { balance: '0x1' } }]);
    expect(BigInt((await invoke(ethEstimateGas(limits), [{ to: touched }, 'pending'], ctx)) as string)).toBe(30_000n);
    expect(sent().every((call) => JSON.stringify(call.params[1]) === JSON.stringify({ blockHash: hashOf(103n) }))).toBe(true);
  });
});

describe('eth_call time limit', () => {
  it('an upstream that never answers gives -32000 naming the limit, within it', async () => {
    stub = await nodeStub({ eth_call: () => hang });
    const error = await invoke(ethCall(limits), [{ to: touched }, 'pending'], context(stub.url, await pendingView())).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(JsonRpcError);
    expect((error as JsonRpcError).rpcCode).toBe(-32000);
    // Answered by the limit, not by the upstream's own 5 s timeout (its message would differ).
    expect((error as JsonRpcError).message).toContain('800 ms limit (--call-timeout-ms)');
  });
});

describe('eth_simulateV1 with pending', () => {
  const header = (number: string) => ({
    number,
    hash: `0x${'ab'.repeat(32)}`,
    timestamp: '0x64',
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    baseFeePerGas: '0x7',
  });
  const canonical = () =>
    nodeStub({
      eth_chainId: () => '0x2105',
      eth_getBlockByNumber: ([block]) => header(block === 'latest' ? '0x64' : String(block)),
      eth_getBlockByHash: () => header('0x100'),
      eth_getBalance: () => '0x0',
      eth_getTransactionCount: () => '0x0',
      eth_getCode: () => '0x',
      eth_getStorageAt: () => `0x${'0'.repeat(64)}`,
    });
  const simulation = (block: string) => [
    { blockStateCalls: [{ calls: [{ from: touched, to: '0x00000000000000000000000000000000000000c1', value: '0x64' }] }] },
    block,
  ];
  const pool = createSimulationPool({ workers: 1 });
  afterAll(() => pool.close());
  const deps = () => ({ rules: async () => ({ chainId: 8453n, hardfork: 'prague' }), pool });

  it('runs on the canonical base with the pre-confirmed diff laid over it (the pending balance pays)', async () => {
    stub = await canonical();
    const [block] = (await invoke(ethSimulateV1(limits, deps()), simulation('pending'), context(stub.url, await pendingView()))) as [
      { number: string; calls: { status: string }[] },
    ];
    expect(block.number).toBe('0x65');
    expect(block.calls[0]!.status).toBe('0x1');
    expect(sent().find((call) => call.method === 'eth_getBlockByNumber')!.params[0]).toBe('0x64');
    await expect(invoke(ethSimulateV1(limits, deps()), simulation('latest'), context(stub.url, await pendingView()))).rejects.toMatchObject(
      { rpcCode: -38014 },
    );
  });

  it('a call that runs past the time limit is answered -32016 on time while the event loop keeps turning; the next simulation runs', async () => {
    stub = await canonical();
    const ctx = context(stub.url, await pendingView());
    const loop = {
      blockStateCalls: [{ stateOverrides: { [touched]: { code: '0x5b600056' } }, calls: [{ to: touched, gas: '0x1c9c380' }] }],
    };
    // The event loop's longest stall while the simulation runs: a simulation on this thread would
    // stall it for the whole limit; a loaded machine only delays ticks for shorter spells.
    const ticks: number[] = [Date.now()];
    const ticker = setInterval(() => ticks.push(Date.now()), 50);
    const error = await invoke(ethSimulateV1({ gasCap: 50_000_000n, timeoutMs: 800 }, deps()), [loop, 'latest'], ctx).catch(
      (e: unknown) => e,
    );
    clearInterval(ticker);
    ticks.push(Date.now());
    expect(error).toBeInstanceOf(JsonRpcError);
    expect((error as JsonRpcError).rpcCode).toBe(-32016);
    expect((error as JsonRpcError).message).toContain('800 ms limit (--call-timeout-ms)');
    const longestStall = Math.max(...ticks.slice(1).map((at, i) => at - ticks[i]!));
    expect(longestStall, 'the event loop was not blocked for the limit').toBeLessThan(800);
    const [block] = (await invoke(ethSimulateV1(limits, deps()), simulation('pending'), ctx)) as [{ calls: { status: string }[] }];
    expect(block.calls[0]!.status).toBe('0x1');
  });

  it('runs on the block an EIP-1898 block hash names (eth_getBlockByHash), and says which hash is missing', async () => {
    stub = await canonical();
    const hash = `0x${'ab'.repeat(32)}`;
    const ctx = context(stub.url, await pendingView());
    const payload = { blockStateCalls: [{ calls: [{ from: touched, to: '0x00000000000000000000000000000000000000c1' }] }] };
    const [block] = (await invoke(ethSimulateV1(limits, deps()), [payload, { blockHash: hash }], ctx)) as [{ number: string }];
    expect(sent().find((call) => call.method === 'eth_getBlockByHash')!.params[0]).toBe(hash);
    expect(block.number).toBe('0x101');
    await expect(
      invoke(ethSimulateV1(limits, deps()), [payload, { blockHash: `0x${'ef'.repeat(32)}`, requireCanonical: true }], ctx),
    ).rejects.toThrow(`hash 0x${'ef'.repeat(32)} is not currently canonical`);
    await invoke(ethSimulateV1(limits, deps()), [payload, { blockHash: hash, requireCanonical: true }], ctx);
    await invoke(ethSimulateV1(limits, deps()), [payload, { blockNumber: 'latest' }], ctx);
    expect(
      sent()
        .filter((call) => call.method === 'eth_getBlockByNumber')
        .at(-1)!.params[0],
      '{ blockNumber: tag } asks for the tag',
    ).toBe('latest');
    stub.handlers = { ...stub.handlers, eth_getBlockByHash: () => null };
    await expect(invoke(ethSimulateV1(limits, deps()), [payload, { blockHash: hash }], ctx)).rejects.toThrow(`no block ${hash}`);
  });

  it('refuses more than 256 blocks (-38026) and a payload without blockStateCalls (-32602, naming it)', async () => {
    stub = await nodeStub({});
    const ctx = context(stub.url, await pendingView());
    await expect(
      invoke(ethSimulateV1(limits, deps()), [{ blockStateCalls: Array.from({ length: 257 }, () => ({ calls: [] })) }, 'pending'], ctx),
    ).rejects.toMatchObject({ rpcCode: -38026 });
    await expect(invoke(ethSimulateV1(limits, deps()), [{ calls: [] }, 'pending'], ctx)).rejects.toThrow('params[0].blockStateCalls');
    expect(stub.calls).toHaveLength(0);
  });
});
