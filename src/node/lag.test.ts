import { describe, expect, it } from 'vitest';
import { checkLag, judgeSafeLag } from './lag.ts';

describe('judgeSafeLag (unsafe_l2 − safe_l2 against a limit)', () => {
  it('passes a safe head a few seconds behind and reports blocks and seconds', () => {
    expect(judgeSafeLag({ number: 1_000, timestamp: 5_000 }, { number: 990, timestamp: 4_998 }, 30)).toEqual({
      healthy: true,
      blocks: 10,
      seconds: 2,
      limitMinutes: 30,
      line: 'safe head: ok, safe L2 head 990 is 2 s (10 blocks) behind the unsafe head (limit 30 minutes)',
    });
  });

  it('fails a safe head further behind than the limit, and names where to look', () => {
    const stalled = judgeSafeLag({ number: 20_000, timestamp: 10_000 }, { number: 10_000, timestamp: 8_000 }, 30);
    expect(stalled).toMatchObject({ healthy: false, blocks: 10_000, seconds: 2_000 });
    expect(stalled.line).toBe(
      'safe head: FAIL, safe L2 head 10000 is 33.3 minutes (10000 blocks) behind unsafe head 20000 (limit 30): derivation from L1 is not keeping up; check the L1 RPC and beacon endpoints',
    );
    // The limit is inclusive: exactly 30 minutes passes, a second more fails.
    expect(judgeSafeLag({ number: 2, timestamp: 1_800 }, { number: 1, timestamp: 0 }, 30).healthy).toBe(true);
    expect(judgeSafeLag({ number: 2, timestamp: 1_801 }, { number: 1, timestamp: 0 }, 30).healthy).toBe(false);
  });
});

describe('checkLag', () => {
  it('names the field when the consensus client answers optimism_syncStatus with something else', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () =>
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { unsafe_l2: { number: 5, timestamp: 'soon' } } })),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const failures: string[] = [];
    try {
      await checkLag({ consensusRpcUrl: url, maxLagMinutes: 5, timeoutMs: 2000 }, 1000, null, (_code, line) => failures.push(line), []);
    } finally {
      server.close();
    }
    expect(failures).toEqual([
      `lag: FAIL, consensus RPC ${url} answered optimism_syncStatus with unsafe_l2.timestamp: Invalid input: expected number, received string`,
    ]);
  });
});
