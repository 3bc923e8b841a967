import { fromRlp, hexToBigInt, keccak256, numberToHex, toRlp, type Hex } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../errors.ts';

/**
 * A block header in domain form (quantities as bigint). Optional fields follow the fork that
 * added them: baseFeePerGas (London), withdrawalsRoot (Shanghai; on OP Stack since Isthmus the
 * message passer's storage root), blobGasUsed / excessBlobGas / parentBeaconBlockRoot (Cancun),
 * requestsHash (Prague).
 */
export interface BlockHeader {
  readonly parentHash: Hex;
  readonly sha3Uncles: Hex;
  readonly miner: Hex;
  readonly stateRoot: Hex;
  readonly transactionsRoot: Hex;
  readonly receiptsRoot: Hex;
  readonly logsBloom: Hex;
  readonly difficulty: bigint;
  readonly number: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  readonly timestamp: bigint;
  readonly extraData: Hex;
  readonly mixHash: Hex;
  readonly nonce: Hex;
  readonly baseFeePerGas?: bigint | undefined;
  readonly withdrawalsRoot?: Hex | undefined;
  readonly blobGasUsed?: bigint | undefined;
  readonly excessBlobGas?: bigint | undefined;
  readonly parentBeaconBlockRoot?: Hex | undefined;
  readonly requestsHash?: Hex | undefined;
}

/** The fields in RLP order; the optional tail stops at the last field the header has. */
const order = [
  'parentHash',
  'sha3Uncles',
  'miner',
  'stateRoot',
  'transactionsRoot',
  'receiptsRoot',
  'logsBloom',
  'difficulty',
  'number',
  'gasLimit',
  'gasUsed',
  'timestamp',
  'extraData',
  'mixHash',
  'nonce',
  'baseFeePerGas',
  'withdrawalsRoot',
  'blobGasUsed',
  'excessBlobGas',
  'parentBeaconBlockRoot',
  'requestsHash',
] as const satisfies readonly (keyof BlockHeader)[];
export type HeaderField = (typeof order)[number];
export const headerFields: readonly HeaderField[] = order;

/** RLP of the header (the block hash is its keccak256). */
export function encodeHeader(header: BlockHeader): Hex {
  const present = order.filter((field) => header[field] !== undefined);
  const last = order.indexOf(present[present.length - 1]!);
  const items = order.slice(0, last + 1).map((field) => {
    const value = header[field];
    if (value === undefined) throw new FlashlogError('HEADER_INVALID', `header: ${field} missing before a later field`);
    if (typeof value === 'bigint') return value === 0n ? '0x' : numberToHex(value);
    return value;
  });
  return toRlp(items as Hex[]);
}

export const headerHash = (header: BlockHeader): Hex => keccak256(encodeHeader(header));

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'expected 0x-hex');
const quantity = hex.transform((value) => BigInt(value === '0x' ? 0 : value));
/** A JSON-RPC header (eth_getBlockByNumber fields, hex quantities). */
export const rpcBlockHeaderSchema = z.object({
  parentHash: hex,
  sha3Uncles: hex,
  miner: hex,
  stateRoot: hex,
  transactionsRoot: hex,
  receiptsRoot: hex,
  logsBloom: hex,
  difficulty: quantity,
  number: quantity,
  gasLimit: quantity,
  gasUsed: quantity,
  timestamp: quantity,
  extraData: hex,
  mixHash: hex,
  nonce: hex,
  baseFeePerGas: quantity.nullish(),
  withdrawalsRoot: hex.nullish(),
  blobGasUsed: quantity.nullish(),
  excessBlobGas: quantity.nullish(),
  parentBeaconBlockRoot: hex.nullish(),
  requestsHash: hex.nullish(),
});

/** Reads a JSON-RPC header, naming the field that does not fit. */
export function headerFromRpc(raw: unknown, where = 'header'): BlockHeader {
  const parsed = rpcBlockHeaderSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FlashlogError('HEADER_INVALID', `${where}.${issue.path.join('.')}: ${issue.message}`);
  }
  const lower = (value: string) => value.toLowerCase() as Hex;
  const header: Record<string, unknown> = {};
  for (const field of order) {
    const value = parsed.data[field];
    if (value !== undefined && value !== null) header[field] = typeof value === 'string' ? lower(value) : value;
  }
  return header as unknown as BlockHeader;
}

/** JSON-RPC form of a header (hex quantities), for printing. */
export function headerToRpc(header: BlockHeader): Record<HeaderField, string> {
  const out: Partial<Record<HeaderField, string>> = {};
  for (const field of order) {
    const value = header[field];
    if (value !== undefined) out[field] = typeof value === 'bigint' ? numberToHex(value) : value;
  }
  return out as Record<HeaderField, string>;
}

/** A header from its RLP (field order as {@link encodeHeader} writes it). */
export function decodeHeaderRlp(rlp: Hex, where = 'header'): BlockHeader {
  const items = fromRlp(rlp, 'hex');
  if (!Array.isArray(items) || items.length < 15 || items.length > order.length || items.some((item) => typeof item !== 'string')) {
    throw new FlashlogError('HEADER_INVALID', `${where}: expected an RLP list of 15 to ${order.length} byte strings`);
  }
  const quantities = new Set<HeaderField>([
    'difficulty',
    'number',
    'gasLimit',
    'gasUsed',
    'timestamp',
    'baseFeePerGas',
    'blobGasUsed',
    'excessBlobGas',
  ]);
  const header: Record<string, unknown> = {};
  (items as Hex[]).forEach((item, index) => {
    const field = order[index]!;
    header[field] = quantities.has(field) ? (item === '0x' ? 0n : hexToBigInt(item)) : item;
  });
  return header as unknown as BlockHeader;
}
