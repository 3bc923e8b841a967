import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAddressFromString } from '@ethereumjs/util';
import {
  fromRlp,
  getContractAddress,
  keccak256,
  numberToHex,
  parseTransaction,
  recoverTransactionAddress,
  type Hex,
  type TransactionSerializedEIP1559,
} from 'viem';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { createWitnessState } from '../../src/evm/op/witness-state.ts';
import { headerToRpc, type BlockHeader } from '../../src/op/header.ts';
import { feeVaults } from '../../src/op/l1-cost.ts';
import { encodePostExecTx, isPostExecTx } from '../../src/op/post-exec.ts';
import type { Receipt } from '../../src/evm/op/receipts.ts';
import { formatPostExecTransaction } from '../../src/rpc/post-exec.ts';
import { blockSize } from '../../src/rpc/header-fields.ts';
import { buildLagoonChain, CHAIN_ID, config, extendedLagoonPlan, user, type LagoonChainBlock } from './lagoon-chain.ts';

/**
 * The Lagoon chain flashlog's engine builds (test/helpers/lagoon-chain.ts), prepared for a stand-in
 * node and its subblocks feed (test/helpers/lagoon-stand-in.ts): each sealed block in the JSON-RPC
 * shape an OP node gives it, the state after each block for state reads, and each block split into
 * subblocks in OP's subblocks form.
 *
 * A subblock (specs `subblocks.md`; `post_exec_tx`: specs lagoon/post-exec.md § Subblocks
 * @1f2dc033) carries the block so far: `diff.transactions` the new ones, `diff.post_exec_tx` the
 * post-exec transaction of the block so far, `metadata.receipts` the new transactions' receipts
 * (op-alloy's externally tagged `OpReceipt`), `metadata.new_account_balances`. Its running header
 * fields (`state_root`, `receipts_root`, `logs_bloom`, `gas_used`, `block_hash`) are the engine's
 * for that partial block: `executeBlock` over the transactions so far plus that subblock's post-exec
 * transaction. OP zeroes `state_root`, `block_hash` and `withdrawals_root`; this feed keeps them
 * real by default; `zeroedRoots: true` gives OP's form (a zero there is "not given", src/rpc/header-fields.ts).
 *
 * Refunds: a middle subblock carries a provisional post-exec transaction, each refund of the
 * transactions so far 1 gas smaller than the block's final one; the last subblock carries the
 * block's own. The receipts of `metadata.receipts` are the sealed block's (a sequencer that fixes a
 * transaction's canonical gas when it includes it), so only the post-exec transaction and the
 * running header fields of the middle subblock are provisional.
 */
type Json = Record<string, unknown>;
const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`;
const hex = (value: bigint | number): Hex => numberToHex(value);

export interface StandInBlock {
  readonly number: bigint;
  readonly hash: Hex;
  /** `eth_getBlockByHash(hash, true)`; the hashes-only form swaps each transaction for its hash. */
  readonly full: Json;
  readonly receipts: readonly Json[];
  /** The state after the block. */
  readonly state: MerkleStateManager;
  /** The subblocks feed of the block, in order; the last one is canonical. */
  readonly subblocks: readonly Json[];
  readonly refunds: LagoonChainBlock['refunds'];
}

export interface StandInChain {
  readonly chainId: number;
  readonly genesis: { readonly hash: Hex; readonly full: Json; readonly state: MerkleStateManager };
  readonly blocks: readonly StandInBlock[];
}

/** Accounts whose balances a subblock's `new_account_balances` lists (every account these blocks touch). */
const balanceAccounts = (block: LagoonChainBlock): Hex[] => [
  user.address.toLowerCase() as Hex,
  '0x000000000000000000000000000000000000a901',
  '0x000000000000000000000000000000000000a902',
  block.attributes.feeRecipient.toLowerCase() as Hex,
  feeVaults.baseFee.toLowerCase() as Hex,
  feeVaults.l1Fee.toLowerCase() as Hex,
  feeVaults.operatorFee.toLowerCase() as Hex,
];

async function transactionJson(raw: Hex, index: number, block: LagoonChainBlock, receipt: Receipt): Promise<Json> {
  const hash = keccak256(raw);
  const place = {
    blockHash: block.hash,
    blockNumber: hex(block.number),
    blockTimestamp: hex(block.header.timestamp),
    hash,
    transactionIndex: hex(index),
  };
  if (isPostExecTx(raw))
    return formatPostExecTransaction(
      { hash, raw },
      {
        blockHash: block.hash,
        blockTimestamp: String(block.header.timestamp),
        blockNumber: block.number,
        position: index,
        baseFeePerGas: block.header.baseFeePerGas!,
      },
    );
  if (raw.startsWith('0x7e')) {
    // [sourceHash, from, to, mint, value, gas, isSystemTx, data] (specs deposits.md); op-geth's shape:
    // gasPrice, v, r, s zero, mint only when not zero, isSystemTx only when true, the nonce from the receipt.
    const [sourceHash, from, to, mint, value, gas, isSystemTx, input] = fromRlp(`0x${raw.slice(4)}`, 'hex') as Hex[];
    const quantity = (field: Hex | undefined) => hex(BigInt(field === '0x' || !field ? 0 : field));
    return {
      ...place,
      type: '0x7e',
      from: from!.toLowerCase(),
      to: to === '0x' ? null : to!.toLowerCase(),
      gas: quantity(gas),
      gasPrice: '0x0',
      input,
      nonce: hex(receipt.depositNonce!),
      value: quantity(value),
      v: '0x0',
      r: '0x0',
      s: '0x0',
      sourceHash,
      ...(quantity(mint) !== '0x0' ? { mint: quantity(mint) } : {}),
      ...(isSystemTx === '0x01' ? { isSystemTx: true } : {}),
      depositReceiptVersion: hex(receipt.depositReceiptVersion!),
    };
  }
  const tx = parseTransaction(raw as TransactionSerializedEIP1559);
  const baseFee = block.header.baseFeePerGas!;
  const price = baseFee + tx.maxPriorityFeePerGas! < tx.maxFeePerGas! ? baseFee + tx.maxPriorityFeePerGas! : tx.maxFeePerGas!;
  return {
    ...place,
    type: '0x2',
    from: (await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerializedEIP1559 })).toLowerCase(),
    to: tx.to?.toLowerCase() ?? null,
    gas: hex(tx.gas!),
    gasPrice: hex(price),
    maxFeePerGas: hex(tx.maxFeePerGas!),
    maxPriorityFeePerGas: hex(tx.maxPriorityFeePerGas!),
    input: tx.data ?? '0x',
    nonce: hex(tx.nonce!),
    value: hex(tx.value ?? 0n),
    accessList: [],
    chainId: hex(CHAIN_ID),
    v: hex(tx.yParity!),
    yParity: hex(tx.yParity!),
    r: hex(BigInt(tx.r!)),
    s: hex(BigInt(tx.s!)),
  };
}

/** A receipt in the shape op-reth serves (no L1 fee fields: see docs/lagoon.md, the stand-in). */
function receiptJson(receipt: Receipt, tx: Json, index: number, block: LagoonChainBlock, logIndexStart: number): Json {
  const isCreation = tx.to === null && tx.type === '0x2';
  return {
    type: hex(receipt.type),
    status: hex(receipt.status),
    cumulativeGasUsed: hex(receipt.cumulativeGasUsed),
    logs: receipt.logs.map((log, i) => ({
      address: log.address.toLowerCase(),
      topics: log.topics,
      data: log.data,
      blockHash: block.hash,
      blockNumber: hex(block.number),
      blockTimestamp: hex(block.header.timestamp),
      transactionHash: tx.hash,
      transactionIndex: hex(index),
      logIndex: hex(logIndexStart + i),
      removed: false,
    })),
    logsBloom: receipt.logsBloom,
    transactionHash: tx.hash,
    transactionIndex: hex(index),
    blockHash: block.hash,
    blockNumber: hex(block.number),
    gasUsed: hex(receipt.gasUsed),
    effectiveGasPrice: tx.gasPrice,
    from: tx.from,
    to: tx.to,
    contractAddress: isCreation ? getContractAddress({ from: tx.from as Hex, nonce: BigInt(tx.nonce as string) }).toLowerCase() : null,
    ...(receipt.depositNonce !== undefined ? { depositNonce: hex(receipt.depositNonce) } : {}),
    ...(receipt.depositReceiptVersion !== undefined ? { depositReceiptVersion: hex(receipt.depositReceiptVersion) } : {}),
    ...(receipt.opGasRefund !== undefined && receipt.opGasRefund > 0n ? { opGasRefund: hex(receipt.opGasRefund) } : {}),
  };
}

/** op-alloy's `OpReceipt` (externally tagged), as op-rbuilder and OP's subblocks put it in `metadata.receipts`. */
function metadataReceipt(receipt: Receipt): Json {
  const kind = receipt.type === 0x7e ? 'Deposit' : 'Eip1559';
  return {
    [kind]: {
      status: hex(receipt.status),
      cumulativeGasUsed: hex(receipt.cumulativeGasUsed),
      logs: receipt.logs.map((log) => ({ address: log.address, topics: log.topics, data: log.data })),
      ...(receipt.depositNonce !== undefined ? { depositNonce: hex(receipt.depositNonce) } : {}),
      ...(receipt.depositReceiptVersion !== undefined ? { depositReceiptVersion: hex(receipt.depositReceiptVersion) } : {}),
    },
  };
}

function blockJson(header: BlockHeader, hash: Hex, transactions: readonly Json[], raws: readonly Hex[]): Json {
  return { ...headerToRpc(header), hash, size: blockSize(header, raws, []), transactions, uncles: [], withdrawals: [] };
}

/** The post-exec transaction of the block's first `count` transactions, each refund smaller by `less` (none if no entry is left). */
function postExecSoFar(block: LagoonChainBlock, count: number, less: bigint): Hex | undefined {
  const entries = block.refunds.filter(([index]) => index < count).map(([index, refund]) => ({ index, gasRefund: refund - less }));
  if (entries.length === 0) return undefined;
  return encodePostExecTx({ version: 1, blockNumber: block.number, gasRefundEntries: entries }).raw;
}

async function balancesOf(state: MerkleStateManager, accounts: readonly Hex[]): Promise<Record<string, Hex>> {
  const out: Record<string, Hex> = {};
  for (const account of accounts) out[account] = hex((await state.getAccount(createAddressFromString(account)))?.balance ?? 0n);
  return out;
}

/**
 * The subblocks of one block: [deposit, first user transaction], then one user transaction per
 * subblock, the rest in the last: `parts` subblocks (an empty diff when transactions run out).
 */
async function subblocksOf(
  block: LagoonChainBlock,
  parts: number,
  zeroedRoots: boolean,
  stateAfter: () => MerkleStateManager,
  sealedState: MerkleStateManager,
): Promise<Json[]> {
  const streamed = block.attributes.transactions.filter((raw) => !isPostExecTx(raw));
  const finalPostExec = block.attributes.transactions.find(isPostExecTx);
  const cuts = Array.from({ length: parts }, (_, i) => (i === parts - 1 ? streamed.length : Math.min(streamed.length, 2 + i)));
  const payloadId = numberToHex(block.number, { size: 8 });
  const out: Json[] = [];
  let sent = 0;
  for (let i = 0; i < parts; i++) {
    const last = i === parts - 1;
    const count = cuts[i]!;
    const postExec = last ? finalPostExec : postExecSoFar(block, count, i === parts - 2 ? 1n : 0n);
    let header = block.header;
    let hash = block.hash;
    let state = sealedState;
    if (!last) {
      const executed = await executeBlock({
        config,
        parent: block.parent,
        attributes: { ...block.attributes, transactions: [...streamed.slice(0, count), ...(postExec ? [postExec] : [])] },
        witness: block.parentState,
      });
      ({ header, hash } = executed);
      state = stateAfter();
    }
    const fresh = streamed.slice(sent, count);
    const receipts = Object.fromEntries(fresh.map((raw, j) => [keccak256(raw), metadataReceipt(block.receipts[sent + j]!)]));
    out.push({
      payload_id: payloadId,
      index: i,
      ...(i === 0
        ? {
            base: {
              parent_beacon_block_root: block.attributes.parentBeaconBlockRoot,
              parent_hash: block.header.parentHash,
              fee_recipient: block.header.miner,
              prev_randao: block.header.mixHash,
              block_number: hex(block.number),
              gas_limit: hex(block.header.gasLimit),
              timestamp: hex(block.header.timestamp),
              extra_data: block.header.extraData,
              base_fee_per_gas: hex(block.header.baseFeePerGas!),
            },
          }
        : {}),
      diff: {
        state_root: zeroedRoots ? ZERO_HASH : header.stateRoot,
        receipts_root: header.receiptsRoot,
        logs_bloom: header.logsBloom,
        gas_used: hex(header.gasUsed),
        block_hash: zeroedRoots ? ZERO_HASH : hash,
        transactions: fresh,
        withdrawals: [],
        withdrawals_root: zeroedRoots ? ZERO_HASH : (header.withdrawalsRoot ?? ZERO_HASH),
        blob_gas_used: hex(header.blobGasUsed ?? 0n),
        ...(postExec ? { post_exec_tx: postExec } : {}),
      },
      metadata: {
        block_number: Number(block.number),
        new_account_balances: await balancesOf(state, balanceAccounts(block)),
        receipts,
      },
    });
    sent = count;
  }
  return out;
}

/**
 * Builds the chain (`blocks` blocks, the fixture's six first) and prepares it. `stateAfter` hands
 * back the state manager `executeBlock` made for the block it last executed (the caller's mock of
 * createWitnessState, as test/integration/lagoon-chain-build.test.ts does).
 */
export async function prepareLagoonStandIn(options: {
  readonly blocks: number;
  readonly subblocks: number;
  readonly stateAfter: () => MerkleStateManager;
  /** OP's subblocks form: `state_root`, `block_hash` and `withdrawals_root` zero in every subblock (default: the engine's values). */
  readonly zeroedRoots?: boolean;
}): Promise<StandInChain> {
  const states: MerkleStateManager[] = [];
  const built = await buildLagoonChain(() => {
    const state = options.stateAfter();
    states.push(state);
    return state;
  }, extendedLagoonPlan(options.blocks));
  const genesisHash = built.blocks[0]!.header.parentHash;
  const blocks: StandInBlock[] = [];
  for (const [i, block] of built.blocks.entries()) {
    const transactions: Json[] = [];
    const receipts: Json[] = [];
    let logIndex = 0;
    for (const [index, raw] of block.attributes.transactions.entries()) {
      const receipt = block.receipts[index]!;
      const tx = await transactionJson(raw, index, block, receipt);
      transactions.push(tx);
      receipts.push(receiptJson(receipt, tx, index, block, logIndex));
      logIndex += receipt.logs.length;
    }
    const subblocks = await subblocksOf(block, options.subblocks, options.zeroedRoots ?? false, options.stateAfter, states[i]!);
    blocks.push({
      number: block.number,
      hash: block.hash,
      full: blockJson(block.header, block.hash, transactions, block.attributes.transactions),
      receipts,
      state: states[i]!,
      subblocks,
      refunds: block.refunds,
    });
  }
  const genesisHeader = built.genesis;
  return {
    chainId: CHAIN_ID,
    genesis: {
      hash: genesisHash,
      full: blockJson(genesisHeader, genesisHash, [], []),
      state: createWitnessState(built.blocks[0]!.parentState, genesisHeader.stateRoot),
    },
    blocks,
  };
}
