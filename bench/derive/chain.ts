import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hexToBytes, keccak256, pad, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeChannelOut, type BatchBlock, type BatchKind } from '../../src/derive/channel-out.ts';
import { derivationConfigOf } from '../../src/derive/derivation-config.ts';
import { deriveBlocks, type DeriveSafeHead } from '../../src/derive/pipeline.ts';
import { forksAtGenesis, parseRollupConfig, type RollupConfig } from '../../src/op/rollup-config.ts';
import { l1SourceFromPreimages } from '../../src/prover/enclave/l1-preimages.ts';
import { preimageStore } from '../../src/prover/enclave/preimage-store.ts';
import {
  appendL1Block,
  batcher,
  blobsPerTx,
  fill,
  fillerTransactions,
  finish,
  inbox,
  l1BlockTime,
  l1ChainId,
  newCase,
  postChannel,
  type DeriveChainCase,
  type L1Tx,
} from './l1.ts';

export { verifyBlobs, type DeriveChainCase } from './l1.ts';

/**
 * A synthetic L1 and a Base-like L2 posted to it, as the preimages the enclave reads
 * (src/prover/enclave/l1-preimages.ts): the setup of bench/derive.ts and its test.
 *
 *   L2    blocks 1..N, block_time 1 s (the rollup config takes whole seconds; Base's Denim blocks
 *         are 200 ms, so the bench counts blocks), each with T user transactions: signed EIP-1559
 *         transfers from one key, nonces in order, each to its own recipient with its own value
 *         (distinct signatures: the compressed size per transaction is not flattered by repeats)
 *   L1    12 s blocks from genesis; each holds `l1FillerTxs` other signed transactions (a pool of
 *         distinct ERC-20-like transfers, each receipt with one Transfer log) and, once the L2
 *         blocks of its past epochs fill a channel (or `maxChannelL1Blocks` pass), the batcher's
 *         transactions for that channel: one span batch, brotli, cut into frames that each fill a
 *         blob, 6 blobs per type-3 transaction (or, for calldata, one 120,000-byte frame per
 *         type-2 transaction). Headers are Prague RLPs with real transactionsRoot and receiptsRoot.
 *   Preimages: each header's RLP and the nodes of both tries (keccak256), each blob's commitment
 *         (sha256 of the versioned hash) and blob ‖ KZG proof (blobKey): micro-eth-signer's KZG,
 *         cached by the blob's sha256 in `cacheDir` when given (about a second per blob to compute).
 */
export interface DeriveChainOptions {
  readonly blocks: number;
  readonly txsPerBlock: number;
  readonly l1FillerTxs: number;
  /** Where signed transactions and KZG commitments and proofs are cached; none: computed each time. */
  readonly cacheDir?: string;
  /** Which L1s to build; default both. */
  readonly targets?: readonly ('blob' | 'calldata')[];
  /** Post a channel at least this often (L1 blocks), full or not; default 10 (2 minutes). */
  readonly maxChannelL1Blocks?: number;
  /** Span batches (default), or singular batches as Base's Denim requires. */
  readonly kind?: BatchKind;
}

export interface DeriveChain {
  readonly rollup: RollupConfig;
  readonly safeHead: DeriveSafeHead;
  readonly until: bigint;
  /** The hash `build` returns for L2 block n (execution is the reexec bench's subject). */
  readonly l2Hash: (n: bigint) => Hex;
  readonly userTxs: number;
  readonly blob?: DeriveChainCase | undefined;
  readonly calldata?: DeriveChainCase | undefined;
}

const user = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const l2ChainId = 84539;
const l2Hash = (n: bigint): Hex => keccak256(toHex(`bench l2 ${n}`));

/** The user transactions, signed once (cached: about 0.35 ms each to sign). */
async function userTransactions(count: number, cacheDir: string | undefined): Promise<Uint8Array[]> {
  const file = cacheDir && join(cacheDir, `derive-user-txs-${count}.bin`);
  if (file) {
    try {
      return splitFramed(readFileSync(file));
    } catch {
      // not cached yet
    }
  }
  const txs: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const signed = await user.signTransaction({
      chainId: l2ChainId,
      type: 'eip1559',
      nonce: i,
      to: `0x${fill('recipient', i).slice(26)}`,
      value: BigInt(1 + (i % 997)) * 10n ** 12n,
      gas: 21_000n,
      maxFeePerGas: 1_000_000_000n + BigInt(i % 13) * 1_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
    txs.push(hexToBytes(signed));
  }
  if (file) writeFileSync(file, joinFramed(txs));
  return txs;
}

const joinFramed = (items: readonly Uint8Array[]) =>
  Buffer.concat(items.flatMap((item) => [Buffer.from(Uint16Array.of(item.length).buffer), Buffer.from(item)]));
function splitFramed(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < data.length;) {
    const length = data[at]! | (data[at + 1]! << 8);
    out.push(data.slice(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return out;
}

/**
 * Builds the L2 chain once and posts it twice: in blobs and in calldata.
 *
 * @example const chain = await buildDeriveChain({ blocks: 24, txsPerBlock: 2, l1FillerTxs: 3 }); chain.blob.preimages
 */
export async function buildDeriveChain(options: DeriveChainOptions): Promise<DeriveChain> {
  if (options.cacheDir) mkdirSync(options.cacheDir, { recursive: true });
  const txs = await userTransactions(options.blocks * options.txsPerBlock, options.cacheDir);
  const fillers = await fillerTransactions(options.l1FillerTxs);

  const targets = options.targets ?? ['blob', 'calldata'];
  const blob = targets.includes('blob') ? await postChain('blob', options, txs, fillers) : undefined;
  const calldata = targets.includes('calldata') ? await postChain('calldata', options, txs, fillers) : undefined;
  const rollup = (blob ?? calldata)!.rollup;
  if (blob && calldata && blob.rollup.genesis?.l1.hash !== calldata.rollup.genesis?.l1.hash)
    throw new Error('derive bench: the two L1s differ at genesis');
  return {
    rollup,
    safeHead: {
      hash: l2Hash(0n),
      number: 0n,
      timestamp: 0n,
      l1Origin: { hash: rollup.genesis!.l1.hash as Hex, number: 0n },
      sequenceNumber: 0n,
      systemConfig: derivationConfigOf(rollup).genesisSystemConfig,
      transactions: [],
    },
    until: BigInt(options.blocks),
    l2Hash,
    userTxs: txs.length,
    blob: blob?.result,
    calldata: calldata?.result,
  };
}

/**
 * One L1 carrying the L2 chain. The L2 blocks' epochs are L1 blocks, so the L1 is built block by
 * block, each posting the channel of the L2 blocks whose epochs it has passed once they fill one
 * (or `maxChannelL1Blocks` passed). Each target has its own L1 (the batches name their L1 origins
 * by hash), so the two channels differ only in those 20-byte checks.
 */
async function postChain(target: 'blob' | 'calldata', options: DeriveChainOptions, txs: readonly Uint8Array[], fillers: readonly L1Tx[]) {
  const maxChannelL1Blocks = options.maxChannelL1Blocks ?? 10;
  const builder = newCase(target);
  const blocks: BatchBlock[] = [];
  let rollup: RollupConfig | undefined;
  let posted = 0;
  let lastPost = 0;
  let nonce = 0;
  for (let l1 = 0; posted < options.blocks; l1++) {
    const time = BigInt(l1) * l1BlockTime;
    // L2 blocks with timestamps before this L1 block: their epochs are all hashed.
    while (blocks.length < options.blocks && BigInt(blocks.length + 1) < time) {
      const n = BigInt(blocks.length + 1);
      const epoch = n / l1BlockTime;
      blocks.push({
        parentHash: l2Hash(n - 1n),
        timestamp: n,
        epochNumber: epoch,
        epochHash: builder.hashes[Number(epoch)]!,
        sequenceNumber: n - epoch * l1BlockTime,
        transactions: txs.slice(Number(n - 1n) * options.txsPerBlock, Number(n) * options.txsPerBlock),
      });
    }
    const pending = blocks.slice(posted);
    const due = pending.length > 0 && (l1 - lastPost >= maxChannelL1Blocks || blocks.length === options.blocks);
    let batcherTxs: L1Tx[] = [];
    if (rollup && (due || estimateFull(pending, options.txsPerBlock))) {
      const chain = derivationConfigOf(rollup).spanBatchChain;
      const out = encodeChannelOut(pending, {
        kind: options.kind ?? 'span',
        compression: 'brotli',
        channelId: toHex(++builder.channels, { size: 16 }),
        chain,
        target,
      });
      builder.batchBytes += out.compressed.length;
      batcherTxs = await postChannel(target, out.data, nonce, builder, options.cacheDir);
      nonce += batcherTxs.length;
      posted = blocks.length;
      lastPost = l1;
    }
    const half = Math.ceil(fillers.length / 2);
    await appendL1Block(builder, l1, time, [...fillers.slice(0, half), ...batcherTxs, ...fillers.slice(half)]);
    if (l1 === 0) rollup = rollupOf(builder.hashes[0]!);
  }
  if (!rollup) throw new Error('derive bench: no L1 blocks');
  return { rollup, result: finish(builder) };
}

/** A channel is worth posting once its blocks likely fill 6 blobs (about 100 compressed bytes a transfer, kept under). */
const estimateFull = (pending: readonly BatchBlock[], txsPerBlock: number) => pending.length * txsPerBlock * 110 > blobsPerTx * 125_000;

function rollupOf(l1Genesis: Hex): RollupConfig {
  return parseRollupConfig({
    l2_chain_id: l2ChainId,
    block_time: 1,
    ...forksAtGenesis('isthmus'),
    chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
    genesis: {
      l1: { hash: l1Genesis, number: 0 },
      l2: { hash: l2Hash(0n), number: 0 },
      l2_time: 0,
      system_config: {
        batcherAddr: batcher.address,
        overhead: pad('0x', { size: 32 }),
        scalar: toHex(1n << 248n, { size: 32 }),
        gasLimit: 240_000_000,
      },
    },
    seq_window_size: 3600,
    max_sequencer_drift: 600,
    channel_timeout: 300,
    l1_chain_id: l1ChainId,
    batch_inbox_address: inbox,
    deposit_contract_address: `0x${fill('portal', 0).slice(26)}`,
    l1_system_config_address: `0x${fill('system config', 0).slice(26)}`,
  });
}

/** What one derivation of a case gave, and how long its parts took. */
export interface DeriveRun {
  readonly blocks: number;
  readonly userTxs: number;
  /** preimageStore: every preimage hashed against its key. */
  readonly storeMs: number;
  /** deriveBlocks through l1SourceFromPreimages (each blob's KZG check included). */
  readonly deriveMs: number;
}

/**
 * Derives the chain from one case's preimages exactly as the enclave reads them; `build` returns
 * the precomputed hashes. Throws unless every L2 block comes back with all its transactions.
 *
 * @example const { deriveMs } = await deriveCase(chain, chain.blob)
 */
export async function deriveCase(chain: DeriveChain, posted: DeriveChainCase): Promise<DeriveRun> {
  const t0 = performance.now();
  const store = preimageStore(posted.preimages);
  const t1 = performance.now();
  const derived = await deriveBlocks({
    rollup: chain.rollup,
    l1: l1SourceFromPreimages(store),
    l1Head: posted.l1Head,
    safeHead: chain.safeHead,
    until: chain.until,
    build: async (block) => chain.l2Hash(block.number),
  });
  const t2 = performance.now();
  const userTxs = derived.reduce((sum, block) => sum + block.attributes.transactions.filter((tx) => !tx.startsWith('0x7e')).length, 0);
  if (derived.length !== Number(chain.until) || userTxs !== chain.userTxs)
    throw new Error(
      `derive bench (${posted.target}): derived ${derived.length} blocks and ${userTxs} user transactions, expected ${chain.until} and ${chain.userTxs}`,
    );
  return { blocks: derived.length, userTxs, storeMs: t1 - t0, deriveMs: t2 - t1 };
}
