import type { Block, BlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { EVM, Message } from '@ethereumjs/evm';
import { createTx, paramsTx, type TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, createAddressFromString, type Address } from '@ethereumjs/util';
import { runTx, type RunTxResult, type VM } from '@ethereumjs/vm';
import type { Hex } from 'viem';
import {
  BaseFeeTooLowError,
  BlockGasLimitReachedError,
  ExecutionTimeoutError,
  InsufficientFundsError,
  InternalError,
  IntrinsicGasTooLowError,
  InvalidParamsError,
  JsonRpcError,
  MaxInitCodeSizeError,
  NonceTooHighError,
  NonceTooLowError,
  ServerError,
} from '../errors.ts';
import type { ForkedState } from './fork-state.ts';
import type { SimulateCall } from './payload.ts';
import { chargeUpfront, isChargedCall, settle, type OpBlock, type OpCharge } from './op-fees.ts';
import { warmAsGeth, type PrecompileMoves } from './precompile-moves.ts';
import { createTransferTracer, type TracedLog } from './transfers.ts';

/*
 * The calls of one simulated block (execution-apis `src/eth/execute.yaml`): each call as the
 * transaction geth builds from it, geth's checks before it runs with the specification's codes,
 * and its run in ethereumjs's VM.
 */

export const ZERO_ADDRESS = createAddressFromString(`0x${'00'.repeat(20)}`);
const MAX_NONCE = 2n ** 64n - 1n;
/** EIP-7825's per-transaction cap does not bind simulated calls (geth lets them use the RPC gas cap). */
const txParams = { ...paramsTx, 7825: { ...(paramsTx as Record<number, object>)[7825], maxTransactionGasLimit: '0xffffffffffffffff' } };

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
export async function buildTx(call: SimulateCall, ctx: TxContext): Promise<TypedTransaction> {
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
  let fields: Record<string, unknown>;
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

export function feeCap(tx: TypedTransaction): bigint {
  return 'maxFeePerGas' in tx ? tx.maxFeePerGas : (tx as unknown as { gasPrice: bigint }).gasPrice;
}

/** Checks geth makes before a call, with the specification's codes (validation: nonce and base fee). */
export async function checkCall(
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

export interface Executed {
  readonly tx: TypedTransaction;
  readonly from: Address;
  readonly result: RunTxResult;
  readonly logs: readonly TracedLog[];
}

/** What one simulated block's calls run against. */
export interface CallsContext {
  readonly vm: VM;
  readonly state: ForkedState;
  readonly common: Common;
  readonly moves: PrecompileMoves;
  readonly header: BlockHeader;
  readonly block: Block;
  /** The block's twin with a base fee of 0, for calls that may pay less than an overridden base fee. */
  readonly freeBlock: Block;
  readonly coinbase: Address;
  readonly baseFeePerGas: bigint;
  /** The request's `validation` and `traceTransfers`, and whether the block overrides its base fee. */
  readonly flags: { readonly validation: boolean; readonly traceTransfers: boolean; readonly baseFeeOverridden: boolean };
  /** Gas the simulation's calls may still use together. */
  readonly budget: bigint;
  /** Where the block sits in the request (`params[0].blockStateCalls[i]`), for errors. */
  readonly where: string;
  /** Date.now() after which no further call starts, and the limit it stands for. */
  readonly limit: { readonly deadline?: number | undefined; readonly timeoutMs?: number | undefined };
  /** On an OP Stack chain, the block's fee functions: a call that pays for gas pays the L1 and operator fees too. */
  readonly op?: OpBlock | undefined;
}

/** Runs one block's calls in order, each on the state the one before left; nothing is committed beyond that state. */
export async function runCalls(
  calls: readonly SimulateCall[],
  ctx: CallsContext,
): Promise<{ executed: Executed[]; gasUsed: bigint; blobGasUsed: bigint }> {
  const { vm, state, common, header, block, freeBlock, moves, coinbase, baseFeePerGas } = ctx;
  const { validation } = ctx.flags;
  let budget = ctx.budget;
  const executed: Executed[] = [];
  const logCounter = { next: 0 };
  let gasUsed = 0n;
  let blobGasUsed = 0n;
  for (const [index, call] of calls.entries()) {
    if (ctx.limit.deadline !== undefined && Date.now() > ctx.limit.deadline) {
      throw new ExecutionTimeoutError(
        `eth_simulateV1: execution took longer than the ${ctx.limit.timeoutMs ?? 0} ms limit (--call-timeout-ms)`,
      );
    }
    const blockGasLeft = header.gasLimit - gasUsed;
    const where = `${ctx.where}.calls[${index}]`;
    const tx = await buildTx(call, { state, common, budget, blockGasLeft, chainId: common.chainId(), where });
    if (tx.gasLimit > blockGasLeft) {
      throw new BlockGasLimitReachedError(`block gas limit reached: ${tx.gasLimit} > ${blockGasLeft}`);
    }
    const from = createAddressFromString(call.from ?? ZERO_ADDRESS.toString());
    await checkCall(tx, from, { state, validation, baseFeePerGas, callIndex: index });
    const free = !validation && ctx.flags.baseFeeOverridden && feeCap(tx) < baseFeePerGas;
    const charge: OpCharge | undefined =
      ctx.op && isChargedCall(tx, validation) ? await chargeUpfront(state, tx, from, ctx.op, feeCap(tx)) : undefined;
    const evm = vm.evm as EVM;
    const tracer = ctx.flags.traceTransfers ? createTransferTracer(evm, logCounter) : undefined;
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
    if (charge) await settle(state, from, ctx.op!, charge, result.totalGasSpent, free ? 0n : baseFeePerGas);
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
  return { executed, gasUsed, blobGasUsed };
}
