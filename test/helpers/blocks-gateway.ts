import { createDevnet, type Devnet, type DevnetOptions } from '../../devnet/edr/devnet.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import type { Config } from '../../src/config/settings.ts';
import type { Context } from '../../src/context.ts';
import { createIngest, type Ingest } from '../../streams/ingest.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { tempDir, testContext } from './context.ts';

/**
 * The Denim path in one process: devnet --denim (200 ms blocks) -> blocks source (newHeads over
 * the node's WebSocket, or through `wsUrlFor`) -> embedded log -> view -> gateway.
 */
export interface BlocksGateway {
  readonly devnet: Devnet;
  readonly serve: Serve;
  readonly log: Log;
  readonly ingest: Ingest;
  readonly ctx: Context;
  /** A second gateway over the same log, started now (a restarted replica). */
  startServe(): Promise<Serve>;
  /** Stops the source (the gateway keeps serving). */
  stopIngest(): Promise<void>;
  close(): Promise<void>;
}

export async function startBlocksGateway(
  devnetOptions: DevnetOptions,
  config: Partial<Config> = {},
  wsUrlFor?: (devnet: Devnet) => Promise<string>,
): Promise<BlocksGateway> {
  const dir = tempDir();
  const ctx = testContext({ port: 0, rpcTimeoutMs: 5000, lifecyclePollMs: 300, source: 'blocks', ...config });
  const devnet = await createDevnet({ denim: true, ...devnetOptions });
  const log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const serve = await createServe(ctx, { log, rpcUrl: devnet.rpcUrl, source: 'blocks' });
  const ingest = createIngest(ctx, {
    log,
    endpoints: { source: 'blocks', rpcUrl: devnet.rpcUrl, rpcWsUrl: wsUrlFor ? await wsUrlFor(devnet) : devnet.wsUrl },
  });
  const done = ingest.run();
  const extra: Serve[] = [];
  let stopped: Promise<void> | undefined;
  const stopIngest = () =>
    (stopped ??= (async () => {
      await ctx.shutdown.run();
      await done.catch(() => {});
    })());
  return {
    devnet,
    serve,
    log,
    ingest,
    ctx,
    async startServe() {
      const other = await createServe({ ...testContext({ port: 0, source: 'blocks' }) }, { log, rpcUrl: devnet.rpcUrl, source: 'blocks' });
      extra.push(other);
      return other;
    },
    stopIngest,
    async close() {
      await stopIngest();
      for (const other of extra) await other.close();
      await serve.close();
      await devnet.close();
      await log.close();
      dir.remove();
    },
  };
}
