import { fileURLToPath } from 'node:url';
import { buildDeriveChain, deriveCase, verifyBlobs, type DeriveChain, type DeriveChainCase } from './derive/chain.ts';

/**
 * Derivation in the enclave: `deriveBlocks` (src/derive/pipeline.ts) through
 * `l1SourceFromPreimages` over `preimageStore`, exactly as the enclave's `derive` check reads L1,
 * on a synthetic L1 built by bench/derive/chain.ts (real header RLPs and tries, real KZG
 * commitments and proofs; those and the signed transactions are cached in bench/.cache/). `build`
 * returns precomputed hashes: execution is the reexec bench's subject, not this one's.
 *
 *   chain    1,200 L2 blocks (block_time 1 s: the rollup config takes whole seconds, Base's Denim
 *            blocks are 200 ms, so the figures count blocks) with TXS signed EIP-1559 transfers
 *            each (distinct recipients, values, nonces, signatures), posted as span batches,
 *            brotli, one channel per batcher post, 6 blobs per type-3 transaction; the same chain
 *            again in calldata (120,000-byte frames); and the same 1,200 blocks empty (calldata),
 *            on the same L1 and on an L1 that carries nothing but the batcher's transactions.
 *            The L1 is 12 s blocks, each with FILLER other transactions and their receipts (an
 *            assumption: every L1 transaction is read and parsed by derivation, so the L1's own
 *            traffic counts); 1,200 L2 seconds span the same ~100 L1 blocks a 20-minute range does.
 *   ms       one derivation, the faster (by CPU time) of 2, after a warm-up derivation of a small
 *            chain in the same process: `preimage` = preimageStore (every preimage hashed against
 *            its key), `derive` = deriveBlocks; msTotal = both, wall time; cpuMs the process's CPU
 *            time over the same. kzgMs / kzgCpuMs = each blob's verifyBlobProof once, outside the
 *            pipeline (what the pipeline's checks cost), the faster of 2 passes; restMs = msTotal −
 *            kzgMs, restCpuMs = cpuMs − kzgCpuMs.
 *   rates    L2 blocks/s and MB of blob data/s (blobs × 131,072 bytes ÷ total).
 *
 * Extrapolation to 20 minutes of Base (6,000 blocks at 200 ms) at T user transactions a block, in
 * the rows `extrapolated`, on CPU time (this machine is shared, so wall time includes waiting for
 * a core; derivation runs on one thread, so on a host of its own its wall time is about its CPU
 * time, the garbage collector's threads included):
 *     seconds(T) = L + 6,000 · b + 6,000 · T · x + blobs(T) · k
 *   L  the L1's own traffic over the ~100 L1 blocks a 20-minute range spans (the same here):
 *      the empty chain's cpuMs − the empty chain's on the bare L1
 *   b  per block: the empty chain on the bare L1, cpuMs ÷ 1,200
 *   x  per transaction: (the blob chain's restCpuMs − the empty chain's cpuMs) ÷ its transactions
 *   k  per blob: kzgCpuMs ÷ blobs
 *   blobs(T) = 6,000 · T · bytesPerTx ÷ (batch bytes per blob), both measured on the blob chain
 * bytesPerTx is that of this bench's plain transfers; Base's transactions mostly carry calldata
 * and compress to more, and Base's real per-block transaction counts and data rates were not
 * available here, so T is a parameter (10, 50, 150) and the blob term a lower bound: read the
 * blob count as data ÷ 130 KB if the real bytes per block are known. The budget is Base's proof
 * timeout: 29 minutes (1,740 s).
 */
const BLOCKS = 1_200;
const TXS = 25;
const FILLER = 150;
const BASE_BLOCKS = 6_000;
const TIMEOUT_S = 1_740;
const ROUNDS = 2;
const cacheDir = fileURLToPath(new URL('.cache/', import.meta.url));
const round2 = (value: number) => Number(value.toFixed(2));

/** The faster of ROUNDS derivations (wall and CPU time of the same one): the least disturbed by the machine's other load. */
async function timed(chain: DeriveChain, posted: DeriveChainCase) {
  let best: (Awaited<ReturnType<typeof deriveCase>> & { totalMs: number; cpuMs: number }) | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const cpu0 = process.cpuUsage();
    const run = await deriveCase(chain, posted);
    const cpu = process.cpuUsage(cpu0);
    const result = { ...run, totalMs: run.storeMs + run.deriveMs, cpuMs: (cpu.user + cpu.system) / 1000 };
    if (!best || result.cpuMs < best.cpuMs) best = result;
  }
  return best!;
}

/** verifyBlobs, the faster of ROUNDS passes: wall and CPU ms. */
function timedKzg(posted: DeriveChainCase) {
  let best = { ms: Infinity, cpuMs: Infinity };
  for (let round = 0; round < ROUNDS; round++) {
    const cpu0 = process.cpuUsage();
    const ms = verifyBlobs(posted);
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    if (cpuMs < best.cpuMs) best = { ms, cpuMs };
  }
  return best;
}

export async function run(): Promise<Record<string, unknown>[]> {
  const t0 = performance.now();
  const chain = await buildDeriveChain({ blocks: BLOCKS, txsPerBlock: TXS, l1FillerTxs: FILLER, cacheDir });
  // Base's Denim derives singular batches only: the same chain posted that way.
  const singular = await buildDeriveChain({
    blocks: BLOCKS,
    txsPerBlock: TXS,
    l1FillerTxs: FILLER,
    cacheDir,
    targets: ['blob'],
    kind: 'singular',
  });
  const empty = await buildDeriveChain({ blocks: BLOCKS, txsPerBlock: 0, l1FillerTxs: FILLER, cacheDir, targets: ['calldata'] });
  const bare = await buildDeriveChain({ blocks: BLOCKS, txsPerBlock: 0, l1FillerTxs: 0, cacheDir, targets: ['calldata'] });
  const warm = await buildDeriveChain({ blocks: 24, txsPerBlock: 2, l1FillerTxs: 3, cacheDir });
  process.stderr.write(`derive: setup ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  for (const posted of [warm.blob!, warm.calldata!]) await deriveCase(warm, posted);
  verifyBlobs(warm.blob!);

  const blob = chain.blob!;
  const timings = {
    blob: await timed(chain, blob),
    calldata: await timed(chain, chain.calldata!),
    singular: await timed(singular, singular.blob!),
    empty: await timed(empty, empty.calldata!),
    bare: await timed(bare, bare.calldata!),
  };
  const kzg = timedKzg(blob);
  const singularKzg = timedKzg(singular.blob!);
  const row = (
    name: string,
    of: DeriveChain,
    posted: DeriveChainCase,
    t: (typeof timings)['blob'],
    kzg: { ms: number; cpuMs: number },
    filler = FILLER,
  ) => ({
    case: `${name}: ${of.until} L2 blocks, ${posted.l1Blocks} L1 blocks (${filler} other txs each)`,
    l2Blocks: Number(of.until),
    userTxs: of.userTxs,
    blobs: posted.blobs.length,
    batchBytes: posted.batchBytes,
    preimageMB: round2(posted.preimageBytes / 1e6),
    msTotal: Math.round(t.totalMs),
    cpuMs: Math.round(t.cpuMs),
    preimageMs: Math.round(t.storeMs),
    kzgMs: Math.round(kzg.ms),
    restMs: Math.round(t.totalMs - kzg.ms),
    kzgCpuMs: Math.round(kzg.cpuMs),
    restCpuMs: Math.round(t.cpuMs - kzg.cpuMs),
    l2BlocksPerS: Math.round(Number(of.until) / (t.totalMs / 1000)),
    blobMBPerS: round2((posted.blobs.length * 131_072) / 1e6 / (t.totalMs / 1000)),
  });
  const none = { ms: 0, cpuMs: 0 };
  const rows: Record<string, unknown>[] = [
    row(`blobs, ${TXS} transfers a block`, chain, blob, timings.blob, kzg),
    row(`calldata, the same chain`, chain, chain.calldata!, timings.calldata, none),
    row(`blobs, the same chain as singular batches (Denim's)`, singular, singular.blob!, timings.singular, singularKzg),
    row('calldata, empty blocks', empty, empty.calldata!, timings.empty, none),
    row('calldata, empty blocks', bare, bare.calldata!, timings.bare, none, 0),
  ];
  rows.push({
    case: 'ratio: blobs / calldata',
    msTotal: round2(timings.blob.totalMs / timings.calldata.totalMs),
    cpuMs: round2(timings.blob.cpuMs / timings.calldata.cpuMs),
  });
  rows.push({
    case: 'ratio: singular / span batches (blobs)',
    msTotal: round2(timings.singular.totalMs / timings.blob.totalMs),
    cpuMs: round2(timings.singular.cpuMs / timings.blob.cpuMs),
    blobs: round2(singular.blob!.blobs.length / blob.blobs.length),
  });

  const l1Ms = timings.empty.cpuMs - timings.bare.cpuMs;
  const perBlockMs = timings.bare.cpuMs / BLOCKS;
  const perTxMs = (timings.blob.cpuMs - kzg.cpuMs - timings.empty.cpuMs) / chain.userTxs;
  const perBlobMs = kzg.cpuMs / blob.blobs.length;
  const bytesPerTx = blob.batchBytes / chain.userTxs;
  const bytesPerBlob = blob.batchBytes / blob.blobs.length;
  // Denim's singular batches: the per-transaction cost and bytes of the singular chain.
  const singularPerTxMs = (timings.singular.cpuMs - singularKzg.cpuMs - timings.empty.cpuMs) / singular.userTxs;
  const singularBytesPerTx = singular.blob!.batchBytes / singular.userTxs;
  for (const [batches, txMs, txBytes] of [
    ['span', perTxMs, bytesPerTx],
    ['singular', singularPerTxMs, singularBytesPerTx],
  ] as const) {
    for (const T of [10, 50, 150]) {
      const blobs = Math.ceil((BASE_BLOCKS * T * txBytes) / bytesPerBlob);
      const seconds = (l1Ms + BASE_BLOCKS * perBlockMs + BASE_BLOCKS * T * txMs + blobs * perBlobMs) / 1000;
      rows.push({
        case: `extrapolated: 20 min of Base (${BASE_BLOCKS} blocks) at ${T} txs a block, ${batches} batches`,
        userTxs: BASE_BLOCKS * T,
        blobs,
        batchBytes: Math.round(BASE_BLOCKS * T * txBytes),
        estSeconds: round2(seconds),
        timeoutPct: round2((100 * seconds) / TIMEOUT_S),
      });
    }
  }
  rows.push({
    case: 'extrapolation inputs',
    l1TrafficMs: Math.round(l1Ms),
    perBlockMs: round2(perBlockMs),
    perTxUs: round2(perTxMs * 1000),
    perBlobMs: round2(perBlobMs),
    bytesPerTx: round2(bytesPerTx),
  });
  return rows;
}
