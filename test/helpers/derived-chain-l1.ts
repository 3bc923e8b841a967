import {
  bytesToHex,
  commitmentsToVersionedHashes,
  encodeFunctionData,
  hexToNumber,
  numberToHex,
  toBlobSidecars,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { L1Epoch } from '../../src/derive/attributes.ts';
import { createL1Reader, type L1BlockRef } from '../../devnet/op-geth/l1.ts';
import { createKzgThread } from '../../devnet/kzg-thread.ts';
import { startEdrChain, type EdrChain, type GenesisAccount } from './edr-chain.ts';
import type { CompiledContract } from './derived-chain-genesis.ts';

/**
 * The derived test chain's L1 (test/helpers/derived-chain.ts): EDR's L1 chain type on Prague
 * (blob transactions, real block hashes) with the deposit contract (devnet/contracts/DevnetPortal.sol) in its
 * genesis, mined by the sequencer at the timestamps it picks; and derivation's view of an L1 block
 * (its header fields and receipts) read back over JSON-RPC.
 */
export { pragueBlobUpdateFraction, type L1BlockRef } from '../../devnet/op-geth/l1.ts';

/** One deposit through the portal: the L2 transaction's fields, `mint` the ETH sent with it. */
export interface DepositRequest {
  readonly to: Address | null;
  readonly mint: bigint;
  readonly value: bigint;
  readonly gasLimit: bigint;
  readonly data: Hex;
}

interface RpcReceipt {
  status: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex; logIndex: Hex }[];
}

export interface DerivedL1 {
  readonly edr: EdrChain;
  readonly chainId: number;
  readonly portal: Address;
  head(): Promise<L1BlockRef>;
  /** The block at `number`, or null past the head. */
  block(number: bigint): Promise<L1BlockRef | null>;
  /**
   * Mines one block holding `transactions` (signed, raw) at `timestamp`, or one second after the
   * head when the head is already there (the batcher's blocks take EDR's clock).
   */
  mine(timestamp: bigint, transactions?: readonly Hex[]): Promise<L1BlockRef>;
  /**
   * Has the next block EDR mines by itself (the batcher's, on its own transaction) take
   * `timestamp`, or one second after the head when the head is already there.
   */
  nextBlockAt(timestamp: bigint): Promise<void>;
  /**
   * Sends one blob transaction (an empty blob, from `from` to itself) and waits for it. EDR loads
   * its KZG setup at the first blob transaction it sees, which takes seconds (many under load);
   * taken here, before the batcher's first post, it stays out of the batcher's 10 s RPC timeout
   * (past which the batcher posts its channel again, and the L1 holds it twice).
   */
  warmUpBlobs(from: PrivateKeyAccount): Promise<void>;
  /** The batcher transactions (to `inbox` from `batcher`) in blocks `from` to the head, in order. */
  batcherTransactions(inbox: Address, batcher: Address, from: bigint): Promise<Hex[]>;
  /** The account's next nonce on the L1. */
  nonce(address: Address): Promise<number>;
  /** A signed call of `to` from `from`. */
  signCall(from: PrivateKeyAccount, nonce: number, call: { to: Address; data: Hex; value?: bigint }): Promise<Hex>;
  /** A signed call of the portal's `depositTransaction` from `from`, sending `mint` along. */
  depositTransaction(from: PrivateKeyAccount, nonce: number, deposit: DepositRequest): Promise<Hex>;
  /** Derivation's view of a block: the header fields attributes read, and its receipts. */
  epoch(number: bigint): Promise<L1Epoch>;
  close(): Promise<void>;
}

/** Starts the L1 with `funded` accounts, the portal and the other `contracts` (runtime code in genesis). */
export async function startDerivedL1(options: {
  readonly chainId: number;
  readonly portal: Address;
  readonly portalContract: CompiledContract;
  readonly contracts: readonly { readonly address: Address; readonly contract: CompiledContract }[];
  readonly funded: readonly GenesisAccount[];
}): Promise<DerivedL1> {
  const edr = await startEdrChain({
    chainId: options.chainId,
    genesis: [
      ...options.funded,
      ...[{ address: options.portal, contract: options.portalContract }, ...options.contracts].map(({ address, contract }) => ({
        address,
        code: contract.deployedBytecode,
      })),
    ],
  });
  const signCall: DerivedL1['signCall'] = (from, nonce, call) =>
    from.signTransaction({
      type: 'eip1559',
      chainId: options.chainId,
      nonce,
      gas: 300_000n,
      maxFeePerGas: 50_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      ...call,
    });
  const request = <T>(method: string, params: readonly unknown[] = []) => edr.request(method, [...params]) as Promise<T>;
  const reader = createL1Reader(request);
  const { head } = reader;
  return {
    edr,
    chainId: options.chainId,
    portal: options.portal,
    head,
    block: reader.block,
    async mine(timestamp, transactions = []) {
      const at = (await head()).timestamp + 1n;
      await request('evm_setAutomine', [false]);
      try {
        for (const raw of transactions) await request('eth_sendRawTransaction', [raw]);
        await request('evm_mine', [Number(timestamp > at ? timestamp : at)]);
      } finally {
        await request('evm_setAutomine', [true]);
      }
      const mined = (await request<{ number: Hex; transactions: Hex[] }>('eth_getBlockByNumber', ['latest', false]))!;
      if (mined.transactions.length !== transactions.length)
        throw new Error(
          `L1 block ${hexToNumber(mined.number)} holds ${mined.transactions.length} transactions, ${transactions.length} sent`,
        );
      for (const hash of mined.transactions) {
        const receipt = await request<RpcReceipt>('eth_getTransactionReceipt', [hash]);
        if (receipt.status !== '0x1') throw new Error(`L1 transaction ${hash} reverted`);
      }
      return head();
    },
    async nextBlockAt(timestamp) {
      const at = (await head()).timestamp + 1n;
      await request('evm_setNextBlockTimestamp', [Number(timestamp > at ? timestamp : at)]);
    },
    async warmUpBlobs(from) {
      const kzg = createKzgThread();
      try {
        const blobs = [bytesToHex(new Uint8Array(131_072))];
        const { commitments, proofs } = await kzg.prove(blobs);
        const raw = await from.signTransaction({
          type: 'eip4844',
          chainId: options.chainId,
          nonce: hexToNumber(await request<Hex>('eth_getTransactionCount', [from.address, 'latest'])),
          gas: 21_000n,
          maxFeePerGas: 50_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
          maxFeePerBlobGas: 1_000_000_000n,
          to: from.address,
          blobVersionedHashes: commitmentsToVersionedHashes({ commitments }),
          sidecars: toBlobSidecars({ blobs, commitments, proofs }),
        });
        const hash = await request<Hex>('eth_sendRawTransaction', [raw]);
        const receipt = await request<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
        if (receipt?.status !== '0x1') throw new Error(`L1 blob transaction ${hash} failed: ${JSON.stringify(receipt)}`);
      } finally {
        await kzg.close();
      }
    },
    async batcherTransactions(inbox, batcher, from) {
      const last = (await head()).number;
      const out: Hex[] = [];
      for (let n = from; n <= last; n++) {
        const block = await request<{ transactions: { hash: Hex; from: Hex; to: Hex | null }[] }>('eth_getBlockByNumber', [
          numberToHex(n),
          true,
        ]);
        for (const tx of block.transactions)
          if (tx.to?.toLowerCase() === inbox.toLowerCase() && tx.from.toLowerCase() === batcher.toLowerCase()) out.push(tx.hash);
      }
      return out;
    },
    nonce: async (address) => hexToNumber(await request<Hex>('eth_getTransactionCount', [address, 'latest'])),
    signCall,
    depositTransaction: (from, nonce, deposit) =>
      signCall(from, nonce, {
        to: options.portal,
        value: deposit.mint,
        data: encodeFunctionData({
          abi: options.portalContract.abi as Abi,
          functionName: 'depositTransaction',
          args: [
            deposit.to ?? '0x0000000000000000000000000000000000000000',
            deposit.value,
            deposit.gasLimit,
            deposit.to === null,
            deposit.data,
          ],
        }),
      }),
    epoch: reader.epoch,
    close: () => edr.close(),
  };
}
