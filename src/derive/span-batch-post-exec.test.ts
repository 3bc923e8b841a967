import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { encodePostExecTx } from '../op/post-exec.ts';
import { decodeRawSpanBatch, deriveSpanBatch, encodeRawSpanBatch, type RawSpanBatch } from './span-batch.ts';
import { spanBatchTxsOf, type SpanBatchTxs } from './span-batch-txs.ts';
import { sequencerTransactionProblem } from './batch-validity.ts';

/**
 * Lagoon's post-exec transaction in a span batch (specs lagoon/derivation.md @538ff5ed): its
 * tx_data is its EIP-2718 bytes verbatim, its other slots fixed (creation bit 1, no `to`, y parity
 * 0, r = s = 0, nonce 0, gas 0) and checked by the decoder.
 */
const chainId = 901n;
const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const postExec = encodePostExecTx({ version: 1, blockNumber: 77n, gasRefundEntries: [{ index: 1, gasRefund: 500n }] }).raw;

async function span(): Promise<{ raw: RawSpanBatch; transactions: Hex[] }> {
  const user = await account.signTransaction({
    type: 'eip1559',
    chainId: Number(chainId),
    nonce: 3,
    gas: 50_000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
    to: '0x00000000000000000000000000000000000000aa',
  });
  const transactions = [user, postExec];
  const raw: RawSpanBatch = {
    relTimestamp: 10n,
    l1OriginNumber: 5n,
    parentCheck: `0x${'11'.repeat(20)}`,
    l1OriginCheck: `0x${'22'.repeat(20)}`,
    blockCount: 1,
    originBits: [false],
    blockTxCounts: [2],
    txs: spanBatchTxsOf(
      transactions.map((tx) => hexToBytes(tx)),
      chainId,
    ),
  };
  return { raw, transactions };
}
const derive = (raw: RawSpanBatch) =>
  deriveSpanBatch(decodeRawSpanBatch(encodeRawSpanBatch(raw)), { chainId, l2GenesisTime: 0n, blockTime: 2n });

describe('a post-exec transaction (0x7d) in a span batch', () => {
  it('goes in with the fixed slots and comes back byte for byte, after a user transaction whose `to` it does not take', async () => {
    const { raw, transactions } = await span();
    expect(raw.txs.contractCreation).toEqual([false, true]);
    expect(raw.txs.tos).toHaveLength(1);
    expect(raw.txs.datas[1]).toEqual(hexToBytes(postExec));
    const rebuilt = derive(raw).blocks[0]!.transactions.map((tx) => bytesToHex(tx));
    expect(rebuilt).toEqual(transactions);
  });

  it('refuses one whose slots are not the fixed values, naming them', async () => {
    const { raw } = await span();
    const altered = (change: (txs: SpanBatchTxs) => Partial<SpanBatchTxs>): RawSpanBatch => ({
      ...raw,
      txs: { ...raw.txs, ...change(raw.txs) },
    });
    expect(() => derive(altered((txs) => ({ nonces: [txs.nonces[0]!, 1n] })))).toThrow(
      /transaction 1: a post-exec transaction \(0x7d\) with tx_nonces/,
    );
    expect(() => derive(altered((txs) => ({ gases: [txs.gases[0]!, 21_000n] })))).toThrow(/with tx_gases/);
    expect(() => derive(altered((txs) => ({ yParity: [txs.yParity[0]!, true] })))).toThrow(/with y_parity_bits/);
    const r = new Uint8Array(32);
    r[31] = 1;
    expect(() => derive(altered((txs) => ({ signatures: [txs.signatures[0]!, { r, s: new Uint8Array(32) }] })))).toThrow(/with tx_sigs\.r/);
    // Creation bit 0: it would take a `to`; give it one so the batch still reads.
    expect(() => derive(altered((txs) => ({ contractCreation: [false, false], tos: [...txs.tos, `0x${'33'.repeat(20)}`] })))).toThrow(
      /contract_creation_bits \(must be 1\)/,
    );
  });

  it('a batch may carry it from Lagoon on, not before', () => {
    const txs = [hexToBytes(postExec)];
    expect(sequencerTransactionProblem(txs, true, false)).toMatch(/transaction 0 is a PostExec transaction \(0x7d\) before Lagoon/);
    expect(sequencerTransactionProblem(txs, true, true)).toBeUndefined();
  });
});
