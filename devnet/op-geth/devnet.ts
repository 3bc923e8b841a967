import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { concat, numberToHex, pad, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';
import { DevnetL1Block } from '../contracts/bytecode.ts';
import { createDevnetBatcher, type DevnetBatcherOptions } from '../devnet-batcher.ts';
import { DEVNET_ACCOUNT_BALANCE, LOAD_ACCOUNTS, devnetAccounts, type DevnetAccount } from '../edr/devnet.ts';
import { eip1559, l2Genesis, rollupJson } from './genesis.ts';
import { createL1Reader, type L1BlockRef, type L1Request } from './l1.ts';
import { startOpGethNode } from './node.ts';
import { deployPortal } from './portal.ts';
import { createSequencer } from './sequencer.ts';

/**
 * `flashlog devnet --op-geth`: an L2 whose every block derives from an L1, as an OP chain's does.
 * The L2 is op-geth (a binary the user gives) on a fresh Isthmus genesis in `dataDir/op-geth`;
 * flashlog sequences it as op-node does (sequencer.ts: an L1 origin per block, the L1-info deposit,
 * the origin's deposits from the deposit contract it deploys on the L1 at start, then op-geth's
 * txpool, which --load feeds), and its batcher posts every block to the L1's batch inbox (calldata or blobs), with the
 * posted blobs on a beacon endpoint. The rollup config deriving the chain is written to
 * `dataDir/rollup.json` (op-node's form). No flashblocks feed: blocks are whole when they appear.
 *
 * It is an invariant that the L1 going away never stops the L2: a block that fails (its origin
 * unreadable) is retried at the next tick, and the batcher retries its posts.
 */
export interface OpGethDevnetOptions {
  readonly binary: string;
  /** The devnet's folder: op-geth's data dir (`op-geth`, replaced at every start) and `rollup.json`. */
  readonly dataDir: string;
  /** The L1 the devnet reads its origins from and posts to (the batcher's). */
  readonly batcher: DevnetBatcherOptions;
  readonly host: string;
  /** op-geth's JSON-RPC port (0 = any). */
  readonly rpcPort: number;
  /** Seconds. */
  readonly blockTime: number;
  readonly logger: Logger;
  readonly chainId?: number;
  /** The built-in load (load.ts), transactions a second through op-geth's txpool; its deposits are left out (deposits come from the L1). */
  readonly load?: number;
}

export interface OpGethDevnet {
  readonly chainId: number;
  readonly l1ChainId: number;
  /** op-geth's JSON-RPC. */
  readonly rpcUrl: string;
  readonly beaconUrl: string | null;
  readonly rollupConfigPath: string;
  readonly portal: Address;
  readonly genesisHash: Hex;
  readonly accounts: readonly DevnetAccount[];
  /** The newest L2 block sequenced. */
  head(): { readonly number: bigint; readonly hash: Hex };
  close(): Promise<void>;
}

/**
 * Not the EDR devnet's 1337: flashlog knows that chain's rollup config (src/op/chains.ts), which
 * has no genesis to derive from; this chain's config is the rollup.json it writes.
 */
export const OP_GETH_DEVNET_CHAIN_ID = 901;
const gasLimit = 30_000_000n;
const maxSequencerDrift = 600;
/** Base's fee scalars. */
const feeScalars = { base: 1368, blob: 810_949 } as const;
/** No SystemConfig on the L1: its address holds nothing, so the chain's config never changes. */
const noSystemConfig: Address = '0x0000000000000000000000000000000000000000';

/** The SystemConfig at L2 genesis: the batcher, Base's fee scalars, no operator fee, OP Mainnet's EIP-1559 parameters. */
function genesisSystemConfig(batcher: Address): SystemConfig {
  return {
    batcher,
    overhead: pad('0x00', { size: 32 }),
    // Ecotone's packed scalar: version 1, then blobBaseFeeScalar and baseFeeScalar as u32s at the end.
    scalar: concat([
      '0x01',
      pad('0x00', { size: 23 }),
      numberToHex(feeScalars.blob, { size: 4 }),
      numberToHex(feeScalars.base, { size: 4 }),
    ]),
    gasLimit,
    eip1559Params: concat([numberToHex(eip1559.denominatorCanyon, { size: 4 }), numberToHex(eip1559.elasticity, { size: 4 })]),
    operatorFeeParams: pad('0x00', { size: 32 }),
    minBaseFee: 0n,
    daFootprintGasScalar: 0,
  };
}

/**
 * Deploys the deposit contract on the L1, starts op-geth on the L2 genesis, writes rollup.json,
 * and starts the batcher, the beacon endpoint and the sequencer; resolves once the chain runs.
 *
 * @example const devnet = await startOpGethDevnet({ binary, dataDir, batcher, host: '127.0.0.1', rpcPort: 0, blockTime: 1, logger })
 */
export async function startOpGethDevnet(options: OpGethDevnetOptions): Promise<OpGethDevnet> {
  const { logger, blockTime } = options;
  const chainId = options.chainId ?? OP_GETH_DEVNET_CHAIN_ID;
  const upstream = createUpstream(options.batcher.l1RpcUrl, { timeoutMs: 10_000 });
  const request: L1Request = async <T>(method: string, params: readonly unknown[] = []) => (await upstream.call(method, params)) as T;
  const l1 = createL1Reader(request);
  const l1ChainId = Number(BigInt(await request<Hex>('eth_chainId')));
  const portal = await deployPortal(request, options.batcher.key);
  const origin = (await l1.block(portal.blockNumber))!;
  logger.info({ portal: portal.address, l1Block: Number(origin.number) }, 'devnet: deposit contract deployed on the L1');
  const batcherAddress = privateKeyToAccount(options.batcher.key).address;
  const systemConfig = genesisSystemConfig(batcherAddress);
  const epoch = await l1.epoch(origin.number);
  const accounts = devnetAccounts();
  const genesis = await l2Genesis(options.binary, {
    chainId,
    timestamp: origin.timestamp,
    gasLimit,
    l1Block: DevnetL1Block.deployedBytecode,
    l1Attributes: {
      l1Number: origin.number,
      l1Timestamp: origin.timestamp,
      l1BaseFee: epoch.header.baseFeePerGas,
      l1BlobBaseFee: epoch.header.blobBaseFee ?? 1n,
      l1Hash: origin.hash,
      sequenceNumber: 0n,
      batcherHash: pad(batcherAddress, { size: 32 }),
      baseFeeScalar: feeScalars.base,
      blobBaseFeeScalar: feeScalars.blob,
      operatorFeeScalar: 0,
      operatorFeeConstant: 0n,
    },
    minBaseFee: 0n,
    funded: accounts.map((account) => ({ address: account.address, balance: DEVNET_ACCOUNT_BALANCE })),
  });
  const nodeDir = join(options.dataDir, 'op-geth');
  // A new chain at every start, as the EDR devnet's.
  rmSync(nodeDir, { recursive: true, force: true });
  const node = await startOpGethNode({ binary: options.binary, dataDir: nodeDir, genesis, host: options.host, httpPort: options.rpcPort });
  const cleanup: (() => Promise<void>)[] = [() => node.close()];
  const close = async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const genesisHash = (await node.rpc<{ hash: Hex }>('eth_getBlockByNumber', ['0x0', false])).hash;
    const rollup = rollupJson({
      l2ChainId: chainId,
      l1ChainId,
      blockTime,
      jovian: false,
      genesis: { l1: origin, l2: { hash: genesisHash, number: 0n }, l2Time: origin.timestamp },
      systemConfig,
      batchInbox: options.batcher.inbox,
      portal: portal.address,
      l1SystemConfig: noSystemConfig,
      seqWindowSize: 3600,
      maxSequencerDrift,
      channelTimeout: 300,
    });
    const rollupConfigPath = join(options.dataDir, 'rollup.json');
    writeFileSync(rollupConfigPath, `${JSON.stringify(rollup, null, 2)}\n`);
    // The blobs of the last 512 posts stay served (a blob a post: 64 MB, 85 minutes of 1 s blocks
    // in channels of 10), well past the L1 a proof's host reads back (the channel timeout).
    const batcher = createDevnetBatcher(
      { keepPosted: 512, ...options.batcher },
      { chainId: BigInt(chainId), l2GenesisTime: origin.timestamp, blockTime: BigInt(blockTime) },
      options.host,
      logger,
    );
    cleanup.push(() => batcher.close());
    await batcher.start();
    const sequencer = createSequencer({
      l1,
      l2: node,
      rules: { rollup: parseRollupConfig(rollup), depositContract: portal.address, systemConfig: noSystemConfig },
      genesis: { hash: genesisHash, timestamp: origin.timestamp, l1Origin: origin },
      systemConfig,
      maxSequencerDrift: BigInt(maxSequencerDrift),
      keepBlocks: false,
    });
    const loop = sequence({ sequencer, batcher, blockTime, logger });
    cleanup.push(() => loop.stop());
    if (options.load) {
      const { startLoad } = await import('../load.ts');
      const load = await startLoad({
        engine: { call: (method, params) => node.rpc(method, params) },
        producer: { submit: (raw) => node.rpc<Hex>('eth_sendRawTransaction', [raw]) },
        logger,
        // Accounts 8 and 9 stay the user's, as on the EDR devnet.
        accounts: accounts.slice(0, LOAD_ACCOUNTS),
        chainId,
        tps: options.load,
        deposits: false,
      });
      cleanup.push(() => load.stop());
    }
    return {
      chainId,
      l1ChainId,
      rpcUrl: node.url,
      beaconUrl: batcher.handle().beaconUrl,
      rollupConfigPath,
      portal: portal.address,
      genesisHash,
      accounts,
      head: () => sequencer.head(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Builds a block every `blockTime` seconds of wall-clock time (catching up at once when behind) and hands it to the batcher. */
function sequence(options: {
  readonly sequencer: ReturnType<typeof createSequencer>;
  readonly batcher: ReturnType<typeof createDevnetBatcher>;
  readonly blockTime: number;
  readonly logger: Logger;
}) {
  const { sequencer, batcher, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let failures = 0;
  const tick = async () => {
    const next = sequencer.head().timestamp + BigInt(options.blockTime);
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (next <= now) {
      try {
        const block = await sequencer.build(next, [], { pool: true });
        failures = 0;
        batcher.sealed({
          number: block.number,
          parentHash: block.parentHash,
          timestamp: block.timestamp,
          rawTransactions: [...block.transactions],
        });
        logger.debug(
          { number: Number(block.number), l1Origin: Number(block.l1Origin.number), txs: block.transactions.length },
          'devnet: block',
        );
      } catch (error) {
        failures++;
        if (failures === 1 || failures % 30 === 0)
          logger.error({ err: (error as Error).message, failures }, 'devnet: building the next L2 block failed; retrying');
      }
    }
    if (stopped) return;
    const wait = next <= BigInt(Math.floor(Date.now() / 1000)) ? (failures ? 1000 : 0) : 1000 - (Date.now() % 1000) + 5;
    timer = setTimeout(() => {
      running = tick();
    }, wait);
  };
  running = tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type { L1BlockRef };
