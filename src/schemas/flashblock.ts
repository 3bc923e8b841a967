import { z } from 'zod';
import { address, bloom, hash32, hexBytes, payloadId, quantity } from './hex.ts';

/**
 * A flashblock message as Base's builder and websocket-proxy send it (snake_case, no rename).
 * Sources: base/base `crates/alloy/rpc-types-engine/src/flashblock/{payload,base,delta,metadata}.rs`,
 * rollup-boost `specs/flashblocks.md`. Unknown fields are kept (loose objects), never rejected:
 * Base says `metadata` changes without notice.
 *
 *   { payload_id: B64, index: u64 (JSON number), base?: Base | null, diff: Delta, metadata: {...} }
 *
 * `base` is present at index 0 only; later indices omit it or send null.
 */
export const flashblockBaseSchema = z.looseObject({
  parent_beacon_block_root: hash32,
  parent_hash: hash32,
  fee_recipient: address,
  prev_randao: hash32,
  block_number: quantity,
  gas_limit: quantity,
  timestamp: quantity,
  extra_data: hexBytes,
  base_fee_per_gas: quantity,
});

export const withdrawalSchema = z.looseObject({
  index: quantity,
  validatorIndex: quantity,
  address,
  amount: quantity,
});

/** Running fields are cumulative for the block so far; `transactions` holds only the new ones. */
export const flashblockDiffSchema = z.looseObject({
  state_root: hash32,
  receipts_root: hash32,
  logs_bloom: bloom,
  gas_used: quantity,
  block_hash: hash32,
  transactions: z.array(hexBytes.refine((tx) => tx.length > 2, 'expected a non-empty transaction')),
  withdrawals: z.array(withdrawalSchema).default([]),
  withdrawals_root: hash32,
  blob_gas_used: quantity.optional().nullable(),
});

export const metadataLogSchema = z.looseObject({
  address,
  topics: z.array(hash32),
  data: hexBytes,
});

/** The receipt body shared by every receipt kind (alloy `Receipt`, camelCase). */
export const metadataReceiptBodySchema = z.looseObject({
  status: z.union([quantity, z.boolean()]),
  cumulativeGasUsed: quantity,
  logs: z.array(metadataLogSchema),
  depositNonce: quantity.optional().nullable(),
  depositReceiptVersion: quantity.optional().nullable(),
});

const receiptKinds = ['Legacy', 'Eip2930', 'Eip1559', 'Eip4844', 'Eip7702', 'Deposit'] as const;
export const receiptTypeByKind: Record<(typeof receiptKinds)[number], `0x${string}`> = {
  Legacy: '0x0', Eip2930: '0x1', Eip1559: '0x2', Eip4844: '0x3', Eip7702: '0x4', Deposit: '0x7e',
};

/**
 * Era A: externally tagged `{"Eip1559": {...}}`. Era B: internally tagged `{"type": "0x2", ...}`.
 * Both normalise to the body plus a `type` quantity.
 */
export const metadataReceiptSchema = z.union([
  metadataReceiptBodySchema.extend({ type: quantity }),
  z.partialRecord(z.enum(receiptKinds), metadataReceiptBodySchema).refine((value) => Object.keys(value).length === 1, 'expected exactly one receipt kind')
    .transform((value) => {
      const [kind, body] = Object.entries(value)[0] as [(typeof receiptKinds)[number], z.output<typeof metadataReceiptBodySchema>];
      return { ...body, type: receiptTypeByKind[kind] };
    }),
]);
export type MetadataReceipt = z.output<typeof metadataReceiptSchema>;

/**
 * Era A/B: `{block_number, new_account_balances, receipts}`; Era C (Azul, Base today):
 * `{block_number, access_list}`. Only `block_number` is required, as in Base's own decoder.
 */
export const flashblockMetadataSchema = z.looseObject({
  block_number: z.number().int().nonnegative(),
  new_account_balances: z.record(address, quantity).optional().nullable(),
  receipts: z.record(hash32, metadataReceiptSchema).optional().nullable(),
  access_list: z.unknown().optional(),
});

export const flashblockSchema = z.looseObject({
  payload_id: payloadId,
  index: z.number().int().nonnegative(),
  base: flashblockBaseSchema.optional().nullable(),
  diff: flashblockDiffSchema,
  metadata: flashblockMetadataSchema,
}).superRefine((value, context) => {
  if (value.index === 0 && !value.base) {
    context.addIssue({ code: 'custom', path: ['base'], message: 'index 0 must carry base' });
  }
  if (value.base && BigInt(value.base.block_number) !== BigInt(value.metadata.block_number)) {
    context.addIssue({ code: 'custom', path: ['metadata', 'block_number'], message: `metadata.block_number ${value.metadata.block_number} differs from base.block_number ${value.base.block_number}` });
  }
});

export type Flashblock = z.output<typeof flashblockSchema>;
export type FlashblockBase = z.output<typeof flashblockBaseSchema>;
export type FlashblockDiff = z.output<typeof flashblockDiffSchema>;
