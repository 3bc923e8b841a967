import {
  fromRlp,
  getContractAddress,
  hexToBytes,
  parseTransaction,
  recoverTransactionAddress,
  type Hex,
  type TransactionSerialized,
} from 'viem';
import type { AssembledBlock } from '../chain/assemble.ts';
import { rpcReceiptFees, type ReceiptFeesOf } from '../op/receipt-fees.ts';
import type { RollupConfig } from '../op/rollup-config.ts';
import { unknownTxType } from '../op/tx-types.ts';
import { isPostExecTx } from '../op/post-exec.ts';
import { createOnceLogger, type Logger } from '../obs/logger.ts';
import { counter, type Registry } from '../obs/metrics.ts';
import { ZERO_HASH } from '../schemas/hex.ts';
import type { AccountDiff, RpcReceipt } from '../records/blocks.ts';
import type { RpcLog } from '../records/logs.ts';
import { fromRpcReceipt, logsBloom, receiptsRoot } from '../evm/receipts.ts';
import { ExecutionError } from './local.ts';
import type { ExecutionOutput, Executor } from './port.ts';
import { blockReceiptFees } from './metadata-fees.ts';
import { pendingLog } from './pending-receipt.ts';

/**
 * The `metadata` executor: receipts from the era A/B flashblock metadata (`metadata.receipts`,
 * keyed by transaction hash), completed into JSON-RPC receipts. The metadata holds status,
 * cumulativeGasUsed, type, logs and the deposit fields; the rest is derived:
 * - from/to from the raw transaction (signature recovery; a deposit names its sender);
 * - gasUsed as the difference of cumulative gas with the previous transaction of the block;
 * - transactionIndex and the block-wide logIndex by counting from index 0 of the block;
 * - effectiveGasPrice from the fee fields and the block's base fee (0 for deposits);
 * - contractAddress from sender and nonce for a creation (null for a deposit creation: the
 *   deposit carries no nonce);
 * - logsBloom from the logs;
 * - the OP fee fields of a non-deposit receipt (l1Fee, l1GasUsed, l1GasPrice, the Ecotone scalars
 *   and blob base fee, Isthmus's operator fee parameters, Jovian's daFootprintGasScalar and
 *   blobGasUsed), as op-geth derives them: from the block's L1-info deposit (transaction 0), the
 *   transaction's signed bytes and the chain's fork rules at the block's timestamp
 *   (src/op/receipt-fees.ts; which rules: metadata-fees.ts).
 * The state diff holds balances from
 * `new_account_balances` (op-rbuilder fills it from the builder's bundle state: every account
 * touched in the block so far) and each sender's nonce after its last transaction so far (the
 * transaction's nonce + 1; a deposit's `depositNonce` + 1), except a sender of an EIP-7702
 * transaction, whose own authorization may move its nonce again; other nonces, code and storage
 * stay with the upstream.
 *
 * It is an invariant that a block is seen from its index 0: cumulative gas and log numbering
 * start there. A block first seen later is refused with an error, not guessed.
 *
 * The feed's receipts are not taken on trust: after each flashblock the receipts of the block so
 * far must give the flashblock's `receipts_root` (src/execute/receipts-root.ts) and add up to its
 * `gas_used`. A mismatch is counted (`flashlog_executor_checks_total{result="mismatch"}`,
 * `flashlog_executor_mismatches_total{field}`) and logged once per field set; the receipts are
 * still published, as the feed gave them, since there is nothing truer to publish.
 */
interface Running {
  blockNumber: bigint;
  txCount: number;
  cumulativeGas: bigint;
  logCount: number;
  /** Every receipt of the block so far, in order: the receipts root is over all of them. */
  receipts: RpcReceipt[];
  /**
   * Position of the block's first transaction of a type flashlog does not know (src/op/tx-types.ts):
   * from there on the block's receipts stop (they cover a prefix of its transactions) and the
   * receipts root is not checked, its receipt's encoding being unknown.
   */
  opaqueFrom?: number;
  /** Each sender's nonce after its last transaction of the block so far. */
  nonces: Map<Hex, bigint>;
  /** The block's receipt fee fields, from its L1-info deposit; made at its first non-deposit transaction. */
  fees?: Promise<ReceiptFeesOf>;
}

export interface MetadataExecutorDeps {
  readonly metrics?: Registry;
  readonly logger?: Logger;
  /** The chain's rollup config, for the receipts' fee fields; without it, a built-in one by chain id (metadata-fees.ts). */
  readonly rollupConfig?: RollupConfig;
}

export interface TxSummary {
  from: Hex;
  to: Hex | null;
  type: Hex;
  nonce: bigint | null;
  effectiveGasPrice: bigint;
}

/** Sender, recipient, type, nonce and effective gas price of an EIP-2718 transaction. */
export async function summarizeTransaction(raw: Hex, baseFee: bigint): Promise<TxSummary> {
  if (raw.startsWith('0x7e')) {
    const fields = fromRlp(`0x${raw.slice(4)}`, 'hex') as Hex[];
    const to = fields[2];
    return {
      from: fields[1]!.toLowerCase() as Hex,
      to: to && to !== '0x' ? (to.toLowerCase() as Hex) : null,
      type: '0x7e',
      nonce: null,
      effectiveGasPrice: 0n,
    };
  }
  const tx = parseTransaction(raw as TransactionSerialized);
  const from = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
  const type = ({ legacy: '0x0', eip2930: '0x1', eip1559: '0x2', eip4844: '0x3', eip7702: '0x4' } as const)[tx.type as 'legacy'] ?? '0x0';
  let effectiveGasPrice = tx.gasPrice ?? 0n;
  if (tx.maxFeePerGas !== undefined) {
    const tip = tx.maxPriorityFeePerGas ?? 0n;
    effectiveGasPrice = baseFee + tip < tx.maxFeePerGas ? baseFee + tip : tx.maxFeePerGas;
  }
  // JSON-RPC gives addresses in lower case; viem returns them checksummed.
  return {
    from: from.toLowerCase() as Hex,
    to: (tx.to?.toLowerCase() ?? null) as Hex | null,
    type,
    nonce: BigInt(tx.nonce ?? 0),
    effectiveGasPrice,
  };
}

const hex = (value: bigint | number) => `0x${value.toString(16)}` as Hex;

/** The post-exec transaction's consensus receipt (post-exec.md § Receipt): success, no logs, the cumulative gas before it. */
const postExecConsensusReceipt = (cumulativeGasUsed: bigint) => ({
  type: 0x7d,
  status: 1 as const,
  cumulativeGasUsed,
  logsBloom: `0x${'00'.repeat(256)}` as Hex,
  logs: [],
});

/**
 * `new_account_balances` and the senders' nonces as a state diff; null when the feed sent no
 * balances (or `{}`, which says nothing) and no transaction has a known sender nonce.
 */
function stateDiffOf(
  balances: Readonly<Record<string, string>> | null,
  nonces: ReadonlyMap<Hex, bigint>,
): Record<string, AccountDiff> | null {
  const diff: Record<string, AccountDiff> = {};
  for (const [address, balance] of Object.entries(balances ?? {})) diff[address.toLowerCase()] = { balance };
  for (const [address, nonce] of nonces) diff[address] = { ...diff[address], nonce: hex(nonce) };
  return Object.keys(diff).length === 0 ? null : diff;
}

/** A sender's nonce after its transaction: the transaction's + 1 (a deposit's from its receipt), or undefined when not known from the transaction alone. */
function nonceAfter(summary: TxSummary, depositNonce: string | null | undefined): bigint | undefined {
  if (summary.type === '0x7e') return depositNonce ? BigInt(depositNonce) + 1n : undefined;
  if (summary.type === '0x4' || summary.nonce === null) return undefined;
  return summary.nonce + 1n;
}

export function createMetadataExecutor(deps: MetadataExecutorDeps = {}): Executor {
  let running: Running | null = null;
  const checks = deps.metrics
    ? counter(deps.metrics, 'flashlog_executor_checks_total', 'flashblocks checked against the feed (gas_used, receipts_root), by result', [
        'result',
      ])
    : null;
  const mismatches = deps.metrics
    ? counter(deps.metrics, 'flashlog_executor_mismatches_total', 'checks that failed, by field', ['field'])
    : null;
  const warnOnce = deps.logger ? createOnceLogger(deps.logger) : null;

  /** The receipts so far against the flashblock's running fields; the names of those that differ. */
  async function check(block: AssembledBlock, state: Running): Promise<string[]> {
    const failed: string[] = [];
    if (state.cumulativeGas !== BigInt(block.header.gasUsed)) failed.push('gas_used');
    const consensus = state.receipts.map(fromRpcReceipt);
    let root = await receiptsRoot(consensus);
    // Lagoon: the in-progress block's post-exec transaction has a receipt the feed does not stream
    // (post-exec.md § Subblocks); whether the subblock's receipts_root counts it is UNCONFIRMED, so both are taken.
    if (root !== block.header.receiptsRoot.toLowerCase() && block.postExecTx)
      root = await receiptsRoot([...consensus, postExecConsensusReceipt(state.cumulativeGas)]);
    if (root !== block.header.receiptsRoot.toLowerCase()) failed.push('receipts_root');
    checks?.inc({ result: failed.length ? 'mismatch' : 'match' });
    for (const field of failed) mismatches?.inc({ field });
    if (failed.length) {
      warnOnce?.(
        `metadata-mismatch:${failed.join(',')}`,
        {
          block: Number(block.blockNumber),
          index: block.index,
          fields: failed,
          expected: { gasUsed: block.header.gasUsed, receiptsRoot: block.header.receiptsRoot },
          got: { gasUsed: hex(state.cumulativeGas), receiptsRoot: root },
        },
        "the feed's metadata receipts do not match its own gas_used / receipts_root; publishing them as given",
      );
    }
    return failed;
  }

  return {
    kind: 'metadata',
    async execute(block: AssembledBlock): Promise<ExecutionOutput> {
      const where = `block ${block.blockNumber} index ${block.index}`;
      if (block.firstNew === 0)
        running = { blockNumber: block.blockNumber, txCount: 0, cumulativeGas: 0n, logCount: 0, receipts: [], nonces: new Map() };
      if (!running || running.blockNumber !== block.blockNumber || running.txCount !== block.firstNew) {
        throw new ExecutionError(
          `the metadata executor needs every flashblock of a block from index 0 (cumulative gas and log indexes count from there): ${where}`,
        );
      }
      const state = running;
      const newTxs = block.transactions.slice(block.firstNew);
      if (newTxs.length > 0 && !block.metadataReceipts) {
        throw new ExecutionError(
          `metadata.receipts is absent (an era C feed, or the OP-specs format, whose metadata has no logs); use --executor local or node: ${where}`,
        );
      }
      const blockNumber = hex(block.blockNumber);
      const baseFee = BigInt(block.header.baseFeePerGas);
      const receipts: RpcReceipt[] = [];
      for (const [offset, tx] of newTxs.entries()) {
        const meta = block.metadataReceipts?.[tx.hash] ?? block.metadataReceipts?.[tx.hash.toLowerCase()];
        if (!meta) throw new ExecutionError(`metadata.receipts has no receipt for a transaction: ${where}, ${tx.hash}`);
        // A post-exec transaction (0x7d) belongs in diff.post_exec_tx; one streamed among the
        // transactions is the block's last and has no receipt of its own to summarize, so it ends
        // the block's receipts like a type flashlog does not know.
        if (state.opaqueFrom !== undefined || unknownTxType(tx.raw) !== undefined || isPostExecTx(tx.raw)) {
          state.opaqueFrom ??= state.txCount;
          state.cumulativeGas = BigInt(meta.cumulativeGasUsed);
          state.logCount += meta.logs.length;
          state.txCount++;
          continue;
        }
        const summary = await summarizeTransaction(tx.raw, baseFee);
        let fees: Record<string, string> = {};
        if (summary.type !== '0x7e') {
          state.fees ??= blockReceiptFees(
            block.transactions.map((t) => t.raw),
            BigInt(block.header.timestamp),
            deps.rollupConfig,
            where,
          );
          fees = rpcReceiptFees((await state.fees)(hexToBytes(tx.raw)));
        }
        const cumulative = BigInt(meta.cumulativeGasUsed);
        const transactionIndex = hex(block.firstNew + offset);
        const logs: RpcLog[] = meta.logs.map((log) =>
          pendingLog(log, { blockNumber, block, transactionHash: tx.hash, transactionIndex, logIndex: hex(state.logCount++) }),
        );
        const status = typeof meta.status === 'boolean' ? (meta.status ? '0x1' : '0x0') : hex(BigInt(meta.status));
        receipts.push({
          transactionHash: tx.hash,
          transactionIndex,
          blockHash: ZERO_HASH,
          blockNumber,
          from: summary.from,
          to: summary.to,
          cumulativeGasUsed: hex(cumulative),
          gasUsed: hex(cumulative - state.cumulativeGas),
          effectiveGasPrice: hex(summary.effectiveGasPrice),
          contractAddress:
            summary.to === null && summary.nonce !== null
              ? getContractAddress({ from: summary.from, nonce: summary.nonce }).toLowerCase()
              : null,
          logs,
          logsBloom: logsBloom(logs),
          status,
          type: meta.type,
          ...fees,
          ...(meta.depositNonce ? { depositNonce: meta.depositNonce } : {}),
          ...(meta.depositReceiptVersion ? { depositReceiptVersion: meta.depositReceiptVersion } : {}),
        });
        const nonce = nonceAfter(summary, meta.depositNonce);
        if (nonce !== undefined) state.nonces.set(summary.from, nonce);
        state.cumulativeGas = cumulative;
        state.txCount++;
        state.receipts.push(receipts.at(-1)!);
      }
      if (state.opaqueFrom === undefined) await check(block, state);
      else
        warnOnce?.(
          `opaque-type:${block.blockNumber}`,
          {
            block: Number(block.blockNumber),
            transactionIndex: state.opaqueFrom,
            type: block.transactions[state.opaqueFrom]!.raw.slice(0, 4),
          },
          'a transaction of a type flashlog does not know: kept as the feed gave it, no receipts from it on in this block',
        );
      return { receipts, stateDiff: stateDiffOf(block.metadataBalances ?? null, state.nonces) };
    },
    onReorg() {
      running = null;
    },
    async close() {},
  };
}
