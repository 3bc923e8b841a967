import type { AssembledBlock } from '../chain/assemble.ts';
import { errorMessage } from '../errors.ts';
import type { AccountDiff } from '../records/blocks.ts';
import type { EdrCaller } from '../evm/edr.ts';
import { ExecutionError } from './execution-error.ts';

/** The fields of a mined block the local executor reads and checks. */
export interface MinedHeader {
  number: `0x${string}`;
  gasUsed: `0x${string}`;
  receiptsRoot: `0x${string}`;
  logsBloom: `0x${string}`;
  transactions: `0x${string}`[];
}

/** The environment of the next mined block, from the flashblock's `base`. */
export async function setEnv(caller: EdrCaller, block: AssembledBlock): Promise<void> {
  const header = block.header;
  await caller.call('hardhat_setCoinbase', [header.miner]);
  await caller.call('hardhat_setPrevRandao', [header.prevRandao]);
  await caller.call('evm_setBlockGasLimit', [header.gasLimit]);
  await caller.call('hardhat_setNextBlockBaseFeePerGas', [header.baseFeePerGas]);
  await caller.call('evm_setNextBlockTimestamp', [header.timestamp]);
}

/**
 * Sends the flashblock's new transactions to the mempool in one batch (one crossing into EDR).
 * A batch fails whole with EDR's error and without naming the transaction, so `oneByOne` (the
 * rebuild after a refusal) sends them singly to name the one refused.
 */
export async function sendAll(
  caller: EdrCaller,
  raws: readonly `0x${string}`[],
  block: AssembledBlock,
  from: number,
  oneByOne: boolean,
): Promise<void> {
  if (!oneByOne && raws.length > 1) {
    try {
      await caller.batch(raws.map((raw) => ['eth_sendRawTransaction', [raw]] as const));
      return;
    } catch (error) {
      throw new ExecutionError(
        `block ${block.blockNumber} index ${block.index}: one of transactions ${from}-${from + raws.length - 1} was refused by the engine: ${errorMessage(error)}`,
      );
    }
  }
  for (let i = 0; i < raws.length; i++) {
    try {
      await caller.call('eth_sendRawTransaction', [raws[i]]);
    } catch (error) {
      throw new ExecutionError(
        `block ${block.blockNumber} index ${block.index}: transaction ${from + i} (${block.transactions[from + i]?.hash}) was refused by the engine: ${errorMessage(error)}`,
      );
    }
  }
}

/** The fields where the mined block differs from what the feed says of the block so far. */
export function check(block: AssembledBlock, mined: MinedHeader): string[] {
  const failed: string[] = [];
  if (BigInt(mined.number) !== block.blockNumber) failed.push('number');
  if (mined.transactions.length !== block.transactions.length) failed.push('transactions');
  if (BigInt(mined.gasUsed) !== BigInt(block.header.gasUsed)) failed.push('gas_used');
  if (mined.receiptsRoot.toLowerCase() !== block.header.receiptsRoot.toLowerCase()) failed.push('receipts_root');
  return failed;
}

/** The block being executed on the fork. */
export interface Pending {
  readonly blockNumber: bigint;
  /** Transactions sent to the fork's mempool for this block (and in the snapshot). */
  txCount: number;
  /** Snapshot at the parent with the block's transactions so far in the mempool; null once mined for good. */
  snapshot: string | null;
  /** Accumulated state of every account the block touched. */
  diff: Map<string, AccountDiff>;
  /** The block as last mined with `txCount` transactions (a flashblock with none new mines nothing). */
  mined: MinedHeader | null;
}

/**
 * Mines the block so far: back to the snapshot at the parent, pin what EDR read from the remote
 * (`pin`), send the flashblock's new transactions, snapshot again, set the block's environment,
 * mine. `state` must hold the block's transactions so far in its snapshot.
 */
export async function mineBlockSoFar(
  caller: EdrCaller,
  block: AssembledBlock,
  state: Pending,
  attempt: number,
  pin: (caller: EdrCaller) => Promise<void>,
): Promise<MinedHeader> {
  if (state.snapshot) {
    // The snapshot is consumed by the revert; take it again afterwards.
    await caller.call('evm_revert', [state.snapshot]);
    state.snapshot = null;
  }
  await pin(caller);
  const raws = block.transactions.slice(state.txCount).map((tx) => tx.raw);
  await sendAll(caller, raws, block, state.txCount, attempt > 0);
  state.txCount = block.transactions.length;
  state.snapshot = await caller.call<string>('evm_snapshot');
  await setEnv(caller, block);
  await caller.call('evm_mine');
  return caller.call<MinedHeader>('eth_getBlockByNumber', ['latest', false]);
}
