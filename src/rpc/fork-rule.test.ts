import { describe, expect, it } from 'vitest';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { PendingBlock } from '../view/state.ts';
import { createIsthmusRule } from './fork-rule.ts';

/** OP Mainnet's Isthmus activation (superchain registry), the time the rule must switch at. */
const opMainnetIsthmus = 1746806401n;

const block = (timestamp: bigint, parentHash = `0x${'11'.repeat(32)}`): PendingBlock =>
  ({ number: 1n, header: { timestamp: `0x${timestamp.toString(16)}`, parentHash } }) as unknown as PendingBlock;

function fakeUpstream(answers: Record<string, (params: readonly unknown[]) => unknown>): Upstream & { calls: string[] } {
  const calls: string[] = [];
  return {
    url: 'http://127.0.0.1:0',
    calls,
    async call(method, params) {
      calls.push(method);
      const answer = answers[method];
      if (!answer) throw new Error(`unexpected ${method}`);
      return answer(params);
    },
  };
}

describe('the Isthmus rule of a pending block without a builder hash', () => {
  it('a chain known by id (OP Mainnet): its fork schedule, the chain id asked once', async () => {
    const upstream = fakeUpstream({ eth_chainId: () => '0xa' });
    const rule = createIsthmusRule(upstream);
    expect(await rule(block(opMainnetIsthmus - 1n))).toBe(false);
    expect(await rule(block(opMainnetIsthmus))).toBe(true);
    expect(upstream.calls).toEqual(['eth_chainId']);
  });

  it("a chain not known: the sealed parent's header (requestsHash present or not), kept per parent", async () => {
    const withRequests = `0x${'aa'.repeat(32)}`;
    const upstream = fakeUpstream({
      eth_chainId: () => '0x1234',
      eth_getBlockByHash: ([hash]) => (hash === withRequests ? { number: '0x1', requestsHash: `0x${'00'.repeat(32)}` } : { number: '0x1' }),
    });
    const rule = createIsthmusRule(upstream);
    expect(await rule(block(10n, withRequests))).toBe(true);
    expect(await rule(block(10n, withRequests))).toBe(true);
    expect(await rule(block(10n, `0x${'bb'.repeat(32)}`))).toBe(false);
    expect(upstream.calls.filter((method) => method === 'eth_getBlockByHash')).toHaveLength(2);
  });

  it('an upstream that fails: undefined (the caller keeps its own rule), and asked again next time', async () => {
    let up = false;
    const upstream = fakeUpstream({
      eth_chainId: () => {
        if (!up) throw new Error('connection refused');
        return '0xa';
      },
      eth_getBlockByHash: () => {
        throw new Error('connection refused');
      },
    });
    const rule = createIsthmusRule(upstream);
    expect(await rule(block(opMainnetIsthmus))).toBeUndefined();
    up = true;
    expect(await rule(block(opMainnetIsthmus))).toBe(true);
  });
});
