import { createMetricsRegistry } from '../src/obs/metrics.ts';
import { createLogger } from '../src/obs/logger.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import { createNodeHead } from '../src/rpc/node-head.ts';

/**
 * The window between the node's new head and the gateway learning it (src/rpc/node-head.ts): a
 * devnet in this process says when it seals each block (its `onSealed`/`onBlock` listener, inside
 * the producer's section, as the head moves), and the gateway's follower says when it knew. For
 * 20 s on each devnet: the Denim one over its WebSocket `newHeads`, the flashblocks one (which has
 * no WebSocket JSON-RPC) by polling `eth_blockNumber` every 100 ms, the default `--head-poll-ms`.
 * In that window a pending read is held against the previous head.
 */
type Row = Record<string, unknown>;
const seconds = 20;

async function measure(mode: 'denim' | 'flashblocks'): Promise<Row> {
  const { createDevnet } = await import('../devnet/edr/devnet.ts');
  const devnet = await createDevnet(mode === 'denim' ? { denim: true } : {});
  const sealedAt = new Map<bigint, number>();
  const stop =
    mode === 'denim'
      ? devnet.onBlock((block) => sealedAt.set(block.number, performance.now()))
      : devnet.onSealed((block) => sealedAt.set(block.number, performance.now()));
  const nodeHead = createNodeHead({
    upstream: createUpstream(devnet.rpcUrl, { timeoutMs: 2000 }),
    wsUrl: mode === 'denim' ? devnet.wsUrl : undefined,
    pollMs: 100,
    logger: createLogger({ level: 'warn', name: 'bench' }),
    metrics: createMetricsRegistry({ defaults: false }),
  });
  const windows: number[] = [];
  const learned = nodeHead.heads$.subscribe((number) => {
    const at = sealedAt.get(number);
    if (at !== undefined) windows.push(performance.now() - at);
  });
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  learned.unsubscribe();
  nodeHead.close();
  stop();
  await devnet.close();
  windows.sort((a, b) => a - b);
  const at = (q: number) => windows[Math.min(windows.length - 1, Math.floor(windows.length * q))] ?? Number.NaN;
  return {
    bench: 'node head -> gateway knows it',
    devnet: mode,
    by: mode === 'denim' ? 'newHeads (WebSocket)' : 'eth_blockNumber every 100 ms',
    heads: windows.length,
    'p50 ms': at(0.5),
    'p99 ms': at(0.99),
    'max ms': at(1),
  };
}

export async function run(): Promise<Row[]> {
  return [await measure('denim'), await measure('flashblocks')];
}
