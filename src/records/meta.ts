import { z } from 'zod';
import { FlashlogError, errorMessage } from '../errors.ts';
import { hash32, quantity, type Hex } from '../schemas/hex.ts';
import { topics } from './topics.ts';

/**
 * flashlog.meta: the log knows its chain. The first record of `flashlog.meta` (key `chain`) stamps
 * the log with the chain its records belong to, `{v: 1, chainId, genesisHash}`. It is an invariant
 * that the first stamp on a log is its stamp for good: a writer stamps a log that has none, and
 * every later stamp (two writers racing on a fresh log) loses to it (src/log/chain-stamp.ts reads
 * and writes it). The topic is the same on both engines and lives under the topic prefix like the
 * others, one partition, kept forever.
 *
 * A chain is named by its id and its genesis block's hash: two devnets (or a testnet restarted
 * from a new genesis) share an id, not a genesis hash. (flashlog's devnets take the start time,
 * in seconds, as their genesis time: two started in the same second share a genesis hash too,
 * which is why `run --devnet` starts each devnet in a fresh log whatever the hashes say.)
 */
export const chainStampKey = 'chain';

export const chainStampRecordSchema = z.object({
  v: z.literal(1),
  chainId: quantity.describe('the chain id, as eth_chainId answers it'),
  genesisHash: hash32.describe("the hash of the chain's block 0"),
});

export interface ChainIdentity {
  readonly chainId: bigint;
  readonly genesisHash: Hex;
}

export function encodeChainStamp(chain: ChainIdentity): string {
  return JSON.stringify({ v: 1, chainId: `0x${chain.chainId.toString(16)}`, genesisHash: chain.genesisHash.toLowerCase() });
}

export function decodeChainStamp(value: string): ChainIdentity {
  let parsed: z.infer<typeof chainStampRecordSchema>;
  try {
    parsed = chainStampRecordSchema.parse(JSON.parse(value));
  } catch (error) {
    throw new FlashlogError(
      'LOG_CHAIN_STAMP_INVALID',
      `${topics.meta}: the chain stamp is not {v: 1, chainId, genesisHash}: ${errorMessage(error)}`,
    );
  }
  return { chainId: BigInt(parsed.chainId), genesisHash: parsed.genesisHash.toLowerCase() as Hex };
}
