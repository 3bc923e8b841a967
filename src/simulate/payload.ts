import { z } from 'zod';
import { address, hash32, hexBytes, quantity } from '../schemas/hex.ts';
import { callObjectSchema } from '../schemas/call.ts';
import { stateOverridesSchema } from '../schemas/state-overrides.ts';

/**
 * The eth_simulateV1 payload as execution-apis defines it (`EthSimulatePayload`,
 * src/schemas/execute.yaml): blocks of calls, each with optional block and state overrides.
 * Unknown fields are kept (a newer client may send more), wrong types are -32602 naming the field.
 */
/** Each call of a simulated block: the one call-object schema of eth_call (src/schemas/call.ts). */
export const simulateCallSchema = callObjectSchema;
export type SimulateCall = z.output<typeof simulateCallSchema>;

const withdrawalSchema = z.object({ index: quantity, validatorIndex: quantity, address, amount: quantity });

export const blockOverridesSchema = z.looseObject({
  number: quantity.optional(),
  time: quantity.optional(),
  gasLimit: quantity.optional(),
  feeRecipient: address.optional(),
  prevRandao: hash32.optional(),
  baseFeePerGas: quantity.optional(),
  blobBaseFee: quantity.optional(),
  withdrawals: z.array(withdrawalSchema).optional(),
});
export type BlockOverrides = z.output<typeof blockOverridesSchema>;

export const blockStateCallSchema = z.looseObject({
  blockOverrides: blockOverridesSchema.nullable().optional(),
  stateOverrides: stateOverridesSchema.nullable().optional(),
  calls: z.array(simulateCallSchema).nullable().optional(),
});
export type BlockStateCall = z.output<typeof blockStateCallSchema>;

export const simulatePayloadSchema = z.looseObject({
  blockStateCalls: z.array(blockStateCallSchema),
  traceTransfers: z.boolean().nullable().optional(),
  validation: z.boolean().nullable().optional(),
  returnFullTransactions: z.boolean().nullable().optional(),
});
export type SimulatePayload = z.output<typeof simulatePayloadSchema>;
