import { errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { releaseDroppedProviders, type EdrCaller } from '../evm/edr.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import { createForkProvider } from './edr.ts';
import { ExecutionError } from './execution-error.ts';
import type { ForkCache } from './fork-cache.ts';
import { l1BlockAddress } from '../op/predeploys.ts';

/**
 * The local executor's fork of canonical state: opened at a canonical parent (waiting, bounded,
 * for the upstream to have it), replaced when the executor says so, the replaced one freed at
 * once (releaseDroppedProviders). Also the two things done to a fork between mines: pinning what
 * EDR read from the remote, and dropping snapshots.
 */
export interface Fork {
  readonly caller: EdrCaller;
  readonly forkedAt: bigint;
  /** Blocks mined on this fork, and transactions executed. */
  chained: number;
  transactions: number;
}

export interface ForkLifecycleOptions {
  readonly forkCache: ForkCache;
  readonly timeoutMs: number;
  readonly parentWaitMs: number;
  readonly hardfork?: string | undefined;
  readonly logger: Logger;
}

const L1_BLOCK = l1BlockAddress;
const hexNumber = (value: bigint | number) => `0x${value.toString(16)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createForkLifecycle(options: ForkLifecycleOptions) {
  const { forkCache } = options;
  let chainId: bigint | null = null;
  let fork: Fork | null = null;
  /** Forks made and not yet collected (the current one included): 1 when replaced forks are freed. */
  let alive = 0;
  const collected = new FinalizationRegistry<void>(() => {
    alive--;
  });
  let replacedSinceRelease = false;

  const upstreamClient = createUpstream(forkCache.url, {
    timeoutMs: options.timeoutMs,
    label: 'upstream RPC (through the fork cache)',
    namedErrors: true,
  });
  async function upstream<T>(method: string, params: unknown[]): Promise<T> {
    return (await upstreamClient.call(method, params)) as T;
  }

  /** Waits (bounded) for canonical `parent` upstream. */
  async function awaitParent(parent: bigint): Promise<void> {
    // An upstream that answers but lacks the parent yet is waited for; one that does not answer
    // fails the flashblock at once (ingest must not stall behind an outage).
    const deadline = Date.now() + options.parentWaitMs;
    for (;;) {
      let head: { number: string } | null;
      try {
        chainId ??= BigInt(await upstream<string>('eth_chainId', []));
        head = await upstream<{ number: string } | null>('eth_getBlockByNumber', [hexNumber(parent), false]);
      } catch (error) {
        throw new ExecutionError(`cannot fork at block ${parent}: ${errorMessage(error)}`, { retryable: true, cause: error });
      }
      if (head) return;
      if (Date.now() > deadline)
        throw new ExecutionError(`canonical block ${parent} did not appear upstream within ${options.parentWaitMs} ms`, {
          retryable: true,
        });
      await sleep(100);
    }
  }

  /** A fresh fork at canonical `parent` in place of the current one (dropped first, freed after). */
  async function replace(parent: bigint, reason: string): Promise<Fork> {
    await awaitParent(parent);
    const replaced = fork !== null;
    fork = null;
    const caller = await createForkProvider({
      url: forkCache.url,
      chainId: chainId!,
      blockNumber: parent,
      ...(options.hardfork ? { hardfork: options.hardfork } : {}),
    });
    // EDR reads the L1Block predeploy's fee parameters from the remote for every transaction
    // (6 account and 5 storage reads per tx, measured) unless the account is local. Writing
    // the slots back with their own values makes it local: mining 200 txs drops from ~1 s to ms.
    for (let slot = 0; slot <= 8; slot++) {
      const key = hexNumber(slot);
      await caller.call('hardhat_setStorageAt', [L1_BLOCK, key, await caller.call<string>('eth_getStorageAt', [L1_BLOCK, key, 'latest'])]);
    }
    forkCache.drainRequested();
    fork = { caller, forkedAt: parent, chained: 0, transactions: 0 };
    alive++;
    collected.register(caller);
    if (replaced) replacedSinceRelease = true;
    options.logger.debug({ parent: Number(parent), reason }, 'executor forked from canonical state');
    return fork;
  }

  /**
   * EDR keeps what it read from the remote in the state that evm_revert rolls back, so every
   * re-mine of the block read the same accounts and slots again (about 120 requests a
   * flashblock on the devnet workload, measured). Writing them back with their current value,
   * outside any snapshot, makes them local for good. An account EDR asks the remote for is
   * unmodified since the fork, so its value at the parent is the remote one: the write is exact.
   */
  async function pinRequested(caller: EdrCaller): Promise<void> {
    const { accounts, slots } = forkCache.drainRequested();
    const addresses = [...accounts];
    const cells = [...slots].map((entry) => entry.split('|') as [string, string]);
    // Two batches: every current value, then every write.
    const values = await caller.batch<string>([
      ...addresses.map((address) => ['eth_getBalance', [address, 'latest']] as const),
      ...cells.map(([address, slot]) => ['eth_getStorageAt', [address, slot, 'latest']] as const),
    ]);
    await caller.batch([
      ...addresses.map((address, i) => ['hardhat_setBalance', [address, values[i]]] as const),
      ...cells.map(([address, slot], i) => ['hardhat_setStorageAt', [address, slot, values[addresses.length + i]]] as const),
    ]);
  }

  /**
   * Drops every snapshot EDR holds without changing state. EDR's evm_revert removes every snapshot
   * from the given id on and restores only if that id exists; ids start at 1, so 0 restores nothing.
   */
  async function releaseSnapshots(caller: EdrCaller): Promise<void> {
    await caller.call('evm_revert', ['0x0']);
  }

  return {
    current: (): Fork | null => fork,
    replace,
    /**
     * Frees the forks replaced since the last call, now (releaseDroppedProviders). Called by the
     * executor before a flashblock, not in `replace`: there the frames that made the replacement
     * (the executor's block preparation, a rebuild's first attempt) still hold the old fork, and
     * a full collection then leaves it for the next one, minutes later.
     */
    releaseReplaced(): void {
      if (!replacedSinceRelease) return;
      replacedSinceRelease = false;
      releaseDroppedProviders();
    },
    /** Forks not yet collected, the current one included. */
    alive: (): number => alive,
    pinRequested,
    releaseSnapshots,
    drop(): void {
      fork = null;
    },
  };
}
