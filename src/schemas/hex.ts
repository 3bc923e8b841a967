import { z } from 'zod';

/** The patterns of the hex strings below, shared with the view's fast record check (src/records/fast-check.ts). */
export const hexPatterns = {
  quantity: /^0x[0-9a-fA-F]{1,64}$/,
  hexBytes: /^0x(?:[0-9a-fA-F]{2})*$/,
  hash32: /^0x[0-9a-fA-F]{64}$/,
  address: /^0x[0-9a-fA-F]{40}$/,
  bloom: /^0x[0-9a-fA-F]{512}$/,
  payloadId: /^0x[0-9a-fA-F]{16}$/,
} as const;

/** JSON-RPC quantity: 0x-prefixed hex without leading zeros (lenient: leading zeros accepted). */
export const quantity = z.string().regex(hexPatterns.quantity, 'expected a 0x-hex quantity');
export const hexBytes = z.string().regex(hexPatterns.hexBytes, 'expected 0x-hex bytes');
export const hash32 = z.string().regex(hexPatterns.hash32, 'expected a 32-byte 0x-hex hash');
export const address = z.string().regex(hexPatterns.address, 'expected a 20-byte 0x-hex address');
export const bloom = z.string().regex(hexPatterns.bloom, 'expected a 256-byte 0x-hex bloom');
export const payloadId = z.string().regex(hexPatterns.payloadId, 'expected an 8-byte 0x-hex payload id');

export type Hex = `0x${string}`;
export const ZERO_HASH = `0x${'0'.repeat(64)}` as const;
