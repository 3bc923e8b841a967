import { createBlock, createBlockHeader, genWithdrawalsTrieRoot, type BlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { rulesAt, type RollupConfig } from '../op/rollup-config.ts';
import type { BlockHeader as HeaderFields } from '../op/header.ts';
import { Account, createAddressFromString, hexToBytes, type Address, type Withdrawal } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import type { Hex } from 'viem';
import { BlockNumberOrderError, BlockTimestampOrderError, TooManyBlocksError } from '../errors.ts';
import type { StateOverrides } from '../schemas/state-overrides.ts';
import { ForkedState, type ForkSource } from './fork-state.ts';
import type { BlockOverrides, SimulateCall, SimulatePayload } from './payload.ts';
import { PrecompileMoves, applyOverrides } from './precompile-moves.ts';
import { simulatedDaFootprint } from './da-footprint.ts';
import { opBlock, opNextBaseFee } from './op-fees.ts';
import { finishBlock, ZERO_HASH_BYTES, type JsonObject } from './simulated-block.ts';
import { runCalls } from './simulated-call.ts';

/**
 * eth_simulateV1 (execution-apis `src/eth/execute.yaml`, `docs-api/docs/ethsimulatev1-notes.mdx`):
 * a sequence of blocks, each with block overrides, state overrides and calls, executed one after
 * the other on top of a base block's state (read lazily through a {@link ForkSource}), with
 * nothing committed. ethereumjs runs the EVM; this module does what the specification adds:
 * block sequencing, defaults, validation and its error codes, precompile moves, ETH transfer logs
 * and the result blocks.
 *
 * Written here because no npm engine implements eth_simulateV1 (EDR does not; see the research
 * note evm-simulate.md).
 */

/**
 * The block the simulation starts from: its header fields as the node reports them (the London and
 * Cancun fields required; extraData, an OP Stack chain's EIP-1559 parameters from Holocene on, optional).
 */
export interface SimulationBase
  extends
    Pick<HeaderFields, 'number' | 'timestamp' | 'gasLimit' | 'gasUsed' | 'miner' | 'difficulty'>,
    Required<Pick<HeaderFields, 'baseFeePerGas' | 'excessBlobGas' | 'blobGasUsed'>>,
    Partial<Pick<HeaderFields, 'extraData'>> {
  readonly hash: Hex;
  /** An OP Stack chain's: its first transaction, the L1-info deposit (a simulated Jovian block's DA footprint reads its scalar). */
  readonly l1InfoTx?: Hex | undefined;
}

export interface SimulationContext {
  readonly base: SimulationBase;
  readonly source: ForkSource;
  /** The hash of a canonical block at or below the base (for BLOCKHASH). */
  blockHash(number: bigint): Promise<Hex>;
  /**
   * The chain's rules. With `scheduled`, the hardfork of each simulated block follows the
   * common's schedule by number and time (a chain from a genesis file); otherwise it stays fixed.
   */
  readonly common: Common;
  readonly scheduled: boolean;
  /** Precompiles the chain has beyond its hardfork's (address -> ethereumjs precompile function). */
  readonly precompiles?: ReadonlyMap<string, unknown>;
  /** An OP Stack chain's rollup config: its calls pay the L1 and operator fees, its base fee is the chain's (op-fees.ts). */
  readonly rollup?: RollupConfig | undefined;
  /** State laid over the base before the first block (the pre-confirmed diff with `pending`). */
  readonly prestate?: StateOverrides;
  /** Gas all calls of the simulation may use together (geth's RPC gas cap). */
  readonly gasCap: bigint;
  /** Date.now() after which no further call starts. */
  readonly deadline?: number;
  readonly timeoutMs?: number;
}

/** execution-apis: at most 256 simulated blocks per request. */
export const MAX_SIMULATED_BLOCKS = 256n;
/** Seconds between simulated blocks whose time is not given (execution-apis notes; geth). */
export const BLOCK_TIME_SECONDS = 12n;
const EMPTY_REQUESTS_HASH = hexToBytes('0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');

interface PlannedBlock {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly entry:
    | { index: number; blockOverrides?: BlockOverrides | null; stateOverrides?: StateOverrides | null; calls?: SimulateCall[] | null }
    | undefined;
}

/**
 * Runs the simulation and returns one block object per simulated block (gap blocks included),
 * each with its `calls`. Request-level problems are JsonRpcErrors with the specification's codes.
 */
export async function simulate(payload: SimulatePayload, ctx: SimulationContext): Promise<JsonObject[]> {
  const plan = planBlocks(payload, ctx.base);
  const validation = payload.validation === true;
  const state = new ForkedState(ctx.source);
  const hashes = new Map<bigint, Hex>();
  const blockchain = {
    async getBlock(number: number) {
      const n = BigInt(number);
      const hash = hashes.get(n) ?? (await ctx.blockHash(n));
      return { hash: () => hexToBytes(hash) };
    },
    async putBlock() {},
    shallowCopy() {
      return blockchain;
    },
  };
  const common = ctx.common.copy();
  if (ctx.scheduled) common.setHardforkBy({ blockNumber: ctx.base.number, timestamp: ctx.base.timestamp });
  if (ctx.prestate) await applyOverrides(state, ctx.prestate, new PrecompileMoves(common), false);
  let parent = baseHeader(ctx.base, common);
  let coinbase = createAddressFromString(ctx.base.miner);
  let gasLimit = ctx.base.gasLimit;
  let budget = ctx.gasCap;
  const extra = ctx.precompiles ?? new Map<string, unknown>();
  let vm = await createVM({
    common,
    stateManager: state,
    blockchain,
    evmOpts: { customPrecompiles: new PrecompileMoves(common, extra).custom() },
  });
  let moved = false;
  const blocks: JsonObject[] = [];

  for (const planned of plan) {
    if (ctx.scheduled) common.setHardforkBy({ blockNumber: planned.number, timestamp: planned.timestamp });
    const overrides = planned.entry?.blockOverrides ?? {};
    // Precompile moves hold for their block only: each block starts from the chain's own set (geth).
    const moves = new PrecompileMoves(common, extra);
    await applyOverrides(state, planned.entry?.stateOverrides ?? {}, moves);
    if (moves.changed || moved)
      vm = await createVM({ common, stateManager: state, blockchain, evmOpts: { customPrecompiles: moves.custom() } });
    moved = moves.changed;
    // The fee recipient and gas limit carry over from the block before (geth's header template).
    if (overrides.feeRecipient !== undefined) coinbase = createAddressFromString(overrides.feeRecipient);
    if (overrides.gasLimit !== undefined) gasLimit = BigInt(overrides.gasLimit);
    const { headerFields, baseFeePerGas, withdrawals } = await blockFields({
      rollup: ctx.rollup,
      planned,
      overrides,
      parent,
      parentHash: parentHashOf(parent, hashes, ctx.base),
      base: ctx.base,
      common,
      gasLimit,
      coinbase,
      validation,
    });
    const header = createBlockHeader(headerFields, { common, skipConsensusFormatValidation: true });
    const block = createBlock({ header }, { common, skipConsensusFormatValidation: true });
    // Without validation a call may pay less than an overridden base fee (geth's NoBaseFee): it runs in this twin at 0.
    const freeBlock = common.isActivatedEIP(1559)
      ? createBlock(
          { header: createBlockHeader({ ...headerFields, baseFeePerGas: 0n }, { common, skipConsensusFormatValidation: true }) },
          { common, skipConsensusFormatValidation: true },
        )
      : block;

    const { executed, gasUsed, blobGasUsed } = await runCalls(planned.entry?.calls ?? [], {
      vm,
      state,
      common,
      header,
      block,
      freeBlock,
      moves,
      coinbase,
      baseFeePerGas,
      flags: { validation, traceTransfers: payload.traceTransfers === true, baseFeeOverridden: overrides.baseFeePerGas !== undefined },
      budget,
      where: `params[0].blockStateCalls[${planned.entry?.index ?? 0}]`,
      limit: ctx,
      op: ctx.rollup ? await opBlock(ctx.rollup, planned.timestamp, state) : undefined,
    });
    // every call's gas came out of the budget, as it comes out of the block
    budget -= gasUsed;
    for (const w of withdrawals) {
      const account = (await state.getAccount(w.address)) ?? new Account();
      account.balance += w.amount * 1_000_000_000n;
      await state.putAccount(w.address, account);
    }

    const finished = await finishBlock({
      headerFields,
      common,
      executed,
      gasUsed,
      blobGasUsed:
        ctx.rollup && rulesAt(ctx.rollup, planned.timestamp).active('jovian')
          ? simulatedDaFootprint(
              ctx.base.l1InfoTx,
              executed.map(({ tx }) => tx),
            )
          : blobGasUsed,
      withdrawals,
      fullTransactions: payload.returnFullTransactions === true,
    });
    hashes.set(planned.number, finished.hash);
    blocks.push(finished.json);
    parent = finished.header;
  }
  return blocks;
}

/** A simulated block's header fields before its calls run (geth's header template), its base fee and its withdrawals. */
async function blockFields(input: {
  rollup: RollupConfig | undefined;
  planned: PlannedBlock;
  overrides: BlockOverrides;
  parent: BlockHeader;
  parentHash: Uint8Array;
  base: SimulationBase;
  common: Common;
  gasLimit: bigint;
  coinbase: Address;
  validation: boolean;
}) {
  const { planned, overrides, parent, common } = input;
  const merged = common.gteHardfork('paris');
  const baseFeePerGas =
    overrides.baseFeePerGas !== undefined
      ? BigInt(overrides.baseFeePerGas)
      : input.validation && common.isActivatedEIP(1559)
        ? input.rollup
          ? opNextBaseFee(input.rollup, parent, input.base.extraData ?? '0x', planned.timestamp)
          : parent.calcNextBaseFee()
        : 0n;
  const withdrawals = (overrides.withdrawals ?? []).map((w) => ({
    index: BigInt(w.index),
    validatorIndex: BigInt(w.validatorIndex),
    address: createAddressFromString(w.address),
    amount: BigInt(w.amount),
  }));
  const headerFields = {
    parentHash: input.parentHash,
    number: planned.number,
    timestamp: planned.timestamp,
    gasLimit: input.gasLimit,
    coinbase: input.coinbase,
    mixHash: overrides.prevRandao !== undefined ? hexToBytes(overrides.prevRandao as Hex) : ZERO_HASH_BYTES,
    difficulty: merged ? 0n : input.base.difficulty,
    baseFeePerGas: common.isActivatedEIP(1559) ? baseFeePerGas : undefined,
    excessBlobGas: common.isActivatedEIP(4844) ? parent.calcNextExcessBlobGas(common) : undefined,
    blobGasUsed: common.isActivatedEIP(4844) ? 0n : undefined,
    parentBeaconBlockRoot: common.isActivatedEIP(4788) ? ZERO_HASH_BYTES : undefined,
    requestsHash: common.isActivatedEIP(7685) ? EMPTY_REQUESTS_HASH : undefined,
    withdrawalsRoot: common.isActivatedEIP(4895) ? await genWithdrawalsTrieRoot(withdrawals.map(toWithdrawal)) : undefined,
  };
  return { headerFields, baseFeePerGas, withdrawals };
}

function planBlocks(payload: SimulatePayload, base: SimulationBase): PlannedBlock[] {
  const plan: PlannedBlock[] = [];
  let number = base.number;
  let timestamp = base.timestamp;
  for (const [index, entry] of payload.blockStateCalls.entries()) {
    const overrides = entry.blockOverrides ?? {};
    const next = overrides.number !== undefined ? BigInt(overrides.number) : number + 1n;
    if (next <= number) throw new BlockNumberOrderError(`block numbers must be in order: ${next} <= ${number}`);
    if (next - base.number > MAX_SIMULATED_BLOCKS) throw new TooManyBlocksError('too many blocks');
    for (let gap = number + 1n; gap < next; gap++) {
      timestamp += BLOCK_TIME_SECONDS;
      plan.push({ number: gap, timestamp, entry: undefined });
    }
    const time = overrides.time !== undefined ? BigInt(overrides.time) : timestamp + BLOCK_TIME_SECONDS;
    if (time <= timestamp) throw new BlockTimestampOrderError(`block timestamps must be in order: ${time} <= ${timestamp}`);
    number = next;
    timestamp = time;
    plan.push({ number, timestamp, entry: { ...entry, index, stateOverrides: lowerKeys(entry.stateOverrides ?? {}) } });
  }
  return plan;
}

function lowerKeys(overrides: StateOverrides): StateOverrides {
  return Object.fromEntries(Object.entries(overrides).map(([key, value]) => [key.toLowerCase(), value]));
}

function baseHeader(base: SimulationBase, common: Common): BlockHeader {
  return createBlockHeader(
    {
      number: base.number,
      timestamp: base.timestamp,
      gasLimit: base.gasLimit,
      gasUsed: base.gasUsed,
      baseFeePerGas: common.isActivatedEIP(1559) ? base.baseFeePerGas : undefined,
      excessBlobGas: common.isActivatedEIP(4844) ? base.excessBlobGas : undefined,
      blobGasUsed: common.isActivatedEIP(4844) ? base.blobGasUsed : undefined,
    },
    { common, skipConsensusFormatValidation: true },
  );
}

function parentHashOf(parent: BlockHeader, hashes: Map<bigint, Hex>, base: SimulationBase): Uint8Array {
  return hexToBytes(parent.number === base.number ? base.hash : hashes.get(parent.number)!);
}

const toWithdrawal = (w: { index: bigint; validatorIndex: bigint; address: Address; amount: bigint }) => w as unknown as Withdrawal;
