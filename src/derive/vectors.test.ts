import { readFileSync } from 'node:fs';
import { bytesToHex, hexToBytes, parseTransaction, recoverTransactionAddress, type TransactionSerialized } from 'viem';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../test/helpers/shared.ts';
import { createChannelBank } from './channel-bank.ts';
import { decompressChannel, readChannelBatches, type ChannelBatch } from './channel.ts';
import { parseFrames } from './frames.ts';
import { derivationRules } from './rules.ts';
import { decodeRawSpanBatch, deriveSpanBatch, encodeRawSpanBatch, type RawSpanBatch } from './span-batch.ts';
import { spanBatchTxsOf } from './span-batch-txs.ts';

/**
 * The public decoding vectors (shared/fixtures/derivation, from kona's test data; SOURCE.md there
 * says what each must give). None carries an L2 output, so beyond what kona checks, these hold the
 * decoder against the real chain: the OP Mainnet batch rebuilds into transactions whose signatures
 * recover to senders with consecutive nonces, and every span batch re-encodes, from its rebuilt
 * EIP-2718 transactions, to the bytes op-batcher (or op-node's tests) wrote.
 */
const vector = (name: string) => readFileSync(sharedPath(`fixtures/derivation/${name}`));
const opMainnet = { chainId: 10n, l2GenesisTime: 1_686_068_903n, blockTime: 2n };
const bedrock = derivationRules('bedrock');
const fjord = derivationRules('fjord');

/** The raw span batch again, its transactions taken from their rebuilt EIP-2718 bytes. */
function reencodedFromTransactions(raw: RawSpanBatch, chainId: bigint): Uint8Array {
  const transactions = deriveSpanBatch(raw, { chainId, l2GenesisTime: 0n, blockTime: 2n }).blocks.flatMap((block) => block.transactions);
  return encodeRawSpanBatch({ ...raw, txs: spanBatchTxsOf(transactions, chainId) });
}

const spanOf = (batch: ChannelBatch | undefined) => {
  if (batch?.type !== 'span') throw new Error(`expected a span batch, got ${batch?.type}`);
  return batch;
};

describe('raw_batcher_tx.hex: an OP Mainnet calldata batcher transaction', async () => {
  const bytes = vector('raw_batcher_tx.hex');
  const serialized = bytesToHex(bytes) as TransactionSerialized;
  const tx = parseTransaction(serialized);
  const calldata = hexToBytes(tx.data!);
  const frames = parseFrames(calldata);
  const events = createChannelBank(derivationRules('delta')).ingest(frames, 0);
  const ready = events.flatMap((event) => (event.type === 'ready' ? [event.channel] : []));
  const decompressed = await decompressChannel(ready[0]!.data, derivationRules('delta'));
  const read = readChannelBatches(decompressed, derivationRules('delta'), opMainnet);

  it('is a transaction from the batcher to the batch inbox with 119,823 bytes of calldata (kona)', async () => {
    expect(calldata.length).toBe(119_823);
    expect(tx.to).toBe('0xff00000000000000000000000000000000000010');
    expect(await recoverTransactionAddress({ serializedTransaction: serialized as never })).toBe(
      '0x6887246668a3b87F54DeB3b94Ba47a6f63F32985',
    );
  });

  it('holds one frame that is a whole zlib channel, read to its end', () => {
    expect(frames.map((frame) => [frame.frameNumber, frame.isLast, frame.data.length])).toEqual([[0, true, 119_799]]);
    expect(ready).toHaveLength(1);
    expect(decompressed.compression).toBe('zlib');
    expect(read.end).toEqual({ reason: 'end' });
    expect(read.batches).toHaveLength(1);
  });

  it('is a span batch of 27 blocks whose transactions are signed OP Mainnet transactions', async () => {
    const span = spanOf(read.batches[0]);
    expect(span.raw.blockCount).toBe(27);
    expect(span.batch?.blocks).toHaveLength(27);
    const blocks = span.batch!.blocks;
    expect(blocks[0]!.timestamp).toBe(opMainnet.l2GenesisTime + span.raw.relTimestamp);
    expect(blocks.at(-1)!.timestamp - blocks[0]!.timestamp).toBe(52n);
    expect(blocks.at(-1)!.epochNumber).toBe(span.raw.l1OriginNumber);
    expect(blocks[0]!.epochNumber).toBe(span.raw.l1OriginNumber - BigInt(span.raw.originBits.slice(1).filter(Boolean).length));
    const transactions = blocks.flatMap((block) => block.transactions);
    expect(transactions).toHaveLength(span.raw.blockTxCounts.reduce((a, b) => a + b, 0));
    // A wrong v, chain id or field order recovers a random sender per transaction; the real ones
    // come from accounts that send again and again, each with its next nonce.
    const nonces = new Map<string, number[]>();
    for (const raw of transactions) {
      const parsed = parseTransaction(bytesToHex(raw) as TransactionSerialized);
      if (parsed.chainId !== undefined) expect(parsed.chainId).toBe(10);
      const from = await recoverTransactionAddress({ serializedTransaction: bytesToHex(raw) as never });
      nonces.set(from, [...(nonces.get(from) ?? []), parsed.nonce!]);
    }
    const repeated = [...nonces.values()].filter((list) => list.length > 1);
    expect(repeated.length).toBeGreaterThan(5);
    for (const list of repeated) expect(list).toEqual(list.map((_, i) => list[0]! + i));
  });

  it('re-encodes from its rebuilt transactions to the batcher’s bytes', () => {
    const span = spanOf(read.batches[0]);
    const content = decompressed.data.subarray(decompressed.data.length - encodeRawSpanBatch(span.raw).length);
    expect(bytesToHex(reencodedFromTransactions(span.raw, 10n))).toBe(bytesToHex(content));
  });
});

describe('batch.hex: a zlib channel', async () => {
  const channel = hexToBytes(`0x${readFileSync(sharedPath('fixtures/derivation/batch.hex'), 'utf8').trim()}`);

  it('decompresses and reads batches to the end of its data under the Bedrock and the Fjord limits (kona)', async () => {
    for (const rules of [bedrock, fjord]) {
      const decompressed = await decompressChannel(channel, rules);
      expect(decompressed.data.length).toBe(1_409_463);
      expect(decompressed.limited).toBe(false);
      const read = readChannelBatches(decompressed, rules);
      expect(read.end).toEqual({ reason: 'end' });
      expect(read.batches).toHaveLength(1);
    }
  });

  it('holds one span batch of 143 blocks that re-encodes to its own bytes', async () => {
    const decompressed = await decompressChannel(channel, fjord);
    const span = spanOf(readChannelBatches(decompressed, fjord).batches[0]);
    expect(span.raw.blockCount).toBe(143);
    const encoded = encodeRawSpanBatch(span.raw);
    expect(bytesToHex(decompressed.data.subarray(decompressed.data.length - encoded.length))).toBe(bytesToHex(encoded));
  });

  it('is cut at a limit below its size: the batch does not fit and is not read', async () => {
    const rules = { ...fjord, maxRlpBytesPerChannel: 1_000_000 };
    const decompressed = await decompressChannel(channel, rules);
    expect(decompressed.limited).toBe(true);
    const read = readChannelBatches(decompressed, rules);
    expect(read.batches).toHaveLength(0);
    expect(read.end).toMatchObject({ reason: 'limit', offset: 0 });
  });
});

describe("raw_batch.hex: a span batch from op-node's tests", () => {
  const bytes = new Uint8Array(vector('raw_batch.hex'));
  const raw = decodeRawSpanBatch(bytes);

  it('decodes and re-encodes to the same bytes (kona)', () => {
    expect(raw.blockCount).toBeGreaterThan(0);
    expect(bytesToHex(encodeRawSpanBatch(raw))).toBe(bytesToHex(bytes));
  });

  it('rebuilds its transactions with chain id 981 (as kona recovers them) and encodes back from them', () => {
    const span = deriveSpanBatch(raw, { chainId: 981n, l2GenesisTime: 0n, blockTime: 2n });
    expect(span.blocks.flatMap((block) => block.transactions)).toHaveLength(raw.txs.datas.length);
    expect(bytesToHex(reencodedFromTransactions(raw, 981n))).toBe(bytesToHex(bytes));
  });
});
