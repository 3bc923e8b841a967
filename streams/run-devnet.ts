import type { Context } from '../src/context.ts';

/**
 * Starts the local devnet in-process for `flashlog run --devnet` and registers it with shutdown.
 * Kept apart so EDR is only loaded when --devnet is given.
 */
interface DevnetHandle { readonly rpcUrl: string; readonly wsUrl: string; close(): Promise<void> }
const devnetModule: string = '../src/devnet/devnet.ts';

export async function startDevnetForRun(ctx: Context): Promise<{ rpcUrl: string; wsUrl: string }> {
  const { createDevnet } = await import(devnetModule) as { createDevnet: (options: Record<string, unknown>) => Promise<DevnetHandle> };
  const devnet = await createDevnet({ logger: ctx.logger, metrics: ctx.metrics, load: ctx.config.load, reorgEvery: ctx.config.reorgEvery });
  ctx.shutdown.register('devnet', () => devnet.close());
  return { rpcUrl: devnet.rpcUrl, wsUrl: devnet.wsUrl };
}
