import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { brotli, loadFixture, startFeedServer } from '../helpers/feed-server.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real HTTP server that reads every request and never answers: an upstream stuck mid-call. */
async function silentUpstream(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = createServer((request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => bodies.push(Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('flashlog ingest at SIGTERM (issue 19: an ingest that did not exit)', () => {
  it('exits with 0 when an execution is in flight that would not finish, abandoning it after --drain-timeout-ms', async () => {
    const upstream = await silentUpstream();
    cleanups.push(() => upstream.close());
    const feed = await startFeedServer(() =>
      loadFixture('base-sepolia-33439826.json').map((message) => ({ send: brotli(JSON.stringify(message)) })),
    );
    cleanups.push(() => feed.close());
    const dir = tempDir();
    cleanups.push(dir.remove);
    const ingest: FlashlogProcess = spawnFlashlog([
      'ingest',
      '--ws',
      feed.url,
      '--rpc',
      upstream.url,
      '--executor',
      'node',
      '--rpc-timeout-ms',
      '600000',
      '--canonical-poll-ms',
      '0',
      '--drain-timeout-ms',
      '300',
      '--no-metrics',
      '--data-dir',
      dir.path,
    ]);
    cleanups.push(() => ingest.stop('SIGKILL'));
    await ingest.waitFor((line) => line.msg === 'ingest started', 30_000);
    // The node executor asked the upstream for the first flashblock's receipts: it waits for an
    // answer that never comes (for 10 minutes, --rpc-timeout-ms).
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (upstream.bodies.some((body) => body.includes('eth_getTransactionReceipt'))) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    ingest.child.kill('SIGTERM');
    expect(await ingest.exited).toBe(0);
    expect(
      ingest.lines.filter((line) => line.msg === 'shutdown: work in flight did not finish within --drain-timeout-ms; abandoned'),
    ).toEqual([expect.objectContaining({ drainTimeoutMs: 300 })]);
  }, 30_000);
});
