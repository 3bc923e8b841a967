import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createShutdown } from '../context.ts';
import { createLogger } from '../obs/logger.ts';
import { testContext, tempDir } from '../../test/helpers/context.ts';
import { LogChainMismatchError, readChainStamp, stampChain } from './chain-stamp.ts';
import { createEmbeddedLog } from './embedded/embedded.ts';
import { openChainLog, startFreshEmbeddedLog } from './open-chain-log.ts';
import { previousLogDir } from './set-aside.ts';
import { allTopics } from '../records/topics.ts';

/**
 * Opening a log held against a node's chain (open-chain-log.ts): an embedded log in a temporary
 * directory and a JSON-RPC node on 127.0.0.1 that names its chain (eth_chainId, block 0's hash).
 */
const A = `0x${'a1'.repeat(32)}` as const;
const B = `0x${'b2'.repeat(32)}` as const;
const node = { genesis: A as string, answer: true };
let server: Server;
let rpcUrl: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      const reply = !node.answer
        ? { jsonrpc: '2.0', id, error: { code: -32601, message: `the method ${method} does not exist/is not available` } }
        : method === 'eth_chainId'
          ? { jsonrpc: '2.0', id, result: '0x539' }
          : { jsonrpc: '2.0', id, result: { number: '0x0', hash: node.genesis } };
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const dirs: { remove: () => void }[] = [];
afterEach(() => {
  node.genesis = A;
  node.answer = true;
  for (const dir of dirs.splice(0)) dir.remove();
});

/** A context on a new data directory whose log lines the test reads. */
function context(overrides: Parameters<typeof testContext>[0] = {}) {
  const dir = tempDir();
  dirs.push(dir);
  const lines: { level: number; msg: string; chain?: string }[] = [];
  const logger = createLogger({
    level: 'debug',
    name: 'test',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) } as never,
  });
  const ctx = { ...testContext({ dataDir: dir.path, log: 'embedded', ...overrides }), logger, shutdown: createShutdown(logger) };
  return { ctx, lines, dir: dir.path };
}

describe('a log opened against its node', () => {
  it("a writer stamps a new log with the node's chain; a node of another chain is then refused with both named", async () => {
    const { ctx, lines, dir } = context();
    const log = await openChainLog(ctx, { writer: true, rpcUrl });
    expect(await readChainStamp(log)).toEqual({ chainId: 1337n, genesisHash: A });
    await log.close();
    expect(lines.at(-1)).toMatchObject({
      msg: `stamped the new log in ${dir} with the node's chain`,
      chain: `chain id 1337, genesis ${A}`,
    });

    node.genesis = B;
    const refused = await openChainLog(ctx, { writer: false, rpcUrl }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LogChainMismatchError);
    expect((refused as Error).message).toContain(
      `holds chain id 1337, genesis ${A}, but the node at ${rpcUrl} is chain id 1337, genesis ${B}`,
    );
  });

  it('a node that answers without naming its chain leaves the log unchecked, with a warning', async () => {
    const { ctx, lines } = context();
    node.answer = false;
    const log = await openChainLog(ctx, { writer: true, rpcUrl });
    expect(await readChainStamp(log)).toBeNull();
    await log.close();
    expect(lines.map((line) => line.msg)).toContain(
      'the node did not name its chain (asked for up to 5 s): the log is not checked against it',
    );
  });
});

describe('a fresh log for a new devnet', () => {
  it('moves the previous embedded log to previous/, naming the chain it held, and starts a new one', async () => {
    const { ctx, lines, dir } = context();
    const old = createEmbeddedLog({ path: join(dir, 'flashlog.db') });
    await old.ensureTopics(allTopics.map((name) => ({ name })));
    await stampChain(old, { chainId: 901n, genesisHash: B });
    await old.close();
    writeFileSync(join(dir, 'view.snapshot.json'), '{}');

    await startFreshEmbeddedLog({ ...ctx, config: { ...ctx.config, viewSnapshot: undefined } });
    expect(existsSync(join(dir, 'flashlog.db'))).toBe(false);
    expect(existsSync(join(dir, previousLogDir, 'flashlog.db'))).toBe(true);
    expect(existsSync(join(dir, previousLogDir, 'view.snapshot.json'))).toBe(true);
    expect(lines.at(-1)?.msg).toBe(
      `run --devnet starts a new chain in a fresh log: moved the previous log (chain id 901, genesis ${B}) to ${join(dir, previousLogDir)}`,
    );

    const log = await openChainLog(ctx, { writer: true, rpcUrl, newDevnet: true });
    expect(await readChainStamp(log)).toEqual({ chainId: 1337n, genesisHash: A });
    await log.close();
  });
});
