import { hexToBigInt, hexToNumber, numberToHex, type Hex } from 'viem';
import { FlashlogError } from '../../src/errors.ts';
import { l1BlobBaseFee, type L1Epoch } from '../../src/derive/attributes.ts';
import type { L1Receipt } from '../../src/derive/user-deposits.ts';

/**
 * The L1 as an op-geth devnet's sequencer reads it over JSON-RPC: block references (for op-node's
 * origin selection) and derivation's view of a block (the header fields payload attributes read,
 * and its receipts: deposits and SystemConfig updates). One receipt call per transaction, as EDR
 * has no `eth_getBlockReceipts`.
 */
export const pragueBlobUpdateFraction = 5_007_716n;

export interface L1BlockRef {
  readonly number: bigint;
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly timestamp: bigint;
}

export interface L1Reader {
  head(): Promise<L1BlockRef>;
  /** The block at `number`, or null past the head. */
  block(number: bigint): Promise<L1BlockRef | null>;
  /** Derivation's view of a block: the header fields attributes read, and its receipts. */
  epoch(number: bigint): Promise<L1Epoch>;
}

/** One JSON-RPC call: resolves with the result, rejects with the node's error. */
export type L1Request = <T>(method: string, params?: readonly unknown[]) => Promise<T>;

interface RpcBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  baseFeePerGas: Hex;
  mixHash: Hex;
  parentBeaconBlockRoot?: Hex;
  excessBlobGas?: Hex;
  transactions: Hex[];
}
interface RpcReceipt {
  status: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex; logIndex: Hex }[];
}

const refOf = (block: RpcBlock): L1BlockRef => ({
  number: hexToBigInt(block.number),
  hash: block.hash,
  parentHash: block.parentHash,
  timestamp: hexToBigInt(block.timestamp),
});

/**
 * @example const l1 = createL1Reader((method, params) => upstream.call(method, params))
 */
export function createL1Reader(request: L1Request): L1Reader {
  const rpcBlock = (tag: Hex | 'latest') => request<RpcBlock | null>('eth_getBlockByNumber', [tag, false]);
  return {
    async head() {
      const block = await rpcBlock('latest');
      if (!block) throw new FlashlogError('DERIVE_L1_MISSING', 'the L1 has no latest block');
      return refOf(block);
    },
    async block(number) {
      const block = await rpcBlock(numberToHex(number));
      return block ? refOf(block) : null;
    },
    async epoch(number) {
      const block = await rpcBlock(numberToHex(number));
      if (!block) throw new FlashlogError('DERIVE_L1_MISSING', `L1 block ${number} does not exist`);
      const receipts: L1Receipt[] = [];
      for (const hash of block.transactions) {
        const receipt = await request<RpcReceipt>('eth_getTransactionReceipt', [hash]);
        receipts.push({
          status: receipt.status === '0x1' ? 'success' : 'reverted',
          logs: receipt.logs.map((log) => ({
            address: log.address,
            topics: log.topics,
            data: log.data,
            logIndex: hexToNumber(log.logIndex),
          })),
        });
      }
      return {
        header: {
          hash: block.hash,
          number: hexToBigInt(block.number),
          timestamp: hexToBigInt(block.timestamp),
          baseFeePerGas: hexToBigInt(block.baseFeePerGas),
          mixHash: block.mixHash,
          parentBeaconBlockRoot: block.parentBeaconBlockRoot ?? null,
          blobBaseFee: block.excessBlobGas === undefined ? null : l1BlobBaseFee(hexToBigInt(block.excessBlobGas), pragueBlobUpdateFraction),
        },
        receipts,
      };
    },
  };
}
