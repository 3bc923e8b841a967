import type { AccountOverride, Provider } from '@nomicfoundation/edr';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FlashlogError } from '../errors.ts';

/**
 * An EDR provider of the OP chain type as a JSON-RPC caller. EDR answers `{result}` or `{error}`
 * without `jsonrpc`/`id`; `call` unwraps it and throws `EdrError` with EDR's code.
 *
 * EDR is loaded on first use (it is a 38 MB native addon): importing this module costs nothing.
 */
export interface EdrCaller {
  call<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /**
   * Several calls in one request, answered in order (one crossing into EDR instead of one per
   * call). EDR answers a batch all or nothing: one failing call fails the batch with its error,
   * and the calls before it have taken effect.
   */
  batch<T = unknown>(calls: readonly (readonly [method: string, params: readonly unknown[]])[]): Promise<T[]>;
}

/** An error EDR answered a call with (its JSON-RPC code in `rpcCode`). */
export class EdrError extends FlashlogError {
  readonly rpcCode: number;
  constructor(method: string, rpcCode: number, message: string) {
    super('EXECUTION_FAILED', `EDR ${method}: ${message}`);
    this.name = 'EdrError';
    this.rpcCode = rpcCode;
  }
}

type Edr = typeof import('@nomicfoundation/edr');
let loaded: Promise<{ edr: Edr; context: InstanceType<Edr['EdrContext']> }> | undefined;

/** The process-wide EDR context with the OP provider factory registered once. */
export function edrContext(): Promise<{ edr: Edr; context: InstanceType<Edr['EdrContext']> }> {
  loaded ??= (async () => {
    const edr = await import('@nomicfoundation/edr');
    const context = new edr.EdrContext();
    await context.registerProviderFactory(edr.OP_CHAIN_TYPE, edr.opProviderFactory());
    return { edr, context };
  })();
  return loaded;
}

/** Providers being made under withMaxCachedStates. */
let boundsPending = 0;

/**
 * EDR pushes one whole state into its provider's block state cache (an LRU) for every block it
 * mines, trial blocks that evm_revert drops included, and for every hardhat_setBalance /
 * hardhat_setStorageAt, and only evicts past 100,000 states (DEFAULT_MAX_CACHED_STATES in
 * edr_provider's data.rs). The states share their unchanged trie nodes, but each keeps what it
 * changed, so a provider's memory grew with every block it ever mined. EDR reads the bound from the
 * environment variable `__EDR_MAX_CACHED_STATES` when it makes a provider (it is no ProviderConfig
 * field): it is set for that one provider and put back after. A value already in the environment
 * wins (to measure EDR's default: `__EDR_MAX_CACHED_STATES=100000`). A state that falls out of the
 * cache is recomputed when asked for (replaying each block's state diff), so the bound must hold
 * every state the caller goes back to (see the callers' bounds).
 */
export async function withMaxCachedStates<T>(states: number, make: () => Promise<T>): Promise<T> {
  const name = '__EDR_MAX_CACHED_STATES';
  // EDR reads the variable on its own thread some time before the provider resolves: while one
  // provider is being made, another made at the same time (the devnet's and a fork, in `run
  // --devnet`) gets the bound already set, and the variable stays until the last one is made.
  if (boundsPending === 0 && process.env[name] !== undefined) return make();
  if (boundsPending === 0) process.env[name] = String(states);
  boundsPending += 1;
  try {
    return await make();
  } finally {
    boundsPending -= 1;
    if (boundsPending === 0) delete process.env[name];
  }
}

const hexBigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? `0x${value.toString(16)}` : value);

/** An EDR error answer. */
type EdrErrorBody = { code: number; message: string; data?: unknown };

/**
 * A JSON-RPC caller over `provider`; an error answer becomes `toError(method, error)` (by default an
 * `EdrError` with EDR's code).
 */
export function edrCaller(
  provider: Provider,
  toError: (method: string, error: EdrErrorBody) => Error = (method, error) => new EdrError(method, error.code, error.message),
): EdrCaller {
  let nextId = 1;
  const send = async <T>(request: unknown): Promise<{ result?: T; error?: EdrErrorBody }> => {
    const response = await provider.handleRequest(JSON.stringify(request, hexBigints));
    return (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as { result?: T; error?: EdrErrorBody };
  };
  return {
    async call<T>(method: string, params: readonly unknown[] = []): Promise<T> {
      const body = await send<T>({ jsonrpc: '2.0', id: nextId++, method, params });
      if (body.error) throw toError(method, body.error);
      return body.result as T;
    },
    async batch<T>(calls: readonly (readonly [string, readonly unknown[]])[]): Promise<T[]> {
      if (calls.length === 0) return [];
      const body = await send<T[]>(calls.map(([method, params]) => ({ jsonrpc: '2.0', id: nextId++, method, params })));
      const what = `batch of ${calls.length} (${[...new Set(calls.map(([method]) => method))].join(', ')})`;
      if (body.error) throw toError(what, body.error);
      if (!Array.isArray(body.result) || body.result.length !== calls.length)
        throw toError(what, { code: -32603, message: 'answered no list of results' });
      return body.result;
    },
  };
}

/** What differs between flashlog's EDR providers (the local executor's forks, the devnet's chain). */
export interface OpProviderSetup {
  readonly chainId: bigint;
  readonly coinbase: `0x${string}`;
  /** OP hardfork name for EDR ('isthmus'). */
  readonly hardfork: string;
  readonly initialBaseFeePerGas: bigint;
  readonly blockGasLimit?: bigint | undefined;
  /** A reverting eth_call is an error (with the revert data), as on a node, rather than a `0x` result. */
  readonly bailOnCallFailure: boolean;
  /** Several blocks may share one seconds timestamp. */
  readonly allowBlocksWithSameTimestamp: boolean;
  readonly genesisState: readonly AccountOverride[];
  /** A local chain from genesis, or a fork of `url` at `blockNumber`. */
  readonly network:
    | { readonly genesisBlockGasLimit: bigint; readonly genesisBlockTime: bigint }
    | { readonly url: string; readonly blockNumber: bigint; readonly cacheDir?: string | undefined };
  /** Whole states the provider caches (see withMaxCachedStates). */
  readonly maxCachedStates: number;
}

/**
 * EDR's one provider setup for flashlog: the OP chain type, automine off and a FIFO mempool (the
 * caller decides what is mined and when, in the order it sent), minimum gas price 0, the
 * coinbase given. A fork names the chain's hardfork from block 0: without `chainOverrides` EDR
 * refuses to execute on a chain id it does not know.
 */
export async function createOpProvider(setup: OpProviderSetup): Promise<Provider> {
  const { edr, context } = await edrContext();
  const network =
    'url' in setup.network
      ? {
          url: setup.network.url,
          blockNumber: setup.network.blockNumber,
          ...(setup.network.cacheDir ? { cacheDir: setup.network.cacheDir } : {}),
          chainOverrides: [
            {
              chainId: setup.chainId,
              name: `flashlog-${setup.chainId}`,
              hardforkActivationOverrides: [{ condition: { blockNumber: 0n }, hardfork: setup.hardfork }],
            },
          ],
        }
      : setup.network;
  return withMaxCachedStates(setup.maxCachedStates, () =>
    context.createProvider(
      edr.OP_CHAIN_TYPE,
      {
        allowBlocksWithSameTimestamp: setup.allowBlocksWithSameTimestamp,
        allowUnlimitedContractSize: false,
        bailOnCallFailure: setup.bailOnCallFailure,
        bailOnTransactionFailure: false,
        chainId: setup.chainId,
        networkId: setup.chainId,
        coinbase: Uint8Array.from(Buffer.from(setup.coinbase.slice(2), 'hex')),
        defaultTransactionGasLimit: 30_000_000n,
        genesisState: [...setup.genesisState],
        hardfork: setup.hardfork,
        initialBaseFeePerGas: setup.initialBaseFeePerGas,
        minGasPrice: 0n,
        mining: {
          autoMine: false,
          ...(setup.blockGasLimit ? { blockGasLimit: setup.blockGasLimit } : {}),
          memPool: { order: edr.MineOrdering.Fifo },
        },
        network,
        observability: {},
        ownedAccounts: [],
        precompileOverrides: [],
      } as Parameters<typeof context.createProvider>[1],
      { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
      { subscriptionCallback: () => {} },
      new edr.ContractDecoder(),
    ),
  );
}

let fullCollection: (() => void) | null | undefined;

/**
 * Frees the native memory of EDR providers nobody references any more, now.
 *
 * EDR has no way to close a provider (and no hardhat_reset on the OP chain type): its state is freed
 * when V8 collects the small JavaScript object in front of it. V8 does not know what that object
 * holds, so a dropped fork (hundreds of MB after a few minutes) can wait for minutes until the next
 * full collection, and forks pile up. One full collection after a fork is replaced (about once a
 * minute, tens of ms) frees it at once. Node offers `gc` only behind --expose-gc; setting the flag
 * at run time and reading `gc` from a fresh context is the documented way to reach it without it.
 */
export function releaseDroppedProviders(): void {
  if (fullCollection === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      fullCollection = runInNewContext('gc') as () => void;
    } catch {
      fullCollection = null;
    }
  }
  fullCollection?.();
}
