import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheKey, createForkCache, type ForkCache } from './fork-cache.ts';

/** A real HTTP upstream that counts requests and answers slowly, so in-flight sharing shows. */
describe('fork cache', () => {
  const seen: string[] = [];
  let upstreamUrl = '';
  let close: () => void = () => {};
  let cache: ForkCache;
  beforeAll(async () => {
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => {
        text += chunk;
      });
      req.on('end', () => {
        const body = JSON.parse(text) as
          { id: number; method: string; params: unknown[] } | { id: number; method: string; params: unknown[] }[];
        const items = Array.isArray(body) ? body : [body];
        for (const item of items) seen.push(item.method);
        const replies = items.map((item) =>
          item.method === 'eth_fail'
            ? { jsonrpc: '2.0', id: item.id, error: { code: -32000, message: 'nope' } }
            : item.method === 'eth_getBlockByNumber'
              ? { jsonrpc: '2.0', id: item.id, result: null }
              : { jsonrpc: '2.0', id: item.id, result: `${item.method}:${JSON.stringify(item.params)}` },
        );
        setTimeout(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? replies : replies[0])),
          50,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
    cache = await createForkCache({ upstreamUrl, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await cache.close();
    close();
  });
  const call = async (body: unknown) =>
    (
      await fetch(cache.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    ).json() as Promise<unknown>;

  it('answers a read pinned to a block once from the upstream, shares it while in flight, then serves it from memory', async () => {
    seen.length = 0;
    const request = { jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: ['0x00000000000000000000000000000000000000aa', '0x10'] };
    const [a, b] = await Promise.all([call(request), call({ ...request, id: 8 })]);
    expect(a).toEqual({ jsonrpc: '2.0', id: 7, result: 'eth_getBalance:["0x00000000000000000000000000000000000000aa","0x10"]' });
    expect(b).toMatchObject({ id: 8 });
    expect(await call({ ...request, id: 9 })).toMatchObject({ id: 9, result: (a as { result: string }).result });
    expect(seen).toEqual(['eth_getBalance']);
    expect(cache.stats.shared).toBeGreaterThanOrEqual(1);
    expect(cache.stats.hits).toBeGreaterThanOrEqual(1);
  });

  it('never caches latest, pending, unknown methods or errors; keeps batch order and ids', async () => {
    seen.length = 0;
    const latest = { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x00000000000000000000000000000000000000aa', 'latest'] };
    await call(latest);
    await call(latest);
    await call({ jsonrpc: '2.0', id: 2, method: 'eth_fail', params: [] });
    await call({ jsonrpc: '2.0', id: 3, method: 'eth_fail', params: [] });
    // A block that is not there yet (null) is asked again next time.
    await call({ jsonrpc: '2.0', id: 4, method: 'eth_getBlockByNumber', params: ['0x99', false] });
    await call({ jsonrpc: '2.0', id: 5, method: 'eth_getBlockByNumber', params: ['0x99', false] });
    expect(seen).toEqual(['eth_getBalance', 'eth_getBalance', 'eth_fail', 'eth_fail', 'eth_getBlockByNumber', 'eth_getBlockByNumber']);
    const batch = (await call([
      { jsonrpc: '2.0', id: 'x', method: 'eth_getStorageAt', params: ['0x00000000000000000000000000000000000000aa', '0x1', '0x10'] },
      { jsonrpc: '2.0', id: 'y', method: 'eth_fail', params: [] },
      { nonsense: true },
    ])) as { id: unknown; result?: unknown; error?: { code: number } }[];
    expect(batch.map((reply) => reply.id)).toEqual(['x', 'y', null]);
    expect(batch[1]!.error?.code).toBe(-32000);
    expect(batch[2]!.error?.code).toBe(-32600);
    expect(cacheKey({ method: 'eth_getCode', params: ['0xaa', 'pending'] })).toBeNull();
    expect(cacheKey({ method: 'eth_getCode', params: ['0xAA', '0x1'] })).toBe(cacheKey({ method: 'eth_getCode', params: ['0xaa', '0x1'] }));
  });

  it('keeps state reads for the newest 4 block numbers only: an older fork block is read from the upstream again', async () => {
    const bounded = await createForkCache({ upstreamUrl, timeoutMs: 2000 });
    try {
      const read = (block: number, id: number) =>
        fetch(bounded.url, {
          method: 'POST',
          body: JSON.stringify([
            {
              jsonrpc: '2.0',
              id,
              method: 'eth_getBalance',
              params: ['0x00000000000000000000000000000000000000bb', `0x${block.toString(16)}`],
            },
            {
              jsonrpc: '2.0',
              id: id + 1,
              method: 'eth_getStorageAt',
              params: ['0x00000000000000000000000000000000000000bb', '0x0', `0x${block.toString(16)}`],
            },
          ]),
        }).then((response) => response.json());
      for (let block = 100; block < 106; block++) await read(block, block * 10);
      expect(bounded.cachedAnswers()).toBe(8); // 4 blocks x 2 reads
      seen.length = 0;
      for (let block = 102; block < 106; block++) await read(block, block * 10);
      expect(seen).toEqual([]); // the newest 4 blocks: from memory
      await read(100, 1);
      expect(seen).toEqual(['eth_getBalance', 'eth_getStorageAt']); // dropped with its block
      expect(bounded.cachedAnswers()).toBe(8); // older than every block kept: answered, not kept
      // Headers (not state reads) stay, whatever their number.
      seen.length = 0;
      const header = { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByHash', params: ['0xabc', false] };
      await fetch(bounded.url, { method: 'POST', body: JSON.stringify(header) });
      for (let block = 106; block < 112; block++) await read(block, block * 10);
      seen.length = 0;
      await fetch(bounded.url, { method: 'POST', body: JSON.stringify(header) });
      expect(seen).toEqual([]);
    } finally {
      await bounded.close();
    }
  });

  it('answers a JSON-RPC error, not a crash, when the upstream is unreachable', async () => {
    const dead = await createForkCache({ upstreamUrl: 'http://127.0.0.1:1', timeoutMs: 500 });
    try {
      const reply = (await (
        await fetch(dead.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) })
      ).json()) as { error?: { code: number; message: string } };
      expect(reply.error?.code).toBe(-32000);
      expect(reply.error?.message).toMatch(/^upstream RPC http:\/\/127\.0\.0\.1:1 unreachable: .* \(eth_chainId\)$/);
      const parse = (await (await fetch(dead.url, { method: 'POST', body: '{nope' })).json()) as { error?: { code: number } };
      expect(parse.error?.code).toBe(-32700);
    } finally {
      await dead.close();
    }
  });
});
