import { numberToHex } from 'viem';
import { z } from 'zod';
import { address, bloom, hash32, hexBytes, payloadId, quantity } from './hex.ts';

/**
 * A flashblock message as the builders that still stream them send it (snake_case, no rename).
 * Sources: base/base `crates/alloy/rpc-types-engine/src/flashblock/{payload,base,delta,metadata}.rs`,
 * op-alloy `OpFlashblockPayload` (what op-rbuilder publishes), rollup-boost `specs/flashblocks.md`.
 * Unknown fields are kept (loose objects), never rejected: Base says `metadata` changes without
 * notice. Three producers, one shape after decoding:
 *
 *   Base / op-rbuilder: { payload_id: B64, index: u64 (JSON number), base?: Base | null, diff: Delta,
 *                         metadata: { block_number: u64 (JSON number), new_account_balances?, receipts?, access_list? } }
 *   X Layer:            the same plus a top-level `target_index` (u64: the index the builder will build
 *                       up to; 0 at index 0), and bare `{payload_id}` end-of-sequence frames (src/wire/frame.ts)
 *   OP specs:           { version, payload_id, parent_flash_hash?, index, static?: Base, diff: Delta,
 *                         metadata: { accounts: [...], transactions: [...] } }
 *                       (ethereum-optimism/specs `specs/protocol/flashblocks.md`; no chain is known to run it)
 *
 * `base` (or `static`) is present at index 0 only; later indices omit it or send null. The OP-specs
 * metadata has no block number: decoding takes it from `static` at index 0 and, after that, from
 * the payload id (src/wire/payload-blocks.ts).
 *
 * Quantities are read as leniently as alloy reads them (ruint's serde): a 0x-hex string, a decimal
 * string, or a JSON number; numbers and decimal strings become hex quantities, hex is kept as sent.
 */
const feedQuantity = z.union(
  [
    quantity,
    z
      .string()
      .regex(/^[0-9]{1,78}$/, 'expected a 0x-hex quantity or decimal digits')
      .transform((digits) => numberToHex(BigInt(digits))),
    z
      .number()
      .int()
      .nonnegative()
      .refine(Number.isSafeInteger, 'expected an integer below 2^53 (larger ones lose precision in JSON)')
      .transform((value) => numberToHex(value)),
  ],
  { error: 'expected a 0x-hex quantity, decimal digits or a non-negative integer' },
);

/** `metadata.block_number` is a JSON number on the wire (u64 without serde quantity); a hex string is accepted too. */
const blockNumberField = z.union(
  [
    z.number().int().nonnegative().refine(Number.isSafeInteger, 'expected an integer below 2^53'),
    quantity.transform((hex) => Number(BigInt(hex))).refine(Number.isSafeInteger, 'expected a block number below 2^53'),
  ],
  { error: 'expected a block number (JSON integer or 0x-hex)' },
);

export const flashblockBaseSchema = z.looseObject({
  parent_beacon_block_root: hash32,
  parent_hash: hash32,
  fee_recipient: address,
  prev_randao: hash32,
  block_number: feedQuantity,
  gas_limit: feedQuantity,
  timestamp: feedQuantity,
  extra_data: hexBytes,
  base_fee_per_gas: feedQuantity,
});

export const withdrawalSchema = z.looseObject({
  index: feedQuantity,
  validatorIndex: feedQuantity,
  address,
  amount: feedQuantity,
});

/** Running fields are cumulative for the block so far; `transactions` holds only the new ones. */
export const flashblockDiffSchema = z.looseObject({
  state_root: hash32,
  receipts_root: hash32,
  logs_bloom: bloom,
  gas_used: feedQuantity,
  block_hash: hash32,
  transactions: z.array(hexBytes.refine((tx) => tx.length > 2, 'expected a non-empty transaction')),
  withdrawals: z.array(withdrawalSchema).default([]),
  withdrawals_root: hash32,
  blob_gas_used: feedQuantity.optional().nullable(),
  /**
   * Lagoon (OP Subblocks): the in-progress block's post-exec transaction, 0x7d ‖ rlp(payload);
   * absent when the block has none so far. Restated by every subblock; only the last one's is the
   * sealed block's (specs lagoon/post-exec.md § Subblocks). It is never in `transactions`.
   */
  post_exec_tx: hexBytes
    .refine((tx) => tx.toLowerCase().startsWith('0x7d'), 'expected a post-exec transaction (type byte 0x7d)')
    .optional()
    .nullable(),
});

export const metadataLogSchema = z.looseObject({
  address,
  topics: z.array(hash32),
  data: hexBytes,
});

/** The receipt body shared by every receipt kind (alloy `Receipt`, camelCase). */
export const metadataReceiptBodySchema = z.looseObject({
  status: z.union([quantity, z.boolean()]),
  cumulativeGasUsed: feedQuantity,
  logs: z.array(metadataLogSchema),
  depositNonce: feedQuantity.optional().nullable(),
  depositReceiptVersion: feedQuantity.optional().nullable(),
});

const receiptKinds = ['Legacy', 'Eip2930', 'Eip1559', 'Eip4844', 'Eip7702', 'Deposit'] as const;
export const receiptTypeByKind: Record<(typeof receiptKinds)[number], `0x${string}`> = {
  Legacy: '0x0',
  Eip2930: '0x1',
  Eip1559: '0x2',
  Eip4844: '0x3',
  Eip7702: '0x4',
  Deposit: '0x7e',
};

/**
 * Era A (and op-rbuilder today, op-alloy `OpReceipt`): externally tagged `{"Eip1559": {...}}`.
 * Era B: internally tagged `{"type": "0x2", ...}`. Both normalise to the body plus a `type` quantity.
 */
export const metadataReceiptSchema = z.union([
  metadataReceiptBodySchema.extend({ type: quantity }),
  z
    .partialRecord(z.enum(receiptKinds), metadataReceiptBodySchema)
    .refine((value) => Object.keys(value).length === 1, 'expected exactly one receipt kind')
    .transform((value) => {
      const [kind, body] = Object.entries(value)[0] as [(typeof receiptKinds)[number], z.output<typeof metadataReceiptBodySchema>];
      return { ...body, type: receiptTypeByKind[kind] };
    }),
]);
export type MetadataReceipt = z.output<typeof metadataReceiptSchema>;

/** OP specs `AccountMetadata`: an account's state after the flashblock (kept, not used: flashlog executes). */
export const specAccountSchema = z.looseObject({
  address,
  balance: feedQuantity.optional().nullable(),
  nonce: feedQuantity,
  code: hexBytes.optional().nullable(),
  storage_slots: z.array(z.looseObject({ key: feedQuantity, value: feedQuantity })).default([]),
});

/** OP specs `TransactionMetadata`: status and gas of each new transaction, without logs (so no receipts). */
export const specTransactionSchema = z.looseObject({
  status: z.union([feedQuantity, z.boolean()]),
  gas_used: feedQuantity,
  contract_address: address.optional().nullable(),
});

/**
 * Era A/B and op-rbuilder: `{block_number, new_account_balances, receipts}`; Era C (Azul):
 * `{block_number, access_list}`; OP specs: `{accounts, transactions}`. Nothing is required here:
 * the block number is settled in `flashblockSchema` / the decoder (from `base` at index 0 when absent).
 */
export const flashblockMetadataSchema = z.looseObject({
  block_number: blockNumberField.optional(),
  new_account_balances: z.record(address, feedQuantity).optional().nullable(),
  receipts: z.record(hash32, metadataReceiptSchema).optional().nullable(),
  access_list: z.unknown().optional(),
  accounts: z.array(specAccountSchema).optional().nullable(),
  transactions: z.array(specTransactionSchema).optional().nullable(),
});

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Any producer's message, before its block number is settled. The OP specs' `static` is read as
 * `base` (the raw message keeps both as sent); `version` and `parent_flash_hash` are checked for
 * shape and kept: `parent_flash_hash` is an SSZ hash no producer is known to compute, so it is
 * not verified. X Layer's `target_index` is typed when it is a u64 and ignored otherwise, as
 * Base's node ignores fields it does not know.
 */
export const flashblockWireSchema = z.preprocess(
  (value) => (isRecord(value) && value.base == null && isRecord(value.static) ? { ...value, base: value.static } : value),
  z
    .looseObject({
      payload_id: payloadId,
      index: z.number().int().nonnegative(),
      base: flashblockBaseSchema.optional().nullable(),
      diff: flashblockDiffSchema,
      metadata: flashblockMetadataSchema,
      version: z.union([hexBytes, z.number().int().nonnegative()]).optional().nullable(),
      parent_flash_hash: z
        .union([hash32, z.literal('0x')])
        .optional()
        .nullable(),
      target_index: z.number().int().nonnegative().optional().catch(undefined),
    })
    .superRefine((value, context) => {
      if (value.index === 0 && !value.base) {
        context.addIssue({ code: 'custom', path: ['base'], message: 'index 0 must carry base (or static)' });
      }
      if (
        value.base &&
        value.metadata.block_number !== undefined &&
        BigInt(value.base.block_number) !== BigInt(value.metadata.block_number)
      ) {
        context.addIssue({
          code: 'custom',
          path: ['metadata', 'block_number'],
          message: `metadata.block_number ${value.metadata.block_number} differs from base.block_number ${value.base.block_number}`,
        });
      }
    }),
);

export type WireFlashblock = z.output<typeof flashblockWireSchema>;
/** A flashblock whose block number is known: every stage after decoding sees only these. */
export type Flashblock = WireFlashblock & { readonly metadata: WireFlashblock['metadata'] & { readonly block_number: number } };

/** The block number a message names itself: `metadata.block_number`, else `base.block_number`; undefined for a later OP-specs index. */
export function ownBlockNumber(flashblock: WireFlashblock): number | undefined {
  return flashblock.metadata.block_number ?? (flashblock.base ? Number(BigInt(flashblock.base.block_number)) : undefined);
}

/** The message with its block number settled. */
export const numbered = (flashblock: WireFlashblock, blockNumber: number): Flashblock => ({
  ...flashblock,
  metadata: { ...flashblock.metadata, block_number: blockNumber },
});

/** A message that names its own block number (every format but a later OP-specs index); for fixtures and tests. */
export const flashblockSchema = flashblockWireSchema.transform((value, context): Flashblock => {
  const blockNumber = ownBlockNumber(value);
  if (blockNumber === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['metadata', 'block_number'],
      message: 'absent, and the message has no base or static to take it from',
    });
    return z.NEVER;
  }
  return numbered(value, blockNumber);
});

export type FlashblockBase = z.output<typeof flashblockBaseSchema>;
export type FlashblockDiff = z.output<typeof flashblockDiffSchema>;
