import { bytesToHex, hexToBytes, keccak256, recoverTransactionAddress, type Hex, type TransactionSerialized } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { errorMessage, FlashlogError } from '../errors.ts';
import { decodeBlob } from './blob.ts';
import { createChannelBank, type ChannelEvent } from './channel-bank.ts';
import { decompressChannel, readChannelBatches, type ChannelBatches, type CompressionAlgo } from './channel.ts';
import { parseFrames, type Frame } from './frames.ts';
import type { DerivationRules } from './rules.ts';
import type { SpanBatchChain } from './span-batch.ts';

/**
 * What an operator reads from what the batcher posted, as op-node's batch decoder shows it: each
 * input's frames, the channels they complete, and each channel's batches. Inputs are taken in
 * order as if read from one L1 block, through the channel bank of the given fork's rules.
 */

/**
 * One thing the batcher posted, or a part of it:
 * - `transaction`: an EIP-2718 batcher transaction (its calldata holds the frames; a blob
 *   transaction's frames are in its blobs, given as `blob` inputs);
 * - `calldata`: batcher data (version byte and frames);
 * - `blob`: a 131,072-byte blob whose data is batcher data;
 * - `channel`: a compressed channel (its frames' data, concatenated).
 */
export type BatcherInputKind = 'transaction' | 'calldata' | 'blob' | 'channel';

export interface BatcherInput {
  readonly kind: BatcherInputKind;
  readonly bytes: Uint8Array;
  /** Names the input in the report (a file name). */
  readonly label: string;
}

export interface InputReport {
  readonly label: string;
  readonly kind: BatcherInputKind;
  readonly transaction?: {
    hash: Hex;
    type: string;
    from?: Hex;
    to?: Hex | null;
    nonce?: number;
    calldataBytes: number;
    blobVersionedHashes?: readonly Hex[];
  };
  readonly frames?: readonly Frame[];
  readonly error?: string;
}

export interface ChannelReport {
  readonly id: Hex | null;
  readonly frames: readonly number[];
  readonly compressedBytes: number;
  readonly compression?: CompressionAlgo;
  readonly decompressedBytes?: number;
  readonly limited?: boolean;
  readonly read?: ChannelBatches;
  readonly error?: string;
}

export interface BatcherReport {
  readonly inputs: readonly InputReport[];
  readonly channels: readonly ChannelReport[];
  /** Frames and channels the channel bank dropped, and why. */
  readonly dropped: readonly Exclude<ChannelEvent, { type: 'ready' }>[];
  /** Channels left incomplete after the last input. */
  readonly open: ReturnType<ReturnType<typeof createChannelBank>['open']>;
}

/** Batcher data from a transaction input: its calldata, or nothing for a blob transaction. */
async function fromTransaction(input: BatcherInput): Promise<{ report: InputReport; data?: Uint8Array }> {
  const serialized = bytesToHex(input.bytes) as TransactionSerialized;
  let tx: ReturnType<typeof parseTransaction>;
  try {
    tx = parseTransaction(serialized);
  } catch (error) {
    throw new FlashlogError('TX_INVALID', notATransaction(input.bytes, error), { cause: error });
  }
  const data = hexToBytes(('data' in tx && tx.data) || '0x');
  let from: Hex | undefined = 'from' in tx ? (tx.from as Hex) : undefined;
  if (!from) from = await recoverTransactionAddress({ serializedTransaction: serialized as never }).catch(() => undefined);
  const blobs = 'blobVersionedHashes' in tx ? tx.blobVersionedHashes : undefined;
  const report: InputReport = {
    label: input.label,
    kind: input.kind,
    transaction: {
      hash: keccak256(input.bytes),
      type: tx.type ?? 'legacy',
      ...(from ? { from } : {}),
      to: tx.to ?? null,
      ...(tx.nonce !== undefined ? { nonce: tx.nonce } : {}),
      calldataBytes: data.length,
      ...(blobs ? { blobVersionedHashes: blobs } : {}),
    },
  };
  // A blob transaction's calldata is ignored by derivation; its frames are in the blobs.
  return tx.type === 'eip4844' ? { report } : { report, data };
}

/**
 * Why `bytes` are not a signed transaction, in words: viem's parser answers a length prefix that
 * runs past the end with ``Position `46` is out of bounds``, which names neither the input nor
 * what was expected.
 */
function notATransaction(bytes: Uint8Array, error: unknown): string {
  const first = bytes[0] ?? 0;
  const shape = first >= 0xc0 ? 'a legacy transaction (an RLP list)' : `a type 0x${first.toString(16).padStart(2, '0')} transaction`;
  const short = (error as { shortMessage?: unknown }).shortMessage;
  const viemSays = typeof short === 'string' ? short : errorMessage(error).split('\n')[0]!;
  const why = /out of bounds/i.test(viemSays) ? `read as ${shape}, its length prefix runs past the end` : viemSays.replace(/\.$/, '');
  return `not a signed transaction (${bytes.length} bytes starting 0x${first.toString(16).padStart(2, '0')}: ${why}); expected a raw EIP-2718 batcher transaction, or --batch-input calldata|blob|channel for other batcher data`;
}

/**
 * Decodes batcher inputs into frames, channels and batches. Never throws for bad input: what
 * does not decode is reported on the input or channel it came from.
 *
 * @example await decodeBatcherData([{ kind: 'transaction', bytes, label: 'tx.bin' }], derivationRules('jovian'), { chainId: 10n, l2GenesisTime: 1686068903n, blockTime: 2n })
 */
export async function decodeBatcherData(
  inputs: readonly BatcherInput[],
  rules: DerivationRules,
  chain?: SpanBatchChain,
): Promise<BatcherReport> {
  const bank = createChannelBank(rules);
  const reports: InputReport[] = [];
  const channels: ChannelReport[] = [];
  const dropped: Exclude<ChannelEvent, { type: 'ready' }>[] = [];
  const readChannel = async (id: Hex | null, frames: readonly number[], data: Uint8Array): Promise<ChannelReport> => {
    const base = { id, frames, compressedBytes: data.length };
    try {
      const decompressed = await decompressChannel(data, rules);
      const read = readChannelBatches(decompressed, rules, chain, id ? `channel ${id}` : 'channel');
      return {
        ...base,
        compression: decompressed.compression,
        decompressedBytes: decompressed.data.length,
        limited: decompressed.limited,
        read,
      };
    } catch (error) {
      if (!(error instanceof FlashlogError)) throw error;
      return { ...base, error: error.message };
    }
  };
  for (const input of inputs) {
    if (input.kind === 'channel') {
      reports.push({ label: input.label, kind: input.kind });
      channels.push(await readChannel(null, [], input.bytes));
      continue;
    }
    let report: InputReport = { label: input.label, kind: input.kind };
    let data: Uint8Array | undefined;
    try {
      if (input.kind === 'transaction') ({ report, data } = await fromTransaction(input));
      else data = input.kind === 'blob' ? decodeBlob(input.bytes) : input.bytes;
      if (data) {
        const frames = parseFrames(data);
        report = { ...report, frames };
        for (const event of bank.ingest(frames, 0)) {
          if (event.type === 'ready') {
            const { channel } = event;
            channels.push(
              await readChannel(
                channel.id,
                channel.frames.map((frame) => frame.frameNumber),
                channel.data,
              ),
            );
          } else dropped.push(event);
        }
      }
    } catch (error) {
      // One line: viem's errors carry a blank line, docs and its version after the first.
      const message = (error as { shortMessage?: unknown }).shortMessage;
      report = { ...report, error: typeof message === 'string' ? message : errorMessage(error).split('\n')[0]! };
    }
    reports.push(report);
  }
  return { inputs: reports, channels, dropped, open: bank.open() };
}
