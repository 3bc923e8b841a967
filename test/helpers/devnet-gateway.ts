import { createDevnet, type Devnet, type DevnetOptions } from '../../devnet/edr/devnet.ts';
import { createLocalExecutor } from '../../src/execute/local.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import type { Config } from '../../src/config/settings.ts';
import { createIngest } from '../../streams/ingest.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { tempDir, testContext } from './context.ts';

/**
 * The whole path in one process: devnet flashblocks -> ingest (local EDR executor, full state
 * diff) -> embedded log -> view -> gateway, with the devnet node as the upstream.
 */
export interface DevnetGateway {
  readonly devnet: Devnet;
  readonly serve: Serve;
  readonly log: Log;
  /** Resolves right after the devnet seals a block, so the next one is ~blockTimeMs away. */
  afterSeal(): Promise<void>;
  close(): Promise<void>;
}

export async function startDevnetGateway(
  devnetOptions: DevnetOptions,
  config: Partial<Config> = {},
  /** The gateway's upstream in front of the devnet's RPC (a proxy of the test's), when not the RPC itself. */
  upstreamOf: (devnet: Devnet) => string = (devnet) => devnet.rpcUrl,
): Promise<DevnetGateway> {
  const dir = tempDir();
  const ctx = testContext({ port: 0, headPollMs: 200, rpcTimeoutMs: 5000, ...config });
  const devnet = await createDevnet(devnetOptions);
  const log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const executor = await createLocalExecutor({
    upstreamUrl: devnet.rpcUrl,
    timeoutMs: 5000,
    logger: ctx.logger,
    metrics: ctx.metrics,
    // The state diff the tests were written against, unless the test names one (config.stateDiff).
    stateDiff: config.stateDiff ?? 'full',
  });
  ctx.shutdown.register('executor', () => executor.close());
  const ingestDone = createIngest(ctx, { log, endpoints: { source: 'flashblocks', feedUrls: [devnet.wsUrl] }, executor }).run();
  const serve = await createServe(ctx, { log, rpcUrl: upstreamOf(devnet) });
  return {
    devnet,
    serve,
    log,
    afterSeal: () =>
      new Promise<void>((resolve) => {
        const off = devnet.onSealed(() => {
          off();
          resolve();
        });
      }),
    async close() {
      await serve.close();
      await ctx.shutdown.run();
      await ingestDone.catch(() => {});
      await devnet.close();
      await log.close();
      dir.remove();
    },
  };
}
