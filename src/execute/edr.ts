import type { Provider } from '@nomicfoundation/edr';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

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

export class EdrError extends Error {
  readonly rpcCode: number;
  constructor(method: string, rpcCode: number, message: string) {
    super(`EDR ${method}: ${message}`);
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

/**
 * The local executor's bound on a fork's state cache. Between two touches of a state it goes back
 * to (the parent after its pins, which evm_revert restores; the parent debug_traceTransaction
 * replays from), a fork pushes the pins of one flashblock and one mined block: far fewer than 256.
 * The `storage` state diff also pushes one scratch block per new transaction (local-state-diff.ts),
 * but goes back to none of them: each is traced right after it is mined, then all are reverted.
 * The fork is replaced after 32 blocks anyway (local.ts); the bound keeps each fork smaller until then.
 */
export const FORK_MAX_CACHED_STATES = 256;

const hexBigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? `0x${value.toString(16)}` : value);

export function edrCaller(provider: Provider): EdrCaller {
  let nextId = 1;
  return {
    async call<T>(method: string, params: readonly unknown[] = []): Promise<T> {
      const response = await provider.handleRequest(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }, hexBigints));
      const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
        result?: T;
        error?: { code: number; message: string };
      };
      if (body.error) throw new EdrError(method, body.error.code, body.error.message);
      return body.result as T;
    },
    async batch<T>(calls: readonly (readonly [string, readonly unknown[]])[]): Promise<T[]> {
      if (calls.length === 0) return [];
      const request = calls.map(([method, params]) => ({ jsonrpc: '2.0', id: nextId++, method, params }));
      const response = await provider.handleRequest(JSON.stringify(request, hexBigints));
      const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
        result?: T[];
        error?: { code: number; message: string };
      };
      const methods = [...new Set(calls.map(([method]) => method))].join(', ');
      if (body.error) throw new EdrError(`batch of ${calls.length} (${methods})`, body.error.code, body.error.message);
      if (!Array.isArray(body.result) || body.result.length !== calls.length)
        throw new EdrError(`batch of ${calls.length} (${methods})`, -32603, 'answered no list of results');
      return body.result;
    },
  };
}

export interface ForkOptions {
  /** The JSON-RPC URL EDR reads remote state from. */
  readonly url: string;
  readonly chainId: bigint;
  /** The canonical block to fork at: the parent of the first block executed. */
  readonly blockNumber: bigint;
  /** OP hardfork name for EDR ('isthmus'; 'jovian' is accepted in chain overrides). */
  readonly hardfork?: string;
  readonly coinbase?: `0x${string}`;
  readonly blockGasLimit?: bigint;
}

/**
 * A provider forked from `url` at `blockNumber`, automine off, FIFO mempool: transactions are
 * mined in the order they were sent, so the mined block holds them in feed order.
 * Without `chainOverrides` EDR refuses to execute on a chain id it does not know.
 */
export async function createForkProvider(options: ForkOptions): Promise<EdrCaller> {
  const { edr, context } = await edrContext();
  const hardfork = options.hardfork ?? 'isthmus';
  const hex = (value: string) => Uint8Array.from(Buffer.from(value.slice(2), 'hex'));
  const provider = await withMaxCachedStates(FORK_MAX_CACHED_STATES, () =>
    context.createProvider(
      edr.OP_CHAIN_TYPE,
      {
        allowBlocksWithSameTimestamp: true,
        allowUnlimitedContractSize: false,
        bailOnCallFailure: false,
        bailOnTransactionFailure: false,
        chainId: options.chainId,
        networkId: options.chainId,
        coinbase: hex(options.coinbase ?? '0x4200000000000000000000000000000000000011'),
        defaultTransactionGasLimit: 30_000_000n,
        genesisState: [],
        hardfork,
        initialBaseFeePerGas: 0n,
        minGasPrice: 0n,
        mining: {
          autoMine: false,
          ...(options.blockGasLimit ? { blockGasLimit: options.blockGasLimit } : {}),
          memPool: { order: edr.MineOrdering.Fifo },
        },
        network: {
          url: options.url,
          blockNumber: options.blockNumber,
          chainOverrides: [
            {
              chainId: options.chainId,
              name: `flashlog-${options.chainId}`,
              hardforkActivationOverrides: [{ condition: { blockNumber: 0n }, hardfork }],
            },
          ],
        },
        observability: {},
        ownedAccounts: [],
        precompileOverrides: [],
      } as Parameters<typeof context.createProvider>[1],
      { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
      { subscriptionCallback: () => {} },
      new edr.ContractDecoder(),
    ),
  );
  return edrCaller(provider);
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
