import { createBlockHeader, genTransactionsTrieRoot, type BlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import type { TypedTransaction } from '@ethereumjs/tx';
import { KECCAK256_RLP, bytesToHex, type Address } from '@ethereumjs/util';
import { encodeReceipt, type RunTxResult } from '@ethereumjs/vm';
import { decodeErrorResult, keccak256, padHex, toHex, type Hex } from 'viem';
import { feeCap, type Executed } from './simulated-call.ts';

/*
 * A simulated block sealed and written out as eth_simulateV1 answers it (execution-apis
 * `src/eth/execute.yaml`): its header with roots and bloom, its transactions, and each call's result.
 */

export type JsonObject = Record<string, unknown>;

export const ZERO_HASH_BYTES = new Uint8Array(32);

interface FinishInput {
  readonly headerFields: Record<string, unknown>;
  readonly common: Common;
  readonly executed: readonly Executed[];
  readonly gasUsed: bigint;
  readonly blobGasUsed: bigint;
  readonly withdrawals: readonly { index: bigint; validatorIndex: bigint; address: Address; amount: bigint }[];
  readonly fullTransactions: boolean;
}

/** A simulated call's transaction as its hash covers it (EIP-2718 bytes; a legacy one's RLP). */
export const txBytes = (tx: TypedTransaction): Uint8Array => (tx.type === 0 ? RLP.encode(tx.raw() as Uint8Array[]) : tx.serialize());

/** The sealed simulated block: roots, bloom (transfer logs left out), hash, and its JSON. */
export async function finishBlock(input: FinishInput): Promise<{ header: BlockHeader; hash: Hex; json: JsonObject }> {
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
  const encodedTxs = executed.map(({ tx }) => txBytes(tx));
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
