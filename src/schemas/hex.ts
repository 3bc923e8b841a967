import { z } from 'zod';

/** JSON-RPC quantity: 0x-prefixed hex without leading zeros (lenient: leading zeros accepted). */
export const quantity = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, 'expected a 0x-hex quantity');
export const hexBytes = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'expected 0x-hex bytes');
export const hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte 0x-hex hash');
export const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 20-byte 0x-hex address');
export const bloom = z.string().regex(/^0x[0-9a-fA-F]{512}$/, 'expected a 256-byte 0x-hex bloom');
export const payloadId = z.string().regex(/^0x[0-9a-fA-F]{16}$/, 'expected an 8-byte 0x-hex payload id');

export type Hex = `0x${string}`;
export const ZERO_HASH = `0x${'0'.repeat(64)}` as const;
