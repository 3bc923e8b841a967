import { bytesToHex, hexToBytes, parseTransaction, recoverTransactionAddress, type Hex, type TransactionSerialized } from 'viem';
import { decodeBlob } from './blob.ts';
import { parseFrames, type Frame } from './frames.ts';
import type { L1BlockHeader, L1Source } from './l1-source.ts';

/**
 * The frames an L1 block carries for a chain (specs/protocol/derivation.md "L1 Retrieval"; Ecotone's
 * blob retrieval): every transaction to the batch inbox signed by the batcher, in block order. A
 * blob transaction's data is its blobs (each checked by the L1 source against its versioned hash),
 * its calldata ignored; any other type's data is its calldata. Data that does not parse as frames
 * is dropped whole, as op-node drops it, and reported.
 */
export interface BatcherFrames {
  readonly frames: readonly Frame[];
  /** The transaction the frames came from, for reports and errors. */
  readonly transactionIndex: number;
}

export interface BatcherTxsResult {
  readonly accepted: readonly BatcherFrames[];
  /** Inbox transactions not taken, and why (another sender, unparseable frames). */
  readonly ignored: readonly { readonly transactionIndex: number; readonly reason: string }[];
}

export async function batcherFramesOf(l1: L1Source, header: L1BlockHeader, inbox: Hex, batcher: Hex): Promise<BatcherTxsResult> {
  const accepted: BatcherFrames[] = [];
  const ignored: { transactionIndex: number; reason: string }[] = [];
  const transactions = await l1.transactions(header);
  for (const [index, raw] of transactions.entries()) {
    const serialized = bytesToHex(raw) as TransactionSerialized;
    let tx: ReturnType<typeof parseTransaction>;
    try {
      tx = parseTransaction(serialized);
    } catch {
      continue; // Not a transaction viem reads (a type derivation never looks at).
    }
    if (tx.to?.toLowerCase() !== inbox.toLowerCase()) continue;
    const sender = await recoverTransactionAddress({ serializedTransaction: serialized as never });
    if (sender.toLowerCase() !== batcher.toLowerCase()) {
      ignored.push({ transactionIndex: index, reason: `sent by ${sender}, not the batcher ${batcher}` });
      continue;
    }
    // A blob that is missing or fails its KZG check throws from the source: the proof stops there.
    const datas: (() => Uint8Array)[] =
      tx.type === 'eip4844'
        ? (tx.blobVersionedHashes ?? []).map((hash) => {
            const blob = l1.blob(hash);
            return () => decodeBlob(blob);
          })
        : [() => hexToBytes(tx.data ?? '0x')];
    for (const data of datas) {
      try {
        accepted.push({ frames: parseFrames(data()), transactionIndex: index });
      } catch (error) {
        ignored.push({ transactionIndex: index, reason: (error as Error).message });
      }
    }
  }
  return { accepted, ignored };
}
