import { hexToBytes, keccak256, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { createEnclaveCore, zeroHash, type EnclaveCore } from '../../src/prover/enclave/core.ts';
import { createReexecPool, type ReexecPool } from '../../src/prover/enclave/reexec-pool.ts';
import { outputRootV0 } from '../../src/prover/output-root.ts';
import { digestKey, type Preimage } from '../../src/prover/enclave-protocol.ts';
import type { ProofRequest } from '../../src/prover/request.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { decodeHeaderRlp, encodeHeader, headerFromRpc } from '../../src/op/header.ts';
import { eventually } from '../helpers/context.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';

/**
 * The enclave re-executes a range's blocks on a pool of threads at once: the proof is the one the
 * in-thread path signs, a block that does not re-execute to its hash is refused naming it (the
 * earliest such block, as in order), and a thread that dies mid-proof refuses that proof only.
 */
let devnet: Devnet;
const blocks = new Map<number, { hash: Hex; rlp: Hex; outputRoot: Hex; stateRoot: Hex; withdrawalsRoot: Hex }>();
const key = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6' as const;
const pools: ReexecPool[] = [];
const poolOf = (options: Parameters<typeof createReexecPool>[0]) => {
  const pool = createReexecPool(options);
  pools.push(pool);
  return pool;
};
const inThread = createEnclaveCore({ privateKey: key });
const headersOnly = createEnclaveCore({ privateKey: key, check: 'headers' });
const oneWorker = createEnclaveCore({ privateKey: key, pool: poolOf({ workers: 1 }) });
const twoWorkers = createEnclaveCore({ privateKey: key, pool: poolOf({ workers: 2 }) });

beforeAll(async () => {
  devnet = await createDevnet({ blockTimeMs: 300, load: 20 });
  const call = rpcCall(devnet.rpcUrl);
  await eventually(
    async () => (Number(BigInt((await call('eth_blockNumber', [])) as Hex)) >= 6 ? true : undefined),
    30_000,
    'devnet block 6',
  );
  for (let n = 1; n <= 6; n++) {
    const json = (await call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as Record<string, unknown> & {
      hash: Hex;
      stateRoot: Hex;
      withdrawalsRoot: Hex;
    };
    const rlp = encodeHeader(headerFromRpc(json));
    expect(keccak256(rlp)).toBe(json.hash);
    blocks.set(n, {
      hash: json.hash,
      rlp,
      stateRoot: json.stateRoot,
      withdrawalsRoot: json.withdrawalsRoot,
      outputRoot: outputRootV0(json.stateRoot, json.withdrawalsRoot, json.hash),
    });
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
  await devnet?.close();
});

const request = (agreed: number, claimed: number): ProofRequest => ({
  l1Head: blocks.get(1)!.hash,
  agreedL2HeadHash: blocks.get(agreed)!.hash,
  agreedL2OutputRoot: blocks.get(agreed)!.outputRoot,
  claimedL2OutputRoot: blocks.get(claimed)!.outputRoot,
  claimedL2BlockNumber: claimed,
  proposer: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65',
  intermediateBlockInterval: 1,
  l1HeadNumber: 1,
  imageHash: zeroHash,
});
const witness = (req: ProofRequest) => collectWitness(req, { l1: rpcCall(devnet.rpcUrl), l2: rpcCall(devnet.rpcUrl), l2ChainId: 1337 });
const keccakKey = (hash: Hex) => digestKey('keccak256', hash);
const sameKey = (preimage: Preimage, hash: Hex) =>
  preimage.key.type === 'keccak256' && Buffer.from(preimage.key.data).equals(Buffer.from(keccakKey(hash).data));
const prove = (core: EnclaveCore, preimages: Preimage[]) => core.handle({ type: 'prove', preimages });

/**
 * Blocks 3-5 of `preimages` with block 3's stateRoot changed and every later header re-linked to
 * its forged parent; the claim is forged block 5's output root. Every header links by hash.
 */
function withForgedStateRoot(preimages: readonly Preimage[]): Preimage[] {
  const forged: Preimage[] = [];
  let parentHash = blocks.get(2)!.hash;
  let claimed: Hex = zeroHash;
  for (const n of [3, 4, 5]) {
    const real = decodeHeaderRlp(blocks.get(n)!.rlp);
    const rlp = encodeHeader({ ...real, parentHash, ...(n === 3 ? { stateRoot: keccak256('0x01') } : {}) });
    parentHash = keccak256(rlp);
    forged.push({ key: keccakKey(parentHash), value: hexToBytes(rlp) });
    claimed = outputRootV0(n === 3 ? keccak256('0x01') : real.stateRoot, blocks.get(n)!.withdrawalsRoot, parentHash);
  }
  const replaced = new Set([3, 4, 5].map((n) => blocks.get(n)!.hash));
  return [
    ...preimages
      .filter((p) => ![...replaced].some((hash) => sameKey(p, hash)))
      .map((p) => (p.key.type === 'local' && p.key.data[30] === 3 ? { key: p.key, value: hexToBytes(claimed) } : p)),
    ...forged,
  ];
}

describe('the enclave re-executes a range on worker threads', () => {
  it('proves a range identically in this thread, on 1 thread and on 2', async () => {
    const preimages = await witness(request(1, 6));
    const expected = await prove(inThread, preimages);
    expect(expected).toMatchObject({
      type: 'prove',
      result: { type: 'tee', aggregateProposal: { outputRoot: blocks.get(6)!.outputRoot, l2BlockNumber: 6 } },
    });
    expect(expected.type === 'prove' && expected.result.type === 'tee' && expected.result.proposals.length).toBe(5);
    expect(await prove(oneWorker, preimages)).toEqual(expected);
    expect(await prove(twoWorkers, preimages)).toEqual(expected);
  }, 120_000);

  it('refuses a hash-linked range whose block 3 does not re-execute to its stateRoot, naming block 3, on threads too', async () => {
    const preimages = withForgedStateRoot(await witness(request(2, 5)));
    expect(await prove(headersOnly, preimages)).toMatchObject({ type: 'prove' });
    const message = expect.stringMatching(
      /^L2 block 3: re-execution gives block hash 0x[0-9a-f]{64}, the chain's is 0x[0-9a-f]{64} \(differing: stateRoot\)$/,
    );
    const refused = await prove(inThread, preimages);
    expect(refused).toEqual({ type: 'error', message });
    // Blocks 4 and 5 run from block 3's forged stateRoot at the same time and fail too; block 3's refusal is the answer.
    expect(await prove(twoWorkers, preimages)).toEqual(refused);
  }, 120_000);

  it('refuses a witness lacking block 4 its parent state, naming block 4, while blocks 3 and 5 run', async () => {
    const root = blocks.get(3)!.stateRoot;
    const preimages = (await witness(request(2, 5))).filter((preimage) => !sameKey(preimage, root));
    const message = `L2 block 4: witness incomplete: no preimage for ${root}`;
    expect(await prove(inThread, preimages)).toEqual({ type: 'error', message: expect.stringContaining(message) });
    expect(await prove(twoWorkers, preimages)).toEqual({ type: 'error', message: expect.stringContaining(message) });
  }, 120_000);

  it('refuses the proof whose thread dies mid-proof, replaces the thread, and proves the next request', async () => {
    const crashing = createEnclaveCore({
      privateKey: key,
      pool: poolOf({
        workers: 2,
        workerUrl: new URL('../helpers/crashing-reexec-worker.ts', import.meta.url),
        workerData: { block: 4, crashed: new SharedArrayBuffer(4) },
      }),
    });
    const preimages = await witness(request(2, 5));
    expect(await prove(crashing, preimages)).toEqual({
      type: 'error',
      message: 'L2 block 4: the re-execution thread failed: it exited with code 7',
    });
    const expected = await prove(inThread, preimages);
    expect(expected.type).toBe('prove');
    expect(await prove(crashing, preimages)).toEqual(expected);
  }, 120_000);
});
