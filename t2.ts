import { startFixtureChain } from './test/helpers/fixture-chain.ts';
import { createExecutionMethods } from './src/rpc/execution.ts';
import { createUpstream } from './src/rpc/upstream.ts';
import { initialViewState } from './src/view/state.ts';
import pino from 'pino';
import { Registry } from 'prom-client';
const chain = await startFixtureChain();
const upstream = createUpstream(chain.url, { timeoutMs: 30000 });
const ex = createExecutionMethods({ upstream, logger: pino({ level: 'silent' }), metrics: new Registry(), gasCap: 50_000_000n, timeoutMs: 5000, simulateGenesis: '/work/shared/fixtures/execution-apis/tests/genesis.json' });
const loop = '0x5b600056';
for (const trace of [false, true]) {
  const t = performance.now();
  const res = await ex.methods.eth_simulateV1!([{ blockStateCalls: [{ stateOverrides: { '0xc100000000000000000000000000000000000000': { code: loop } }, calls: [{ to: '0xc100000000000000000000000000000000000000' }] }], traceTransfers: trace }, 'latest'], { view: initialViewState, upstream } as never) as any[];
  console.log('trace', trace, 'ms', Math.round(performance.now() - t), res[0].calls[0].gasUsed, res[0].calls[0].error);
}
await chain.close();
