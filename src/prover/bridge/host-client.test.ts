import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { callProverHost, callProverHostWithRetry, hostUnavailableCode } from './host-client.ts';

/** A JSON-RPC server on a given port answering every call with `answer`. */
async function serve(port: number, answer: (body: { id: number }) => unknown): Promise<{ server: Server; port: number; calls: number[] }> {
  const calls: number[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (c: Buffer) => {
      text += c.toString();
    });
    request.on('end', () => {
      const body = JSON.parse(text) as { id: number };
      calls.push(Date.now());
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, calls };
}
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0))
    await new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    });
});

describe('prover host client', () => {
  it('returns the JSON-RPC error of the host as is, without retrying it', async () => {
    const host = await serve(0, (body) => ({
      jsonrpc: '2.0',
      id: body.id,
      error: { code: -32001, message: 'no valid signer found among: []' },
    }));
    servers.push(host.server);
    const outcome = await callProverHostWithRetry(`http://127.0.0.1:${host.port}`, {}, { timeoutMs: 5000, backoffMs: 10 });
    expect(outcome).toEqual({ error: { code: -32001, message: 'no valid signer found among: []' } });
    expect(host.calls).toHaveLength(1);
  });

  it('retries while the host is unreachable, then gets the result', async () => {
    // Find a free port, then leave it closed for a while.
    const probe = await serve(0, () => ({}));
    const port = probe.port;
    await new Promise((resolve) => probe.server.close(resolve));
    const first = await callProverHost(`http://127.0.0.1:${port}`, {}, { timeoutMs: 1000 });
    expect(first).toMatchObject({ error: { code: hostUnavailableCode }, unreachable: true });
    const pending = callProverHostWithRetry(`http://127.0.0.1:${port}`, {}, { timeoutMs: 5000, backoffMs: 200, attempts: 6 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const host = await serve(port, (body) => ({ jsonrpc: '2.0', id: body.id, result: { Tee: 'ok' } }));
    servers.push(host.server);
    expect(await pending).toEqual({ result: { Tee: 'ok' } });
  });

  it('gives up after the attempts with a clear message', async () => {
    const outcome = await callProverHostWithRetry('http://127.0.0.1:1', {}, { timeoutMs: 1000, backoffMs: 10, attempts: 3 });
    expect('error' in outcome && outcome.error.message).toMatch(/^prover host http:\/\/127\.0\.0\.1:1 unreachable: /);
  });
});
