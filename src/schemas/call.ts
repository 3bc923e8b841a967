import { z } from 'zod';
import { address, hash32, hexBytes, quantity } from './hex.ts';

/**
 * A transaction call object as execution-apis defines it (`GenericTransaction`): what eth_call,
 * eth_estimateGas and each call of eth_simulateV1 take. Unknown fields are kept (a newer client
 * may send more); wrong types are -32602 naming the field (see `parseParam`).
 */
export const callObjectSchema = z
  .looseObject({
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
    authorizationList: z
      .array(z.looseObject({ chainId: quantity, address, nonce: quantity, yParity: quantity, r: quantity, s: quantity }))
      .optional(),
  })
  .refine((call) => !(call.data !== undefined && call.input !== undefined && call.data.toLowerCase() !== call.input.toLowerCase()), {
    message: 'data and input both given and different',
  });
export type CallObject = z.output<typeof callObjectSchema>;
