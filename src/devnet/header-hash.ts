import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { bytesToHex, hexToBytes, keccak256, numberToBytes, toRlp, type Hex } from 'viem';

/** The header fields of an Isthmus (Prague) block, as EDR answers eth_getBlockByNumber. */
export interface HeaderFields {
  readonly parentHash: Hex;
  readonly sha3Uncles: Hex;
  readonly miner: Hex;
  readonly stateRoot: Hex;
  readonly transactionsRoot: Hex;
  readonly receiptsRoot: Hex;
  readonly logsBloom: Hex;
  readonly difficulty: Hex;
  readonly number: Hex;
  readonly gasLimit: Hex;
  readonly gasUsed: Hex;
  readonly timestamp: Hex;
  readonly extraData: Hex;
  readonly mixHash: Hex;
  readonly nonce: Hex;
  readonly baseFeePerGas: Hex;
  readonly withdrawalsRoot: Hex;
  readonly blobGasUsed: Hex;
  readonly excessBlobGas: Hex;
  readonly parentBeaconBlockRoot: Hex;
  readonly requestsHash: Hex;
}

/** A quantity as RLP wants it: big-endian without leading zeros, zero as the empty string. */
const scalar = (value: Hex): Hex => (BigInt(value) === 0n ? '0x' : bytesToHex(numberToBytes(BigInt(value))));

/**
 * The hash of a block header: keccak256 of the RLP list of its fields in the Prague order (the
 * Yellow Paper's fifteen, then baseFee, withdrawalsRoot, blobGasUsed, excessBlobGas,
 * parentBeaconBlockRoot, requestsHash). The devnet needs it for a flashblock between the first and
 * the last of a block: that block so far is never mined as such (src/devnet/block-building.ts), so
 * no engine gives its hash. RLP and keccak come from viem; a test checks it against EDR's hashes.
 */
export function headerHash(header: HeaderFields): Hex {
  return keccak256(
    toRlp([
      header.parentHash,
      header.sha3Uncles,
      header.miner,
      header.stateRoot,
      header.transactionsRoot,
      header.receiptsRoot,
      header.logsBloom,
      scalar(header.difficulty),
      scalar(header.number),
      scalar(header.gasLimit),
      scalar(header.gasUsed),
      scalar(header.timestamp),
      header.extraData,
      header.mixHash,
      header.nonce,
      scalar(header.baseFeePerGas),
      header.withdrawalsRoot,
      scalar(header.blobGasUsed),
      scalar(header.excessBlobGas),
      header.parentBeaconBlockRoot,
      header.requestsHash,
    ]),
  );
}

/** The transactions root: a trie keyed by rlp(index) whose values are the raw (EIP-2718) transactions. */
export async function transactionsRoot(raws: readonly Hex[]): Promise<Hex> {
  const trie = new MerklePatriciaTrie();
  for (const [index, raw] of raws.entries()) {
    await trie.put(hexToBytes(toRlp(index === 0 ? '0x' : bytesToHex(numberToBytes(index)))), hexToBytes(raw));
  }
  return bytesToHex(trie.root());
}
