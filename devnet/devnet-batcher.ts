import type { Logger } from 'pino';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import { createBatcher, type BatcherOptions } from './batcher.ts';
import { startBeaconBlobServer, type BeaconBlobServer } from './beacon-blobs.ts';
import type { Devnet } from './handle.ts';
import type { SealedBlock } from './edr/producer.ts';

/** The devnet's `batcher` option: the batcher's settings, and where to serve its blobs. */
export type DevnetBatcherOptions = Omit<BatcherOptions, 'chain' | 'logger'> & {
  /** Serve the posted blobs on the beacon API's blob endpoints at this port (0 = any free port; beacon-blobs.ts). */
  readonly beaconPort?: number;
};

/**
 * The flashblocks devnet's batcher (batcher.ts) and its beacon blob endpoints (beacon-blobs.ts):
 * `sealed` takes every sealed block, `start` opens the endpoints, `close` stops both.
 */
export function createDevnetBatcher(options: DevnetBatcherOptions, chain: BatcherOptions['chain'], host: string, logger: Logger) {
  const batcher = createBatcher({ ...options, chain, logger });
  let beacon: BeaconBlobServer | undefined;
  return {
    sealed(block: Pick<SealedBlock, 'number' | 'parentHash' | 'timestamp' | 'rawTransactions'>) {
      batcher.add({ number: block.number, parentHash: block.parentHash, timestamp: block.timestamp, transactions: block.rawTransactions });
    },
    async start() {
      if (options.beaconPort === undefined) return;
      const l1 = createUpstream(options.l1RpcUrl, { timeoutMs: 10_000 });
      beacon = await startBeaconBlobServer({ host, port: options.beaconPort, l1, posted: batcher.posted, logger });
    },
    handle: (): NonNullable<Devnet['batcher']> => ({ posted: batcher.posted, pending: batcher.pending, beaconUrl: beacon?.url ?? null }),
    async close() {
      await batcher.stop();
      await beacon?.close();
    },
  };
}
