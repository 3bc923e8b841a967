import { z } from 'zod';
import { address, hash32, hexBytes, quantity } from '../../schemas/hex.ts';
import { InvalidParamsError } from '../../errors.ts';
import { stateOverridesSchema } from '../overrides.ts';

/**
 * The eth_simulateV1 payload as execution-apis defines it (`EthSimulatePayload`,
 * src/schemas/execute.yaml): blocks of calls, each with optional block and state overrides.
 * Unknown fields are kept (a newer client may send more), wrong types are -32602 naming the field.
 */
export const simulateCallSchema = z.looseObject({
  type: quantity.optional(),
  from: address.optional(),
  to: address.nullable().optional(),
  gas: quantity.optional(),
  gasPrice: quantity.optional(),
  maxFeePerGas: quantity.optional(),
  maxPriorityFeePerGas: quantity.optional(),
  maxFeePerBlobGas: quantity.optional(),
  value: quantity.optional(),
  nonce: quantity.optional(),
  input: hexBytes.optional(),
  data: hexBytes.optional(),
  chainId: quantity.optional(),
  accessList: z.array(z.object({ address, storageKeys: z.array(hash32) })).optional(),
  blobVersionedHashes: z.array(hash32).optional(),
  authorizationList: z.array(z.looseObject({ chainId: quantity, address, nonce: quantity, yParity: quantity, r: quantity, s: quantity })).optional(),
}).refine((call) => !(call.data !== undefined && call.input !== undefined && call.data.toLowerCase() !== call.input.toLowerCase()), {
  message: 'data and input both given and different',
});
export type SimulateCall = z.output<typeof simulateCallSchema>;

export const withdrawalSchema = z.object({ index: quantity, validatorIndex: quantity, address, amount: quantity });

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

/** Parses `params[0]`; the first problem is -32602 with its path, e.g. `params[0].blockStateCalls.0.calls.1.gas`. */
export function simulatePayloadParam(value: unknown, where = 'params[0]'): SimulatePayload {
  if (value === undefined || value === null) throw new InvalidParamsError(`missing value for required argument 0 (${where}): expected a simulation payload {blockStateCalls, ...}`);
  const parsed = simulatePayloadSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = [where, ...issue.path.map(String)].join('.');
    throw new InvalidParamsError(`invalid ${field}: ${issue.message}`);
  }
  return parsed.data;
}
