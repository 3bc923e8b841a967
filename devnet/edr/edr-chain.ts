import type { Provider } from '@nomicfoundation/edr';
import { bytesToHex, hexToBytes } from 'viem';
import { DevnetL1Block } from '../contracts/bytecode.ts';
import { l1BlockPredeploy } from '../../src/derive/l1-info-deposit.ts';
import { l1BlockStorage, type L1Attributes } from '../deposit.ts';
import { JsonRpcError } from '../../src/errors.ts';
import { createOpProvider, edrCaller, edrContext } from '../../src/evm/edr.ts';

/**
 * The devnet's EVM: one EDR provider of the OP chain type (deposits, L1 data fee, operator fee),
 * local genesis with the OP predeploys, automine off and a FIFO mempool, so the block producer
 * decides what is mined and when.
 *
 * Every request goes through one queue: the producer mines trial blocks and reverts them
 * (snapshot, mine, read, revert) and no RPC reader may ever observe such a trial block.
 */
export interface Engine {
  /** One JSON-RPC call; resolves with `result` or rejects with a `JsonRpcError` carrying EDR's code and message. */
  call<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** Runs `work` with exclusive access: no other call interleaves. `work` gets an unqueued caller. */
  exclusive<T>(work: (call: <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>) => Promise<T>): Promise<T>;
}

export interface EngineOptions {
  readonly chainId: bigint;
  readonly coinbase: `0x${string}`;
  readonly blockGasLimit: bigint;
  readonly initialBaseFeePerGas: bigint;
  readonly genesisTime: bigint;
  /** The L1Block predeploy's values at genesis, so block 1 already charges L1 and operator fees. */
  readonly genesisL1Attributes: L1Attributes;
  readonly funded: readonly { readonly address: `0x${string}`; readonly balance: bigint }[];
  /** Several blocks may share one seconds timestamp (Denim: five 200 ms blocks per second). */
  readonly sameTimestampBlocks?: boolean;
  /** Whole states EDR's provider caches (default DEVNET_MAX_CACHED_STATES); a test bounds it lower. */
  readonly maxCachedStates?: number;
  /** More genesis accounts with code (the Denim devnet's BaseTime predeploy). */
  readonly predeploys?: readonly { readonly address: `0x${string}`; readonly code: `0x${string}` }[];
}

/**
 * How many whole states the devnet's EDR provider keeps in its block state cache (see
 * withMaxCachedStates in src/execute/edr.ts for why it is bounded: without a bound the devnet grew
 * by every block it ever mined, trial blocks included; `npm run bench -- edr-memory`: 7-8.5 MiB per 1,000
 * transactions executed in the devnet's pattern, 2.2 with this bound). A state that falls out is
 * recomputed from genesis when asked for, replaying every block's state diff: a cost that grows
 * with the chain, so the bound must hold every state read often. The cache is an LRU and a read
 * keeps a state in it: the parent of the open block (read again after at most ten trial blocks),
 * the sealed head the RPC reads, and the block a local executor forked from, whose accounts and
 * slots it reads at that block number as its transactions first touch them (src/execute/local.ts).
 * A block costs about a dozen states (open, trial blocks, seal): 128 hold about ten blocks.
 * 512 was tried: it holds more of what a state costs (about 50 MB at load 30), filled within the
 * first minutes, and `run --devnet --load 30`'s memory floor then grew by 82 MB in the 3 minutes of
 * chaos scenario 9 against 15-36 MB with 128 (docs/memory.md).
 */
export const DEVNET_MAX_CACHED_STATES = 128;

/** The genesis accounts the devnet's engine starts with: OP predeploys, funded accounts, more predeploys. */
export async function genesisAccounts(
  options: EngineOptions,
): Promise<{ address: Uint8Array; balance?: bigint; nonce?: bigint; code?: Uint8Array; storage?: { index: bigint; value: bigint }[] }[]> {
  const { edr } = await edrContext();
  return [
    // OP predeploys, with the devnet's L1Block code (see contracts/DevnetL1Block.sol for why).
    ...edr
      .opGenesisState(edr.OpHardfork.Isthmus)
      .map((account) =>
        bytesToHex(account.address) === l1BlockPredeploy
          ? { ...account, code: hexToBytes(DevnetL1Block.deployedBytecode), storage: l1BlockStorage(options.genesisL1Attributes) }
          : account,
      ),
    ...options.funded.map((account) => ({ address: hexToBytes(account.address), balance: account.balance })),
    ...(options.predeploys ?? []).map((account) => ({
      address: hexToBytes(account.address),
      code: hexToBytes(account.code),
      balance: 0n,
    })),
  ];
}

/** Where a provider forks from: a JSON-RPC URL and the block it continues (rollover.ts). */
export interface ForkPoint {
  readonly url: string;
  readonly blockNumber: bigint;
  /** Accounts the forked provider holds itself from the start (EDR reads the rest from `url`). */
  readonly accounts?: GenesisAccount[];
  /**
   * Where EDR writes what it read from `url` at a block it deems safe (one JSON file per answer;
   * by default `./edr-cache`, for ever): a directory the caller owns and clears.
   */
  readonly cacheDir?: string;
}
export type GenesisAccount = Awaited<ReturnType<typeof genesisAccounts>>[number];

/**
 * An EDR provider with the devnet's settings: from genesis, or forked at `fork` (a rollover: the
 * chain goes on from that block, its state read lazily from the URL).
 */
export async function createChainProvider(options: EngineOptions, fork?: ForkPoint): Promise<Provider> {
  return createOpProvider({
    chainId: options.chainId,
    coinbase: options.coinbase,
    hardfork: 'isthmus',
    initialBaseFeePerGas: options.initialBaseFeePerGas,
    blockGasLimit: options.blockGasLimit,
    bailOnCallFailure: true,
    allowBlocksWithSameTimestamp: options.sameTimestampBlocks ?? false,
    genesisState: fork ? (fork.accounts ?? []) : await genesisAccounts(options),
    network: fork
      ? { url: fork.url, blockNumber: fork.blockNumber, cacheDir: fork.cacheDir }
      : { genesisBlockGasLimit: options.blockGasLimit, genesisBlockTime: options.genesisTime },
    maxCachedStates: options.maxCachedStates ?? DEVNET_MAX_CACHED_STATES,
  });
}

/** An engine whose provider can be replaced (a rollover, devnet/edr/rollover.ts). */
export interface ReplaceableEngine extends Engine {
  /** Puts `next` in the current provider's place; call it inside `exclusive`. */
  replace(next: Provider): void;
}

export async function createEngine(options: EngineOptions): Promise<ReplaceableEngine> {
  return engineOver(await createChainProvider(options));
}

export function engineOver(first: Provider): ReplaceableEngine {
  // EDR puts the request it was given in an error's `data`: noise for our callers (its id is ours, not theirs).
  const asJsonRpcError = (_method: string, error: { code: number; message: string; data?: unknown }) => {
    const echoed = typeof error.data === 'object' && error.data !== null && 'jsonrpc' in error.data;
    return new JsonRpcError(error.code, error.message, error.data === undefined || echoed ? {} : { data: error.data });
  };
  let caller = edrCaller(first, asJsonRpcError);
  const raw = <T>(method: string, params: readonly unknown[] = []): Promise<T> => caller.call<T>(method, params);

  let tail: Promise<unknown> = Promise.resolve();
  function exclusive<T>(work: (call: <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>) => Promise<T>): Promise<T> {
    const run = tail.then(() => work(raw));
    tail = run.catch(() => undefined);
    return run;
  }
  return {
    call: (method, params) => exclusive((call) => call(method, params)),
    exclusive,
    replace(next) {
      caller = edrCaller(next, asJsonRpcError);
    },
  };
}
