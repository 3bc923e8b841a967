import { afterEach, describe, expect, it } from 'vitest';
import { ServerError } from '../../errors.ts';
import { createProverHost, type ProverHost } from './host.ts';

/**
 * The prover host's JSON-RPC framing, as Base's host (jsonrpsee) words it, through the project's
 * one envelope parser (jsonrpc/protocol.ts). No enclave is needed: the calls here never reach one.
 */
const hosts: ProverHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

function host(): ProverHost {
  const made = createProverHost({
    enclaves: [],
    witness: () => Promise.reject(new ServerError('no witness in this test')),
    timeoutMs: 1000,
    version: '1.2.3',
  });
  hosts.push(made);
  return made;
}

describe('prover host framing (jsonrpsee wording)', () => {
  it('answers a batch item by item: a result, invalid requests, an unknown method; a notification not at all', async () => {
    const out = await host().handle([
      { jsonrpc: '2.0', id: 1, method: 'healthz', params: [] },
      { jsonrpc: '1.0', id: 2, method: 'healthz' },
      'not a call',
      { jsonrpc: '2.0', id: { nested: true }, method: 'healthz' },
      { jsonrpc: '2.0', id: 'four', method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', method: 'healthz', params: [] },
    ]);
    expect(out).toEqual([
      { jsonrpc: '2.0', id: 1, result: { version: '1.2.3' } },
      { jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'Invalid request' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } },
      { jsonrpc: '2.0', id: 'four', error: { code: -32601, message: 'Method not found' } },
    ]);
  });

  it('an empty batch is one Invalid request; notifications alone answer nothing', async () => {
    expect(await host().handle([])).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } });
    expect(await host().handle({ jsonrpc: '2.0', method: 'healthz' })).toBeUndefined();
  });

  it('params of any JSON shape reach the method, as jsonrpsee reads them (the method refuses them itself)', async () => {
    const out = (await host().handle({ jsonrpc: '2.0', id: 7, method: 'prover_prove', params: 'x' })) as {
      error: { code: number };
    };
    expect(out.error.code).toBe(-32602);
  });

  it('over HTTP: unparsable JSON is Parse error, a notification an empty 200', async () => {
    const made = host();
    const { url } = await made.listen('127.0.0.1', 0);
    const bad = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(bad.status).toBe(200);
    expect(await bad.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    const quiet = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'healthz' }) });
    expect(quiet.status).toBe(200);
    expect(await quiet.text()).toBe('');
  });
});
