import pino from 'pino';
import { Subject, toArray, firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { initialViewState, type ViewState } from '../view/state.ts';
import { canonicalBlocks$ } from './canonical-blocks.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';

const at = (canonical: bigint): ViewState => ({ ...initialViewState(), canonical });

function recordingUpstream(fail: ReadonlySet<string> = new Set()) {
  const calls: string[] = [];
  const upstream: Upstream = {
    url: 'stub',
    async call(method, params) {
      const tag = method === 'eth_getLogs' ? (params[0] as { fromBlock: string }).fromBlock : (params[0] as string);
      calls.push(`${method} ${tag}`);
      if (fail.has(tag)) throw new Error('upstream down');
      if (method === 'eth_getBlockByNumber') return { number: tag, hash: `0x${'ab'.repeat(32)}`, transactions: [] };
      return [{ blockNumber: tag, logIndex: '0x0' }];
    },
  };
  return { upstream, calls };
}

describe('canonicalBlocks$ (newHeads and logs)', () => {
  it('reads each block the head passes once, from the first head on; a head going back emits nothing', async () => {
    const states$ = new Subject<ViewState>();
    const { upstream, calls } = recordingUpstream();
    const emitted = firstValueFrom(
      canonicalBlocks$({ states$, upstream, logger: pino({ level: 'silent' }), wanted: () => ({ heads: true, logs: true }) }).pipe(
        toArray(),
      ),
    );
    for (const canonical of [10n, 10n, 12n, 11n, 13n]) states$.next(at(canonical));
    states$.complete();
    const blocks = await emitted;
    // 11 and 12 after 10; 11 again is a step back (not news, and 12 is not announced twice); 13 is new.
    expect(blocks.map((block) => block.header.number)).toEqual(['0xb', '0xc', '0xd']);
    expect(blocks[0]!.header.transactions).toBeUndefined();
    expect(blocks[0]!.logs).toEqual([{ blockNumber: '0xb', logIndex: '0x0' }]);
    expect(calls.filter((call) => call.startsWith('eth_getBlockByNumber'))).toEqual([
      'eth_getBlockByNumber 0xb',
      'eth_getBlockByNumber 0xc',
      'eth_getBlockByNumber 0xd',
    ]);
  });

  it('asks nothing when no one subscribes, no logs when only heads are wanted, and skips an unreadable block', async () => {
    const states$ = new Subject<ViewState>();
    const { upstream, calls } = recordingUpstream(new Set(['0x3']));
    let wanted = { heads: false, logs: false };
    const emitted = firstValueFrom(
      canonicalBlocks$({ states$, upstream, logger: pino({ level: 'silent' }), wanted: () => wanted }).pipe(toArray()),
    );
    states$.next(at(1n));
    states$.next(at(2n));
    wanted = { heads: true, logs: false };
    states$.next(at(4n));
    states$.complete();
    const blocks = await emitted;
    expect(blocks.map((block) => block.header.number)).toEqual(['0x4']);
    expect(calls).toEqual(['eth_getBlockByNumber 0x3', 'eth_getBlockByNumber 0x4']);
  });
});
