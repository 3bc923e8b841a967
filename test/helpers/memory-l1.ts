/**
 * A synthetic L1 held in memory for derivation's unit tests (src/derive/pipeline*.test.ts): headers
 * `l1Hash(n)` 12 s apart, the transactions and receipts a test puts in each block, and the
 * batcher transactions that post L2 blocks to the inbox as one channel in calldata.
 */
import { hexToBytes, keccak256, parseEther, toHex, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { encodeChannelOut, type BatchBlock, type BatchKind } from '../../src/derive/channel-out.ts';
import type { CompressionAlgo } from '../../src/derive/channel.ts';
import type { DerivationConfig } from '../../src/derive/derivation-config.ts';
import type { L1BlockHeader, L1Source } from '../../src/derive/l1-source.ts';
import type { L1Receipt } from '../../src/derive/user-deposits.ts';
import { portal, systemConfigAddress } from './l1-logs.ts';

export const l1ChainId = 900;

/** The derivation fields of a test rollup config on this L1 (a short sequencing window: 4 L1 blocks). */
export const memoryL1RollupFields = {
  seq_window_size: 4,
  max_sequencer_drift: 600,
  channel_timeout: 300,
  l1_chain_id: l1ChainId,
  batch_inbox_address: '0xff00000000000000000000000000000000042069',
  deposit_contract_address: portal,
  l1_system_config_address: systemConfigAddress,
} as const;

/**
 * A test rollup config's `genesis` on this L1: L1 block 0, L2 block `l2Hash(0)` at `l2Time`, the
 * SystemConfig naming `batcher` (Ecotone scalar version 1) with 30M gas and `extra`.
 */
export function memoryL1Genesis(batcher: Hex, l2Time = 0, extra: Record<string, unknown> = {}) {
  return {
    l1: { hash: l1Hash(0n), number: 0 },
    l2: { hash: l2Hash(0n), number: 0 },
    l2_time: l2Time,
    system_config: {
      batcherAddr: batcher,
      overhead: toHex(0, { size: 32 }),
      scalar: toHex(1n << 248n, { size: 32 }),
      gasLimit: 30_000_000,
      ...extra,
    },
  };
}

/** An L2 user transfer of 0.001 ether to `to`, signed (a batch's transaction). */
export async function signedTransfer(from: PrivateKeyAccount, chainId: number, nonce: bigint, to: Hex): Promise<Uint8Array> {
  const tx = await from.signTransaction({
    chainId,
    type: 'eip1559',
    nonce: Number(nonce),
    to,
    value: parseEther('0.001'),
    gas: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  return hexToBytes(tx);
}

/** L1 block `n`'s hash. */
export function l1Hash(n: bigint): Hex {
  return keccak256(toHex(`l1 ${n}`));
}

/** L2 block `n`'s stand-in hash (tests whose `build` executes nothing). */
export function l2Hash(n: bigint): Hex {
  return keccak256(toHex(`l2 ${n}`));
}

/** An L1 of `count` blocks 12 s apart from `genesisTime`, with the given transactions and receipts per block. */
export function memoryL1(
  count: number,
  txs: Map<bigint, Uint8Array[]>,
  receipts: Map<bigint, L1Receipt[]>,
  genesisTime = 0n,
): L1Source & { headers: L1BlockHeader[] } {
  const headers: L1BlockHeader[] = Array.from({ length: count }, (_, i) => ({
    hash: l1Hash(BigInt(i)),
    parentHash: i === 0 ? toHex(0, { size: 32 }) : l1Hash(BigInt(i - 1)),
    number: BigInt(i),
    timestamp: genesisTime + BigInt(12 * i),
    baseFeePerGas: 1_000_000_000n,
    mixHash: keccak256(toHex(`randao ${i}`)),
    parentBeaconBlockRoot: keccak256(toHex(`beacon ${i}`)),
    excessBlobGas: 0n,
    transactionsRoot: toHex(0, { size: 32 }),
    receiptsRoot: toHex(0, { size: 32 }),
  }));
  const byHash = new Map(headers.map((header) => [header.hash, header]));
  return {
    headers,
    header(hash) {
      const header = byHash.get(hash);
      if (!header) throw new Error(`L1 header ${hash} missing`);
      return header;
    },
    transactions: async (header) => txs.get(header.number) ?? [],
    receipts: async (header) => receipts.get(header.number) ?? [],
    blob: () => {
      throw new Error('no blobs here');
    },
  };
}

/** The batcher transactions (calldata) posting `blocks` as one channel, signed by `from`. */
export async function batcherTxs(
  config: DerivationConfig,
  from: PrivateKeyAccount,
  blocks: BatchBlock[],
  kind: BatchKind,
  compression: CompressionAlgo,
  nonce = 0,
): Promise<Uint8Array[]> {
  const out = encodeChannelOut(blocks, {
    kind,
    compression,
    channelId: toHex(nonce + 7, { size: 16 }),
    target: 'calldata',
    chain: config.spanBatchChain,
  });
  return Promise.all(
    out.data.map(async (data, i) =>
      hexToBytes(
        await from.signTransaction({
          chainId: l1ChainId,
          type: 'eip1559',
          nonce: nonce + i,
          to: config.batchInbox,
          data: toHex(data),
          gas: 1_000_000n,
          maxFeePerGas: 10n ** 10n,
          maxPriorityFeePerGas: 1n,
        }),
      ),
    ),
  );
}
