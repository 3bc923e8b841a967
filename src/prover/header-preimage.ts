import { bytesToHex, keccak256, type Hex } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../errors.ts';
import { decodeHeaderRlp, encodeHeader, headerFromRpc, type BlockHeader } from '../op/header.ts';

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

/**
 * A header's fields the enclave reads, from its RLP (a keccak preimage), through the stateless
 * executor's header codec (src/op/header.ts), the one codec of the project.
 */
export function decodeHeader(rlp: Hex | Uint8Array, what = 'header'): DecodedHeader {
  const hex = typeof rlp === 'string' ? rlp : bytesToHex(rlp);
  let header: BlockHeader;
  try {
    header = decodeHeaderRlp(hex, what);
  } catch (error) {
    if (error instanceof FlashlogError) throw error;
    throw new FlashlogError('HEADER_INVALID', `${what}: not RLP (${(error as Error).message})`);
  }
  return {
    hash: keccak256(hex),
    parentHash: header.parentHash,
    stateRoot: header.stateRoot,
    number: Number(header.number),
    timestamp: Number(header.timestamp),
    withdrawalsRoot: header.withdrawalsRoot,
  };
}

/**
 * A JSON-RPC block (eth_getBlockByNumber/Hash) as the prover host reads it: the hash and the
 * fields it links and roots by; every header field is checked by the one header parser
 * (`headerFromRpc`, src/op/header.ts) when `headerRlpFromRpc` rebuilds the RLP.
 */
export const rpcHeaderSchema = z.looseObject({
  hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  parentHash: z.string(),
  number: z.string(),
  timestamp: z.string(),
  stateRoot: z.string(),
  withdrawalsRoot: z.string().nullish(),
});
export type RpcHeader = z.infer<typeof rpcHeaderSchema>;

/**
 * Rebuilds a header's RLP from its JSON-RPC fields and checks that it hashes to the block hash the
 * RPC reported, so the result can be trusted as a keccak preimage.
 */
export function headerRlpFromRpc(block: RpcHeader, what = `block ${block.number}`): Hex {
  const rlp = encodeHeader(headerFromRpc(block, what));
  const hash = keccak256(rlp);
  if (hash !== block.hash.toLowerCase()) {
    throw new FlashlogError('HEADER_MISMATCH', `${what}: header fields hash to ${hash}, but the RPC says the block hash is ${block.hash}`);
  }
  return rlp;
}
