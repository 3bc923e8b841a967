import { createBlock, createBlockHeader, genTransactionsTrieRoot, genWithdrawalsTrieRoot, type BlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { getActivePrecompiles, type EVM, type Message, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { createTx, paramsTx, type TypedTransaction } from '@ethereumjs/tx';
import { Account, KECCAK256_RLP, bytesToHex, createAddressFromString, hexToBytes, type Address, type Withdrawal } from '@ethereumjs/util';
import { createVM, encodeReceipt, runTx, type RunTxResult } from '@ethereumjs/vm';
import { decodeErrorResult, keccak256, padHex, toHex, type Hex } from 'viem';
import {
  BaseFeeTooLowError,
  BlockGasLimitReachedError,
  BlockNumberOrderError,
  BlockTimestampOrderError,
  ExecutionTimeoutError,
  InsufficientFundsError,
  InternalError,
  IntrinsicGasTooLowError,
  InvalidParamsError,
  JsonRpcError,
  MaxInitCodeSizeError,
  NonceTooHighError,
  NonceTooLowError,
  PrecompileMovedToItselfError,
  ServerError,
  TooManyBlocksError,
} from '../errors.ts';
import type { AccountOverride, StateOverrides } from '../schemas/state-overrides.ts';
import { ForkedState, type ForkSource } from './fork-state.ts';
import type { BlockOverrides, SimulateCall, SimulatePayload } from './payload.ts';
import { createTransferTracer, type TracedLog } from './transfers.ts';

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

/** The block the simulation starts from: its header fields as the node reports them. */
export interface SimulationBase {
  readonly number: bigint;
  readonly hash: Hex;
  readonly timestamp: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  readonly baseFeePerGas: bigint;
  readonly excessBlobGas: bigint;
  readonly blobGasUsed: bigint;
  readonly miner: Hex;
  readonly difficulty: bigint;
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

const ZERO_ADDRESS = createAddressFromString(`0x${'00'.repeat(20)}`);
const ZERO_HASH_BYTES = new Uint8Array(32);
const EMPTY_REQUESTS_HASH = hexToBytes('0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
const MAX_NONCE = 2n ** 64n - 1n;
/** EIP-7825's per-transaction cap does not bind simulated calls (geth lets them use the RPC gas cap). */
const txParams = { ...paramsTx, 7825: { ...(paramsTx as Record<number, object>)[7825], maxTransactionGasLimit: '0xffffffffffffffff' } };

type JsonObject = Record<string, unknown>;

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
    const merged = common.gteHardfork('paris');

    const baseFeePerGas =
      overrides.baseFeePerGas !== undefined
        ? BigInt(overrides.baseFeePerGas)
        : validation && common.isActivatedEIP(1559)
          ? parent.calcNextBaseFee()
          : 0n;
    const withdrawals = (overrides.withdrawals ?? []).map((w) => ({
      index: BigInt(w.index),
      validatorIndex: BigInt(w.validatorIndex),
      address: createAddressFromString(w.address),
      amount: BigInt(w.amount),
    }));
    const headerFields = {
      parentHash: parentHashOf(parent, hashes, ctx.base),
      number: planned.number,
      timestamp: planned.timestamp,
      gasLimit,
      coinbase,
      mixHash: overrides.prevRandao !== undefined ? hexToBytes(overrides.prevRandao as Hex) : ZERO_HASH_BYTES,
      difficulty: merged ? 0n : ctx.base.difficulty,
      baseFeePerGas: common.isActivatedEIP(1559) ? baseFeePerGas : undefined,
      excessBlobGas: common.isActivatedEIP(4844) ? parent.calcNextExcessBlobGas(common) : undefined,
      blobGasUsed: common.isActivatedEIP(4844) ? 0n : undefined,
      parentBeaconBlockRoot: common.isActivatedEIP(4788) ? ZERO_HASH_BYTES : undefined,
      requestsHash: common.isActivatedEIP(7685) ? EMPTY_REQUESTS_HASH : undefined,
      withdrawalsRoot: common.isActivatedEIP(4895) ? await genWithdrawalsTrieRoot(withdrawals.map(toWithdrawal)) : undefined,
    };
    const header = createBlockHeader(headerFields, { common, skipConsensusFormatValidation: true });
    const block = createBlock({ header }, { common, skipConsensusFormatValidation: true });
    // Without validation a call may pay less than an overridden base fee (geth's NoBaseFee): it runs in this twin at 0.
    const freeBlock = common.isActivatedEIP(1559)
      ? createBlock(
          { header: createBlockHeader({ ...headerFields, baseFeePerGas: 0n }, { common, skipConsensusFormatValidation: true }) },
          { common, skipConsensusFormatValidation: true },
        )
      : block;

    const executed: Executed[] = [];
    const logCounter = { next: 0 };
    let gasUsed = 0n;
    let blobGasUsed = 0n;
    for (const [index, call] of (planned.entry?.calls ?? []).entries()) {
      if (ctx.deadline !== undefined && Date.now() > ctx.deadline) {
        throw new ExecutionTimeoutError(
          `eth_simulateV1: execution took longer than the ${ctx.timeoutMs ?? 0} ms limit (--call-timeout-ms)`,
        );
      }
      const blockGasLeft = header.gasLimit - gasUsed;
      const where = `params[0].blockStateCalls[${planned.entry?.index ?? 0}].calls[${index}]`;
      const tx = await buildTx(call, { state, common, budget, blockGasLeft, chainId: common.chainId(), where });
      if (tx.gasLimit > blockGasLeft) {
        throw new BlockGasLimitReachedError(`block gas limit reached: ${tx.gasLimit} > ${blockGasLeft}`);
      }
      const from = createAddressFromString(call.from ?? ZERO_ADDRESS.toString());
      await checkCall(tx, from, { state, validation, baseFeePerGas, callIndex: index });
      const free = !validation && overrides.baseFeePerGas !== undefined && feeCap(tx) < baseFeePerGas;
      const evm = vm.evm as EVM;
      const tracer = payload.traceTransfers === true ? createTransferTracer(evm, logCounter) : undefined;
      state.maskSenderCode(from);
      const unmask = (message: Message) => {
        state.unmaskSender();
        if (message.depth === 0) warmAsGeth(evm, moves, tx, from, coinbase);
      };
      evm.events.on('beforeMessage', unmask);
      let result: RunTxResult;
      try {
        result = await runTx(vm, {
          tx,
          block: free ? freeBlock : block,
          skipNonce: true,
          skipBalance: false,
          skipBlockGasLimitValidation: true,
          skipHardForkValidation: true,
          blockGasUsed: gasUsed,
        });
      } catch (error) {
        throw txError(error, tx, from);
      } finally {
        evm.events.off('beforeMessage', unmask);
        state.unmaskSender();
        tracer?.stop();
      }
      gasUsed += result.totalGasSpent;
      blobGasUsed += result.blobGasUsed ?? 0n;
      budget -= result.totalGasSpent;
      const real = result.execResult.logs ?? [];
      const traced =
        tracer?.logs(real) ??
        real.map(([address, topics, data]) => ({
          address: bytesToHex(address) as Hex,
          topics: topics.map((t) => bytesToHex(t) as Hex),
          data: bytesToHex(data) as Hex,
          logIndex: logCounter.next++,
        }));
      executed.push({ tx, from, result, logs: traced });
    }
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
      blobGasUsed,
      withdrawals,
      fullTransactions: payload.returnFullTransactions === true,
    });
    hashes.set(planned.number, finished.hash);
    blocks.push(finished.json);
    parent = finished.header;
  }
  return blocks;
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

/**
 * Precompiles as one simulated block sees them, as geth keeps them: `movePrecompileToAddress`
 * takes the precompile at an address and serves it at another (a later move to the same address
 * wins), and any other override of a precompile's address removes the precompile there. A class
 * for its private state, like the EVM it configures.
 */
class PrecompileMoves {
  readonly #active: Map<string, unknown>;
  readonly #extra: Map<string, unknown>;
  readonly #moved = new Map<string, { from: string; fn: unknown }>();
  readonly #vacated = new Set<string>();

  constructor(common: Common, extra: ReadonlyMap<string, unknown> = new Map()) {
    this.#extra = new Map([...extra].map(([address, fn]) => [address.toLowerCase(), fn]));
    this.#active = new Map([...getActivePrecompiles(common).entries()].map(([key, fn]) => [`0x${key}`.toLowerCase(), fn]));
    for (const [address, fn] of this.#extra) if (!this.#active.has(address)) this.#active.set(address, fn);
  }

  /** The precompile served at an address now, if any. */
  at(address: string): unknown {
    return this.#moved.get(address)?.fn ?? (this.#vacated.has(address) ? undefined : this.#active.get(address));
  }

  isDestination(address: string): boolean {
    return this.#moved.has(address);
  }

  move(from: string, to: string): void {
    const fn = this.at(from);
    this.#moved.delete(from);
    this.#vacated.add(from);
    this.#moved.set(to, { from, fn });
    this.#vacated.delete(to);
  }

  vacate(address: string): void {
    this.#moved.delete(address);
    this.#vacated.add(address);
  }

  get changed(): boolean {
    return this.#moved.size > 0 || this.#vacated.size > 0;
  }

  /** Where the moved precompiles now live (warm only if the transaction names them, as in geth). */
  destinations(): string[] {
    return [...this.#moved.keys()];
  }

  /** The chain's own precompile addresses (warm for every transaction, EIP-2929, even when vacated). */
  vacated(): string[] {
    return [...this.#vacated];
  }

  /** ethereumjs `customPrecompiles`: the chain's extra precompiles, the moves, the removals. */
  custom() {
    const out: { address: Address; function?: (input: PrecompileInput) => Promise<ExecResult> | ExecResult }[] = [];
    for (const address of this.#vacated) out.push({ address: createAddressFromString(address) });
    for (const [address, fn] of this.#extra) {
      if (!this.#vacated.has(address) && !this.#moved.has(address))
        out.push({ address: createAddressFromString(address), function: fn as (input: PrecompileInput) => ExecResult });
    }
    for (const [address, { fn }] of this.#moved)
      out.push({ address: createAddressFromString(address), function: fn as (input: PrecompileInput) => ExecResult });
    return out as never;
  }
}

/**
 * EIP-2929 warm addresses as geth has them when precompiles moved: the chain's own precompile
 * addresses stay warm, the addresses precompiles moved to are warm only if the transaction names
 * them (ethereumjs warms its live precompile set instead). Runs as the transaction's first frame
 * starts, after ethereumjs has warmed its set.
 */
function warmAsGeth(evm: EVM, moves: PrecompileMoves, tx: TypedTransaction, from: Address, coinbase: Address): void {
  if (!moves.changed || !evm.common.isActivatedEIP(2929)) return;
  const journal = evm.journal as unknown as { addAlwaysWarmAddress(address: string): void; alwaysWarmJournal: Map<string, Set<string>> };
  for (const address of moves.vacated()) journal.addAlwaysWarmAddress(address.slice(2));
  const named = new Set<string | undefined>([
    tx.to?.toString(),
    from.toString(),
    coinbase.toString(),
    ...('accessList' in tx ? (tx.accessList as [Uint8Array, Uint8Array[]][]).map(([a]) => bytesToHex(a)) : []),
  ]);
  for (const address of moves.destinations()) if (!named.has(address)) journal.alwaysWarmJournal.delete(address.slice(2));
}

/**
 * Lays state overrides over the state. The caller's overrides also act on precompiles, with
 * geth's checks (request-level -32000 errors); the pre-confirmed diff (`asUser` false) is chain
 * state and never removes a precompile.
 */
async function applyOverrides(state: ForkedState, overrides: StateOverrides, moves: PrecompileMoves, asUser = true): Promise<void> {
  const named = new Set(Object.keys(overrides).map((key) => key.toLowerCase()));
  for (const [key, override] of Object.entries(overrides)) {
    const address = key.toLowerCase();
    if (asUser) {
      if (moves.isDestination(address)) throw new ServerError(`account ${address} has already been overridden by a precompile`);
      const isPrecompile = moves.at(address) !== undefined;
      const to = override.movePrecompileToAddress?.toLowerCase();
      if (to !== undefined) {
        if (!isPrecompile) throw new ServerError(`account ${address} is not a precompile`);
        // the specification's -38022; geth answers this case -32000 "is already overridden"
        if (to === address)
          throw new PrecompileMovedToItselfError(`account ${address} is moved to itself (movePrecompileToAddress references itself)`);
        if (named.has(to)) throw new ServerError(`account ${to} is already overridden`);
        moves.move(address, to);
      } else if (isPrecompile) {
        moves.vacate(address);
      }
    }
    await applyAccount(state, createAddressFromString(address), override);
  }
}

async function applyAccount(state: ForkedState, address: Address, override: AccountOverride): Promise<void> {
  if (override.code !== undefined) await state.putCode(address, hexToBytes(override.code as Hex));
  if (override.balance !== undefined || override.nonce !== undefined) {
    const account = (await state.getAccount(address)) ?? new Account();
    if (override.balance !== undefined) account.balance = BigInt(override.balance);
    if (override.nonce !== undefined) account.nonce = BigInt(override.nonce);
    await state.putAccount(address, account);
  }
  if (override.state) {
    if ((await state.getAccount(address)) === undefined) await state.putAccount(address, new Account());
    await state.clearStorage(address);
  }
  for (const [slot, value] of Object.entries(override.state ?? override.stateDiff ?? {})) {
    await state.putStorage(address, hexToBytes(slot as Hex), unpadded(hexToBytes(value as Hex)));
  }
}

function unpadded(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

interface TxContext {
  readonly state: ForkedState;
  readonly common: Common;
  readonly budget: bigint;
  readonly blockGasLeft: bigint;
  readonly chainId: bigint;
  /** The call's place in the request, for errors: `params[0].blockStateCalls[0].calls[1]`. */
  readonly where: string;
}

/**
 * The transaction a call stands for, as geth builds it: a legacy transaction when `gasPrice` is
 * given, else by its fields (authorization list: 0x4, blob hashes: 0x3, otherwise 0x2); the
 * nonce defaults to the sender's, the gas to what is left of the gas budget and the block, and
 * every fee to 0. It is unsigned (v = r = s = 0) and runs as its `from`.
 */
async function buildTx(call: SimulateCall, ctx: TxContext): Promise<TypedTransaction> {
  const from = createAddressFromString(call.from ?? ZERO_ADDRESS.toString());
  // an account nonce past 2^64-1 wraps to 0, as geth's uint64 does
  const nonce = call.nonce !== undefined ? BigInt(call.nonce) : ((await ctx.state.getAccount(from))?.nonce ?? 0n) & MAX_NONCE;
  const gasLeft = ctx.budget < ctx.blockGasLeft ? ctx.budget : ctx.blockGasLeft;
  // geth checks a call's own gas against the block before the budget lowers it
  if (call.gas !== undefined && BigInt(call.gas) > ctx.blockGasLeft) {
    throw new BlockGasLimitReachedError(`block gas limit reached: ${BigInt(call.gas)} > ${ctx.blockGasLeft}`);
  }
  const data = {
    nonce,
    // the request's gas budget bounds every call, an explicit gas included (geth)
    gasLimit: call.gas !== undefined ? (BigInt(call.gas) < ctx.budget ? BigInt(call.gas) : ctx.budget) : gasLeft,
    to: call.to ?? undefined,
    value: call.value !== undefined ? BigInt(call.value) : 0n,
    data: (call.input ?? call.data ?? '0x') as Hex,
    chainId: ctx.chainId,
    accessList: call.accessList?.map((entry) => ({ address: entry.address as Hex, storageKeys: entry.storageKeys as Hex[] })),
  };
  let fields: JsonObject;
  if (call.gasPrice !== undefined) {
    fields = { ...data, type: 0, gasPrice: BigInt(call.gasPrice), accessList: undefined, chainId: undefined };
  } else {
    const fees = { maxFeePerGas: BigInt(call.maxFeePerGas ?? 0), maxPriorityFeePerGas: BigInt(call.maxPriorityFeePerGas ?? 0) };
    if (call.authorizationList) fields = { ...data, ...fees, type: 4, authorizationList: call.authorizationList };
    else if (call.blobVersionedHashes)
      fields = {
        ...data,
        ...fees,
        type: 3,
        blobVersionedHashes: call.blobVersionedHashes,
        maxFeePerBlobGas: BigInt(call.maxFeePerBlobGas ?? 0),
      };
    else fields = { ...data, ...fees, type: 2 };
  }
  let tx: TypedTransaction;
  try {
    const signature = fields.type === 0 ? {} : { v: 0n, r: 0n, s: 0n };
    // ethereumjs refuses a nonce of 2^64-1 (EIP-2681) where geth simulates it: set after building
    const overflowing = nonce >= MAX_NONCE;
    tx = createTx({ ...fields, ...signature, nonce: overflowing ? 0n : nonce } as never, {
      common: ctx.common,
      params: txParams as never,
      freeze: false,
      allowUnlimitedInitCodeSize: false,
    });
    if (overflowing) Object.defineProperty(tx, 'nonce', { value: nonce });
  } catch (error) {
    throw new InvalidParamsError(`invalid ${ctx.where}: ${(error as Error).message.split(' (tx type=')[0]}`);
  }
  Object.defineProperty(tx, 'getSenderAddress', { value: () => from });
  return tx;
}

function feeCap(tx: TypedTransaction): bigint {
  return 'maxFeePerGas' in tx ? tx.maxFeePerGas : (tx as unknown as { gasPrice: bigint }).gasPrice;
}

/** Checks geth makes before a call, with the specification's codes (validation: nonce and base fee). */
async function checkCall(
  tx: TypedTransaction,
  from: Address,
  ctx: { state: ForkedState; validation: boolean; baseFeePerGas: bigint; callIndex: number },
): Promise<void> {
  if (!ctx.validation) return;
  const nonce = (await ctx.state.getAccount(from))?.nonce ?? 0n;
  const who = `address ${checksumish(from)}`;
  if (tx.nonce >= MAX_NONCE) throw new InternalError(`err: nonce has max value: ${who}, nonce: ${tx.nonce} (supplied gas ${tx.gasLimit})`);
  if (tx.nonce < nonce)
    throw new NonceTooLowError(`err: nonce too low: ${who}, tx: ${tx.nonce} state: ${nonce} (supplied gas ${tx.gasLimit})`);
  if (tx.nonce > nonce)
    throw new NonceTooHighError(`err: nonce too high: ${who}, tx: ${tx.nonce} state: ${nonce} (supplied gas ${tx.gasLimit})`);
  if (feeCap(tx) < ctx.baseFeePerGas) {
    throw new BaseFeeTooLowError(
      `err: max fee per gas less than block base fee: ${who}, maxFeePerGas: ${feeCap(tx)}, baseFee: ${ctx.baseFeePerGas} (supplied gas ${tx.gasLimit})`,
    );
  }
}

const checksumish = (address: Address) => `0x${address.toString().slice(2).toUpperCase()}`;

/** ethereumjs's reasons for refusing a transaction, as the specification's codes. */
function txError(error: unknown, tx: TypedTransaction, from: Address): JsonRpcError {
  const message = error instanceof Error ? error.message : String(error);
  const who = `address ${checksumish(from)}`;
  if (message.includes('INTRINSIC_GAS_TOO_LOW')) {
    const want = /minimum gas limit of (\d+)/.exec(message)?.[1] ?? '?';
    return new IntrinsicGasTooLowError(`err: intrinsic gas too low: have ${tx.gasLimit}, want ${want} (supplied gas ${tx.gasLimit})`);
  }
  if (message.includes("doesn't have enough funds")) {
    const have = /only has: (\d+)/.exec(message)?.[1] ?? '?';
    const want = /(?:upfront|max) cost is: (\d+)/.exec(message)?.[1] ?? '?';
    return new InsufficientFundsError(
      `err: insufficient funds for gas * price + value: ${who} have ${have} want ${want} (supplied gas ${tx.gasLimit})`,
    );
  }
  if (message.includes('baseFeePerGas'))
    return new BaseFeeTooLowError(`err: max fee per gas less than block base fee: ${who} (supplied gas ${tx.gasLimit})`);
  if (message.includes('initcode') || message.includes('init code'))
    return new MaxInitCodeSizeError(`err: max initcode size exceeded (supplied gas ${tx.gasLimit})`);
  return new ServerError(`err: ${message.split(' -> ')[0]} (supplied gas ${tx.gasLimit})`);
}

interface Executed {
  readonly tx: TypedTransaction;
  readonly from: Address;
  readonly result: RunTxResult;
  readonly logs: readonly TracedLog[];
}

interface FinishInput {
  readonly headerFields: Record<string, unknown>;
  readonly common: Common;
  readonly executed: readonly Executed[];
  readonly gasUsed: bigint;
  readonly blobGasUsed: bigint;
  readonly withdrawals: readonly { index: bigint; validatorIndex: bigint; address: Address; amount: bigint }[];
  readonly fullTransactions: boolean;
}

/** The sealed simulated block: roots, bloom (transfer logs left out), hash, and its JSON. */
async function finishBlock(input: FinishInput): Promise<{ header: BlockHeader; hash: Hex; json: JsonObject }> {
  const { common, executed } = input;
  const receipts = new MerklePatriciaTrie({ common });
  for (const [i, { tx, result }] of executed.entries()) await receipts.put(RLP.encode(i), encodeReceipt(result.receipt, tx.type));
  const bloom = new Uint8Array(256);
  for (const { result } of executed)
    result.bloom.bitvector.forEach((byte, i) => {
      bloom[i]! |= byte;
    });
  const header = createBlockHeader(
    {
      ...input.headerFields,
      gasUsed: input.gasUsed,
      blobGasUsed: common.isActivatedEIP(4844) ? input.blobGasUsed : undefined,
      receiptTrie: executed.length === 0 ? KECCAK256_RLP : await receipts.root(),
      transactionsTrie: await genTransactionsTrieRoot(executed.map((e) => e.tx)),
      logsBloom: bloom,
      stateRoot: ZERO_HASH_BYTES,
    },
    { common, skipConsensusFormatValidation: true },
  );
  const hash = bytesToHex(header.hash()) as Hex;
  const encodedTxs = executed.map(({ tx }) => (tx.type === 0 ? RLP.encode(tx.raw() as Uint8Array[]) : tx.serialize()));
  const size = RLP.encode([
    header.raw(),
    executed.map(({ tx }) => (tx.type === 0 ? tx.raw() : tx.serialize())),
    [],
    ...(common.isActivatedEIP(4895) ? [input.withdrawals.map((w) => [w.index, w.validatorIndex, w.address.bytes, w.amount])] : []),
  ] as never).length;
  const number = toHex(header.number);
  const timestamp = toHex(header.timestamp);
  const calls = executed.map(({ result, logs }, i) => {
    const txHash = bytesToHex(keccak256(encodedTxs[i]!, 'bytes')) as Hex;
    return callResult(
      result,
      logs.map(({ logIndex, ...log }) => ({
        ...log,
        blockNumber: number,
        transactionHash: txHash,
        transactionIndex: toHex(i),
        blockHash: hash,
        blockTimestamp: timestamp,
        logIndex: toHex(logIndex),
        removed: false,
      })),
    );
  });
  const json = formatHeader(header, hash);
  json.size = toHex(size);
  json.transactions = input.fullTransactions
    ? executed.map(({ tx, from }, i) =>
        formatTx(tx, from, {
          hash: bytesToHex(keccak256(encodedTxs[i]!, 'bytes')) as Hex,
          blockHash: hash,
          number,
          timestamp,
          index: i,
          baseFee: header.baseFeePerGas ?? 0n,
        }),
      )
    : encodedTxs.map((encoded) => keccak256(encoded));
  json.uncles = [];
  if (common.isActivatedEIP(4895))
    json.withdrawals = input.withdrawals.map((w) => ({
      index: toHex(w.index),
      validatorIndex: toHex(w.validatorIndex),
      address: w.address.toString(),
      amount: toHex(w.amount),
    }));
  json.calls = calls;
  return { header, hash, json };
}

function formatHeader(header: BlockHeader, hash: Hex): JsonObject {
  const h = header.toJSON() as Record<string, string>;
  const out: JsonObject = {
    baseFeePerGas: h.baseFeePerGas,
    blobGasUsed: h.blobGasUsed,
    difficulty: h.difficulty,
    excessBlobGas: h.excessBlobGas,
    extraData: h.extraData,
    gasLimit: h.gasLimit,
    gasUsed: h.gasUsed,
    hash,
    logsBloom: h.logsBloom,
    miner: h.coinbase,
    mixHash: h.mixHash,
    nonce: h.nonce,
    number: h.number,
    parentBeaconBlockRoot: h.parentBeaconBlockRoot,
    parentHash: h.parentHash,
    receiptsRoot: h.receiptTrie,
    requestsHash: h.requestsHash,
    sha3Uncles: h.uncleHash,
    stateRoot: h.stateRoot,
    timestamp: h.timestamp,
    transactionsRoot: h.transactionsTrie,
    withdrawalsRoot: h.withdrawalsRoot,
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

function formatTx(
  tx: TypedTransaction,
  from: Address,
  at: { hash: Hex; blockHash: Hex; number: Hex; timestamp: Hex; index: number; baseFee: bigint },
): JsonObject {
  const common = {
    blockHash: at.blockHash,
    blockNumber: at.number,
    blockTimestamp: at.timestamp,
    from: from.toString(),
    gas: toHex(tx.gasLimit),
  };
  const tail = {
    hash: at.hash,
    input: bytesToHex(tx.data),
    nonce: toHex(tx.nonce),
    to: tx.to?.toString() ?? null,
    transactionIndex: toHex(at.index),
    value: toHex(tx.value),
    type: toHex(tx.type),
  };
  if (tx.type === 0) {
    return { ...common, gasPrice: toHex(feeCap(tx)), ...tail, v: '0x0', r: '0x0', s: '0x0' };
  }
  const fee = tx as unknown as {
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
    accessList: [Uint8Array, Uint8Array[]][];
    chainId: bigint;
  };
  const tip = fee.maxPriorityFeePerGas < fee.maxFeePerGas - at.baseFee ? fee.maxPriorityFeePerGas : fee.maxFeePerGas - at.baseFee;
  const out: JsonObject = {
    ...common,
    gasPrice: toHex(at.baseFee + (tip > 0n ? tip : 0n)),
    maxFeePerGas: toHex(fee.maxFeePerGas),
    maxPriorityFeePerGas: toHex(fee.maxPriorityFeePerGas),
    ...tail,
    accessList: fee.accessList.map(([address, keys]) => ({ address: bytesToHex(address), storageKeys: keys.map((k) => bytesToHex(k)) })),
    chainId: toHex(fee.chainId),
  };
  if (tx.type === 3) {
    const blob = tx as unknown as { maxFeePerBlobGas: bigint; blobVersionedHashes: Hex[] };
    out.maxFeePerBlobGas = toHex(blob.maxFeePerBlobGas);
    out.blobVersionedHashes = blob.blobVersionedHashes;
  }
  return { ...out, v: '0x0', r: '0x0', s: '0x0', yParity: '0x0' };
}

/** One call's result: status, gas, return data, logs, and on failure the error object. */
function callResult(result: RunTxResult, logs: JsonObject[]): JsonObject {
  const exec = result.execResult;
  const returnData = bytesToHex(exec.returnValue);
  const out: JsonObject = {
    returnData,
    logs,
    gasUsed: toHex(result.totalGasSpent),
    maxUsedGas: toHex(maxUsedGas(result)),
    status: exec.exceptionError ? '0x0' : '0x1',
  };
  if (exec.exceptionError) {
    // a failed call returns nothing: a revert's data travels in the error, as eth_call's does
    out.returnData = '0x';
    out.logs = [];
    const reverted = exec.exceptionError.error === 'revert';
    out.error = reverted
      ? { message: revertMessage(returnData), code: 3, data: returnData }
      : { message: exec.exceptionError.error, code: -32015 };
  }
  return out;
}

/** Gas used before the refund (geth's `maxUsedGas`), recovered from the refunded total. */
function maxUsedGas(result: RunTxResult): bigint {
  const spent = result.totalGasSpent;
  const refund = result.gasRefund ?? 0n;
  if (refund === 0n) return spent;
  const uncapped = spent + refund;
  if (refund <= uncapped / 5n) return uncapped;
  for (let before = (spent * 5n) / 4n - 2n; before <= (spent * 5n) / 4n + 2n; before++) if (before - before / 5n === spent) return before;
  return spent;
}

/** `execution reverted`, with the reason when the data is `Error(string)` or `Panic(uint256)`. */
export function revertMessage(data: Hex): string {
  if (data === '0x') return 'execution reverted';
  try {
    const decoded = decodeErrorResult({ abi: [], data });
    if (decoded.errorName === 'Error') return `execution reverted: ${String(decoded.args?.[0])}`;
    if (decoded.errorName === 'Panic')
      return `execution reverted: assert(false) (panic code ${padHex(toHex(decoded.args?.[0] as bigint), { size: 1 })})`;
  } catch {
    // not a standard error: the data is returned as it is
  }
  return 'execution reverted';
}
