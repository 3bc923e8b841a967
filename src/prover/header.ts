import { fromRlp, hexToBigInt, keccak256, toRlp, type Hex } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../errors.ts';

/**
 * Block headers as their RLP list (the Ethereum yellow paper order plus the London, Shanghai,
 * Cancun and Prague fields, each present only when the block has it):
 *   0 parentHash 1 ommersHash 2 beneficiary 3 stateRoot 4 transactionsRoot 5 receiptsRoot
 *   6 logsBloom 7 difficulty 8 number 9 gasLimit 10 gasUsed 11 timestamp 12 extraData 13 mixHash
 *   14 nonce 15 baseFeePerGas 16 withdrawalsRoot 17 blobGasUsed 18 excessBlobGas
 *   19 parentBeaconBlockRoot 20 requestsHash
 * On OP Stack chains since Isthmus, withdrawalsRoot is the L2ToL1MessagePasser storage root.
 */
export interface DecodedHeader {
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly stateRoot: Hex;
  readonly number: number;
  readonly timestamp: number;
  readonly withdrawalsRoot?: Hex | undefined;
}

const quantity = (hex: Hex): number => (hex === '0x' ? 0 : Number(hexToBigInt(hex)));

export function decodeHeader(rlp: Hex | Uint8Array, what = 'header'): DecodedHeader {
  let fields: unknown;
  try {
    fields = fromRlp(rlp, 'hex');
  } catch (error) {
    throw new FlashlogError('HEADER_INVALID', `${what}: not RLP (${(error as Error).message})`);
  }
  if (!Array.isArray(fields) || fields.length < 15 || fields.some((field) => typeof field !== 'string')) {
    throw new FlashlogError('HEADER_INVALID', `${what}: expected an RLP list of at least 15 byte strings`);
  }
  const list = fields as Hex[];
  return {
    hash: keccak256(rlp),
    parentHash: list[0]!,
    stateRoot: list[3]!,
    number: quantity(list[8]!),
    timestamp: quantity(list[11]!),
    withdrawalsRoot: list[16],
  };
}

/** The JSON-RPC block fields a header is built from (eth_getBlockByNumber/Hash). */
export const rpcHeaderSchema = z.object({
  hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  parentHash: z.string(),
  sha3Uncles: z.string(),
  miner: z.string(),
  stateRoot: z.string(),
  transactionsRoot: z.string(),
  receiptsRoot: z.string(),
  logsBloom: z.string(),
  difficulty: z.string(),
  number: z.string(),
  gasLimit: z.string(),
  gasUsed: z.string(),
  timestamp: z.string(),
  extraData: z.string(),
  mixHash: z.string(),
  nonce: z.string(),
  baseFeePerGas: z.string().nullish(),
  withdrawalsRoot: z.string().nullish(),
  blobGasUsed: z.string().nullish(),
  excessBlobGas: z.string().nullish(),
  parentBeaconBlockRoot: z.string().nullish(),
  requestsHash: z.string().nullish(),
});
export type RpcHeader = z.infer<typeof rpcHeaderSchema>;

/** RLP quantity: minimal big-endian bytes, zero as the empty string. */
const rlpQuantity = (hex: string): Hex => {
  const value = BigInt(hex);
  if (value === 0n) return '0x';
  const digits = value.toString(16);
  return `0x${digits.length % 2 ? '0' : ''}${digits}`;
};

/**
 * Rebuilds a header's RLP from its JSON-RPC fields and checks that it hashes to the block hash the
 * RPC reported, so the result can be trusted as a keccak preimage.
 */
export function headerRlpFromRpc(block: RpcHeader, what = `block ${block.number}`): Hex {
  const optional = [
    block.baseFeePerGas,
    block.withdrawalsRoot,
    block.blobGasUsed,
    block.excessBlobGas,
    block.parentBeaconBlockRoot,
    block.requestsHash,
  ];
  const last = optional.findLastIndex((value) => value !== undefined && value !== null);
  const tail = optional.slice(0, last + 1).map((value, index) => {
    if (value === undefined || value === null)
      throw new FlashlogError('HEADER_INVALID', `${what}: header field ${index + 15} missing before a later one`);
    return index === 1 || index >= 4 ? (value as Hex) : rlpQuantity(value);
  });
  const rlp = toRlp([
    block.parentHash as Hex,
    block.sha3Uncles as Hex,
    block.miner as Hex,
    block.stateRoot as Hex,
    block.transactionsRoot as Hex,
    block.receiptsRoot as Hex,
    block.logsBloom as Hex,
    rlpQuantity(block.difficulty),
    rlpQuantity(block.number),
    rlpQuantity(block.gasLimit),
    rlpQuantity(block.gasUsed),
    rlpQuantity(block.timestamp),
    block.extraData as Hex,
    block.mixHash as Hex,
    block.nonce as Hex,
    ...tail,
  ]);
  const hash = keccak256(rlp);
  if (hash !== block.hash.toLowerCase()) {
    throw new FlashlogError('HEADER_MISMATCH', `${what}: header fields hash to ${hash}, but the RPC says the block hash is ${block.hash}`);
  }
  return rlp;
}
