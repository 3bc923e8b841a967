import { keccak256, parseTransaction, recoverTransactionAddress, toHex, type TransactionSerialized } from 'viem';
import { loadFixture } from './feed-server.ts';

/**
 * The real Unichain Sepolia block 35535698 (5 flashblocks, 6 transactions, era A receipts; Unichain
 * runs op-rbuilder behind rollup-boost) as each producer that still streams flashblocks would
 * send it. Only the envelope changes; transactions, roots, receipts and balances are the real ones.
 *
 * - op-rbuilder (flashbots, v0.4.x; op-alloy `OpFlashblockPayload`): `receipts` and
 *   `new_account_balances` are BTreeMaps, so their keys come sorted (by tx hash, by address), not
 *   in block order; `diff.blob_gas_used` is a hex quantity (Jovian; the real block's `blobGasUsed`
 *   is 0x0); `base` is left out after index 0.
 * - X Layer (okx/xlayer-reth `XLayerFlashblockPayload`): the same plus a top-level `target_index`
 *   (0 at index 0, then the index the builder builds up to), and a bare `{payload_id}` frame once
 *   the sequence ends.
 * - OP specs (`specs/protocol/flashblocks.md`): `version`, `parent_flash_hash`, `static` instead of
 *   `base`, metadata `{accounts, transactions}` with no block number and no logs. The spec types
 *   uint64 fields without saying how JSON spells them; here they are JSON numbers and the uint256
 *   base fee a decimal string (both as alloy would read them). `parent_flash_hash` should be the
 *   SSZ hash of the previous flashblock; no producer computes it, so a keccak of the previous
 *   message stands in (flashlog does not verify it). Account nonces are those the block's senders
 *   reach; other accounts' nonces are unknown in the source and left at 0.
 */
export const SOURCE = 'unichain-sepolia-35535698-with-receipts.json';
type Message = Record<string, unknown> & {
  index: number;
  payload_id: string;
  base?: Record<string, unknown> | null;
  diff: Record<string, unknown> & { transactions: `0x${string}`[]; gas_used: string };
  metadata: {
    block_number: number;
    new_account_balances: Record<string, string>;
    receipts: Record<string, Record<string, { status: string; cumulativeGasUsed: string; logs: unknown[] }>>;
  };
};

export const sourceMessages = (): Message[] => loadFixture(SOURCE) as Message[];

const sortedKeys = <T>(record: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

export function opRbuilderMessages(): Record<string, unknown>[] {
  return sourceMessages().map((message) => {
    const { base, ...rest } = message;
    return {
      payload_id: rest.payload_id,
      index: rest.index,
      ...(base ? { base } : {}),
      diff: { ...rest.diff, blob_gas_used: '0x0' },
      metadata: {
        receipts: sortedKeys(rest.metadata.receipts),
        new_account_balances: sortedKeys(rest.metadata.new_account_balances),
        block_number: rest.metadata.block_number,
      },
    };
  });
}

/** X Layer frames as sent, in order: the flashblocks with `target_index`, then the end-of-sequence frame. */
export function xLayerFrames(): Record<string, unknown>[] {
  const messages = opRbuilderMessages();
  const last = messages.length - 1;
  return [
    ...messages.map((message, position) => ({ ...message, target_index: position === 0 ? 0 : last })),
    { payload_id: messages[0]!.payload_id },
  ];
}

export async function opSpecsMessages(): Promise<Record<string, unknown>[]> {
  const source = sourceMessages();
  const nonces = new Map<string, number>();
  for (const message of source) {
    for (const raw of message.diff.transactions) {
      if (raw.startsWith('0x7e')) continue;
      const tx = parseTransaction(raw as TransactionSerialized);
      const from = (await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized })).toLowerCase();
      nonces.set(from, Math.max(nonces.get(from) ?? 0, (tx.nonce ?? 0) + 1));
    }
  }
  const out: Record<string, unknown>[] = [];
  let previousCumulative = 0;
  for (const message of source) {
    const base = message.base;
    const transactions = message.diff.transactions.map((raw) => {
      const receipt = Object.values(message.metadata.receipts[keccak256(raw)]!)[0]!;
      const cumulative = Number(BigInt(receipt.cumulativeGasUsed));
      const gasUsed = cumulative - previousCumulative;
      previousCumulative = cumulative;
      return { status: Number(BigInt(receipt.status)), gas_used: gasUsed, contract_address: null };
    });
    out.push({
      version: '0x00000001',
      payload_id: message.payload_id,
      parent_flash_hash: message.index === 0 ? null : keccak256(toHex(JSON.stringify(out.at(-1)))),
      index: message.index,
      ...(base
        ? {
            static: {
              ...base,
              block_number: Number(BigInt(base.block_number as string)),
              gas_limit: Number(BigInt(base.gas_limit as string)),
              timestamp: Number(BigInt(base.timestamp as string)),
              base_fee_per_gas: BigInt(base.base_fee_per_gas as string).toString(10),
            },
          }
        : {}),
      diff: { ...message.diff, gas_used: Number(BigInt(message.diff.gas_used)) },
      metadata: {
        accounts: Object.entries(message.metadata.new_account_balances).map(([address, balance]) => ({
          address,
          balance,
          nonce: nonces.get(address) ?? 0,
          code: null,
          storage_slots: [],
        })),
        transactions,
      },
    });
  }
  return out;
}
