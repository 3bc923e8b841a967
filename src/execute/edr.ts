import { createOpProvider, edrCaller, type EdrCaller } from '../evm/edr.ts';
import { sequencerFeeVault } from '../op/predeploys.ts';

/**
 * The local executor's EDR forks: a provider forked from an upstream at the canonical parent, on
 * EDR's one provider setup (src/evm/edr.ts).
 */

/**
 * The local executor's bound on a fork's state cache. Between two touches of a state it goes back
 * to (the parent after its pins, which evm_revert restores; the parent debug_traceTransaction
 * replays from), a fork pushes the pins of one flashblock and one mined block: far fewer than 256.
 * The `storage` state diff also pushes one scratch block per new transaction (local-state-diff.ts),
 * but goes back to none of them: each is traced right after it is mined, then all are reverted.
 * The fork is replaced after 32 blocks anyway (local.ts); the bound keeps each fork smaller until then.
 */
export const FORK_MAX_CACHED_STATES = 256;

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
  const provider = await createOpProvider({
    chainId: options.chainId,
    coinbase: options.coinbase ?? sequencerFeeVault,
    hardfork: options.hardfork ?? 'isthmus',
    initialBaseFeePerGas: 0n,
    blockGasLimit: options.blockGasLimit,
    bailOnCallFailure: false,
    allowBlocksWithSameTimestamp: true,
    genesisState: [],
    network: { url: options.url, blockNumber: options.blockNumber },
    maxCachedStates: FORK_MAX_CACHED_STATES,
  });
  return edrCaller(provider);
}
