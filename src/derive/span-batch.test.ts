import { RLP } from '@ethereumjs/rlp';
import { bytesToHex, concat, hexToBytes, recoverTransactionAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { FlashlogError } from '../errors.ts';
import { encodeUvarint } from './reader.ts';
import { decodeRawSpanBatch, deriveSpanBatch, encodeRawSpanBatch, type RawSpanBatch } from './span-batch.ts';
import { spanBatchTxsOf } from './span-batch-txs.ts';

/**
 * Span batches against viem, a strict client: transactions of every type a span batch carries,
 * signed by viem, go into a span batch's fields and come back as the same EIP-2718 bytes, whose
 * signatures viem recovers to the signer.
 */
const chainId = 901;
const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const to = '0x4200000000000000000000000000000000000016';

async function signedTransactions(): Promise<Hex[]> {
  const fees = { maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000n };
  const authorization = await account.signAuthorization({ chainId, address: '0x0000000000000000000000000000000000000abc', nonce: 7 });
  return Promise.all([
    account.signTransaction({ type: 'legacy', chainId, nonce: 0, gas: 21_000n, gasPrice: 1_000_000_000n, to, value: 1n }),
    account.signTransaction({ type: 'legacy', nonce: 1, gas: 50_000n, gasPrice: 1n, to, data: '0x1234' }),
    account.signTransaction({
      type: 'eip2930',
      chainId,
      nonce: 2,
      gas: 60_000n,
      gasPrice: 3n,
      to,
      accessList: [{ address: to, storageKeys: [`0x${'00'.repeat(31)}01`] }],
    }),
    account.signTransaction({ type: 'eip1559', chainId, nonce: 3, gas: 100_000n, ...fees, data: '0x6000' }),
    account.signTransaction({ type: 'eip7702', chainId, nonce: 4, gas: 80_000n, ...fees, to, authorizationList: [authorization] }),
  ]);
}

async function spanOf(transactions: Hex[]): Promise<RawSpanBatch> {
  return {
    relTimestamp: 1234n,
    l1OriginNumber: 100n,
    parentCheck: `0x${'11'.repeat(20)}`,
    l1OriginCheck: `0x${'22'.repeat(20)}`,
    blockCount: 3,
    originBits: [true, false, true],
    blockTxCounts: [2, 0, transactions.length - 2],
    txs: spanBatchTxsOf(
      transactions.map((tx) => hexToBytes(tx)),
      BigInt(chainId),
    ),
  };
}

const errorOf = (run: () => unknown): FlashlogError => {
  try {
    run();
  } catch (error) {
    if (error instanceof FlashlogError) return error;
    throw error;
  }
  throw new Error('expected a FlashlogError');
};

describe('span batches', () => {
  it('carry legacy (protected and not), 2930, 1559 (a creation) and 7702 transactions and rebuild them byte for byte', async () => {
    const transactions = await signedTransactions();
    const raw = await spanOf(transactions);
    const decoded = decodeRawSpanBatch(encodeRawSpanBatch(raw));
    expect(decoded.txs.types).toEqual([0, 0, 1, 2, 4]);
    expect(decoded.txs.protectedBits).toEqual([true, false]);
    expect(decoded.txs.contractCreation).toEqual([false, false, false, true, false]);
    const span = deriveSpanBatch(decoded, { chainId: BigInt(chainId), l2GenesisTime: 1_000n, blockTime: 2n });
    expect(span.blocks.map((block) => [block.timestamp, block.epochNumber, block.transactions.length])).toEqual([
      [2234n, 99n, 2],
      [2236n, 99n, 0],
      [2238n, 100n, 3],
    ]);
    const rebuilt = span.blocks.flatMap((block) => block.transactions.map((tx) => bytesToHex(tx)));
    expect(rebuilt).toEqual(transactions);
    for (const tx of rebuilt) expect(await recoverTransactionAddress({ serializedTransaction: tx as never })).toBe(account.address);
  });

  it('rebuilt with another chain id, the signatures recover to someone else', async () => {
    const transactions = await signedTransactions();
    const span = deriveSpanBatch(await spanOf(transactions), { chainId: BigInt(chainId + 1), l2GenesisTime: 0n, blockTime: 2n });
    const first = bytesToHex(span.blocks[0]!.transactions[0]!);
    expect(first).not.toBe(transactions[0]);
    expect(await recoverTransactionAddress({ serializedTransaction: first as never })).not.toBe(account.address);
  });

  it('refuse a malformed prefix or payload, naming the field and its offset', async () => {
    const valid = encodeRawSpanBatch(await spanOf(await signedTransactions()));
    // rel_timestamp (2 bytes: 1234), l1_origin_num (1 byte: 100), 40 bytes of checks: block_count at offset 43.
    const withCount = (count: Uint8Array) => concat([valid.subarray(0, 43), count, valid.subarray(44)]);
    expect(errorOf(() => decodeRawSpanBatch(withCount(encodeUvarint(0n)))).message).toContain(
      'block_count at offset 44: 0, a span batch must not be empty',
    );
    expect(errorOf(() => decodeRawSpanBatch(withCount(encodeUvarint(10_000_001n)))).message).toMatch(
      /block_count at offset 44: got 10000001, expected at most 10000000/,
    );
    // origin_bits: 3 bits in one byte; a bit above them is refused.
    const strayBit = Uint8Array.from(valid);
    strayBit[44] = 0b1000_0101;
    expect(errorOf(() => decodeRawSpanBatch(strayBit)).message).toContain(
      'origin_bits at offset 45: a bit is set above the 3 bits it holds',
    );
    const overflow = concat([Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]), valid.subarray(2)]);
    expect(errorOf(() => decodeRawSpanBatch(overflow)).message).toContain('rel_timestamp at offset 1: the varint overflows 64 bits');
    const cut = errorOf(() => decodeRawSpanBatch(valid.subarray(0, 100)));
    expect(cut.code).toBe('DERIVE_BATCH_INVALID');
    expect(cut.message).toMatch(/tx_sigs\[\d\]\.[rs] at offset \d+: needs 32 bytes/);
  });

  it('decode a transaction of a type they do not carry, and refuse to rebuild it', async () => {
    const raw = await spanOf(await signedTransactions());
    const blobLike = concat([Uint8Array.of(3), RLP.encode([new Uint8Array(), new Uint8Array(), new Uint8Array(), new Uint8Array(), []])]);
    const withBlob = {
      ...raw,
      txs: { ...raw.txs, datas: raw.txs.datas.map((data, i) => (i === 3 ? blobLike : data)), types: [0, 0, 1, 3, 4] },
    };
    const decoded = decodeRawSpanBatch(encodeRawSpanBatch(withBlob));
    expect(decoded.txs.types[3]).toBe(3);
    const error = errorOf(() => deriveSpanBatch(decoded, { chainId: BigInt(chainId), l2GenesisTime: 0n, blockTime: 2n }));
    expect(error.message).toContain('transaction 3: transaction type 3 is not one a span batch carries');
  });

  it('refuse a non-canonical integer in a tx_data, and a SetCode transaction without a to', async () => {
    const raw = await spanOf(await signedTransactions());
    const leadingZero = RLP.encode([Uint8Array.of(0, 1), Uint8Array.of(1), new Uint8Array()]);
    const bad = { ...raw, txs: { ...raw.txs, datas: raw.txs.datas.map((data, i) => (i === 0 ? leadingZero : data)) } };
    const chain = { chainId: BigInt(chainId), l2GenesisTime: 0n, blockTime: 2n };
    expect(errorOf(() => deriveSpanBatch(decodeRawSpanBatch(encodeRawSpanBatch(bad)), chain)).message).toContain(
      'transaction 0 value: non-canonical integer (leading zero byte)',
    );
    const creation = [...raw.txs.contractCreation];
    creation[4] = true;
    const noTo = { ...raw, txs: { ...raw.txs, contractCreation: creation, tos: raw.txs.tos.slice(0, -1) } };
    expect(errorOf(() => deriveSpanBatch(decodeRawSpanBatch(encodeRawSpanBatch(noTo)), chain)).message).toContain(
      'transaction 4: a SetCode transaction (type 4) needs a to address',
    );
  });
});
