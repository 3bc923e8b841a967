import type { Hex } from 'viem';
import type { Batcher } from './batcher.ts';
import type { DenimBlock } from './edr/denim-producer.ts';
import type { SentFlashblock, SealedBlock } from './edr/producer.ts';

/**
 * The funded accounts `--load` signs with, on either devnet: 0 to 7. Accounts 8 and 9 are left to
 * the user (and tests), whose transactions then never race the load's for a nonce.
 */
export const LOAD_ACCOUNTS = 8;

/** What a running devnet (flashblocks or Denim) gives its caller. */
export interface DevnetAccount {
  readonly address: Hex;
  readonly privateKey: Hex;
}

export interface Devnet {
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly rpcPort: number;
  readonly wsPort: number;
  readonly chainId: number;
  /** The ten funded accounts of the test mnemonic (m/44'/60'/0'/0/0..9). */
  readonly accounts: readonly DevnetAccount[];
  /** Listeners see every flashblock as sent (before encoding) and every sealed block. */
  onFlashblock(listener: (flashblock: SentFlashblock) => void): () => void;
  onSealed(listener: (block: SealedBlock) => void): () => void;
  /** Denim: every block mined, replacements included (never called on a flashblocks devnet). */
  onBlock(listener: (block: DenimBlock) => void): () => void;
  /** Whether this is a Denim devnet (no flashblocks feed; `wsUrl` is the JSON-RPC WebSocket). */
  readonly denim: boolean;
  /** With `load`: the ERC-20 and workload contracts and the counts of transactions sent by kind. */
  readonly load: { readonly token: Hex; readonly workload: Hex; counts(): Record<string, number> } | null;
  /** With a batcher (`batcher` option): what it posted to the L1 (blobs included) and what waits. */
  readonly batcher?: Pick<Batcher, 'posted' | 'pending'> & {
    /** The beacon blob endpoints' base URL (`beaconPort`), else null. */
    readonly beaconUrl: string | null;
  };
  close(): Promise<void>;
}
