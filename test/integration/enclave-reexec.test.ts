import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hexToBytes, keccak256, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { createEnclaveCore, zeroHash, type EnclaveCore } from '../../src/prover/enclave/core.ts';
import { createReexecPool } from '../../src/prover/enclave/reexec-pool.ts';
import { outputRootV0 } from '../../src/prover/output-root.ts';
import { digestKey, type Preimage } from '../../src/prover/enclave-protocol.ts';
import type { ProofRequest } from '../../src/prover/request.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { decodeHeaderRlp, encodeHeader, headerFromRpc } from '../../src/op/header.ts';
import { orderedTrieNodes, orderedTrieRoot } from '../../src/evm/receipts.ts';
import { collectBlockWitness } from '../../src/prover/host/witness-rpc.ts';
import { devnetRollupConfig } from '../../src/op/chains.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { fixtureFromRpc } from '../../src/prover/host/fixture.ts';
import { eventually } from '../helpers/context.ts';
import { spawnFlashlog } from '../helpers/flashlog-process.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';

/**
 * The enclave proves by re-executing: each block of the range runs again from the request's
 * preimages (devnet blocks, witness from prestate traces + eth_getProof), and a header the chain
 * did not execute that way is refused even when it hashes and links correctly.
 */
let devnet: Devnet;
const blocks = new Map<number, { hash: Hex; rlp: Hex; outputRoot: Hex; stateRoot: Hex; withdrawalsRoot: Hex }>();
const key = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as const;
const pool = createReexecPool({ workers: 2 });
const cores: [string, EnclaveCore][] = [
  ['in its own thread', createEnclaveCore({ privateKey: key })],
  ['on 2 worker threads', createEnclaveCore({ privateKey: key, pool })],
];
const headersOnly = createEnclaveCore({ privateKey: key, check: 'headers' });

beforeAll(async () => {
  devnet = await createDevnet({ blockTimeMs: 300, load: 20 });
  const call = rpcCall(devnet.rpcUrl);
  await eventually(
    async () => (Number(BigInt((await call('eth_blockNumber', [])) as Hex)) >= 5 ? true : undefined),
    30_000,
    'devnet block 5',
  );
  for (let n = 1; n <= 5; n++) {
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
  await pool.close();
  await devnet?.close();
});

const request = (agreed: number, claimed: number, claimedRoot = blocks.get(claimed)!.outputRoot): ProofRequest => ({
  // The devnet stands in for L1 too: the enclave only needs the L1 head's header.
  l1Head: blocks.get(1)!.hash,
  agreedL2HeadHash: blocks.get(agreed)!.hash,
  agreedL2OutputRoot: blocks.get(agreed)!.outputRoot,
  claimedL2OutputRoot: claimedRoot,
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
const prove = async (core: EnclaveCore, preimages: Preimage[]) => core.handle({ type: 'prove', preimages });

describe("the devnet's own blocks re-executed from an eth_getProof witness", () => {
  it('blocks 1-5 reproduce their hashes', async () => {
    for (let n = 1n; n <= 5n; n++) {
      const fixture = fixtureFromRpc(await collectBlockWitness(rpcCall(devnet.rpcUrl), n), devnetRollupConfig);
      const executed = await executeBlock(fixture.block);
      expect({ n, hash: executed.hash }).toEqual({ n, hash: fixture.expectedHash });
    }
  }, 60_000);

  it('flashlog execute-block --l2-rpc URL --block-number N exits 0 on a devnet block', async () => {
    // A child process (not spawnSync: the devnet it reads lives in this process).
    const run = spawnFlashlog(['execute-block', '--l2-rpc', devnet.rpcUrl, '--block-number', '4', '--json']);
    expect(await run.exited).toBe(0);
    expect(run.lines.find((line) => 'matches' in line)).toMatchObject({
      block: 4,
      matches: true,
      differing: [],
      hash: blocks.get(4)!.hash,
    });
  }, 60_000);

  it('refuses a --rollup-config of another chain than the node serves, naming both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashlog-rollup-'));
    const file = join(dir, 'rollup.json');
    writeFileSync(file, JSON.stringify({ ...devnetRollupConfig, l2_chain_id: 1000 }));
    const run = spawnFlashlog(['execute-block', '--l2-rpc', devnet.rpcUrl, '--block-number', '4', '--rollup-config', file]);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('l2_chain_id is 1000, but');
    expect(run.stderr()).toContain('serves chain 1337');
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);
});

describe.each(cores)('the enclave proves by re-executing devnet blocks, %s', (_, reexecuting) => {
  it('signs a range whose blocks re-execute to their hashes', async () => {
    const response = await prove(reexecuting, await witness(request(2, 4)));
    expect(response).toMatchObject({
      type: 'prove',
      result: { type: 'tee', aggregateProposal: { outputRoot: blocks.get(4)!.outputRoot, l2BlockNumber: 4 } },
    });
  }, 60_000);

  it('refuses a wrong claimed root', async () => {
    const response = await prove(reexecuting, await witness(request(2, 3, blocks.get(4)!.outputRoot)));
    expect(response).toEqual({ type: 'error', message: expect.stringMatching(/^output root mismatch at L2 block 3: computed /) });
  }, 60_000);

  it('refuses a witness lacking a node, naming its key', async () => {
    const preimages = await witness(request(2, 3));
    const root = blocks.get(2)!.stateRoot;
    const response = await prove(
      reexecuting,
      preimages.filter((preimage) => !sameKey(preimage, root)),
    );
    expect(response).toEqual({
      type: 'error',
      message: expect.stringContaining(`L2 block 3: witness incomplete: no preimage for ${root}`),
    });
  }, 60_000);

  it('refuses a witness node with a flipped byte', async () => {
    const preimages = await witness(request(2, 3));
    const index = preimages.findIndex((preimage) => sameKey(preimage, blocks.get(2)!.stateRoot));
    const value = Uint8Array.from(preimages[index]!.value);
    value[5]! ^= 0x01;
    preimages[index] = { key: preimages[index]!.key, value };
    expect(await prove(reexecuting, preimages)).toEqual({
      type: 'error',
      message: expect.stringMatching(/^preimage \d+ \(keccak256\): value does not hash to its key$/),
    });
  }, 60_000);

  it('refuses a hash-linked block whose transactions changed, which a header-only check signs', async () => {
    // Block 3 with its last transaction dropped: a new transactionsRoot, so a new hash; the claim is
    // that block's output root with the real state root. Every header still links by hash.
    const real = blocks.get(3)!;
    const w = await collectBlockWitness(rpcCall(devnet.rpcUrl), 3n);
    expect(w.transactions.length).toBeGreaterThan(1);
    const fewer = w.transactions.slice(0, -1);
    const forged = encodeHeader({ ...decodeHeaderRlp(real.rlp), transactionsRoot: await orderedTrieRoot(fewer) });
    const forgedHash = keccak256(forged);
    const claimed = outputRootV0(real.stateRoot, real.withdrawalsRoot, forgedHash);
    const preimages = (await witness(request(2, 3))).filter((preimage) => !sameKey(preimage, real.hash));
    preimages.push({ key: keccakKey(forgedHash), value: hexToBytes(forged) });
    for (const node of await orderedTrieNodes(fewer)) preimages.push({ key: keccakKey(keccak256(node)), value: hexToBytes(node) });
    const forgedRequest = { ...request(2, 3), claimedL2OutputRoot: claimed };
    const boot = preimages.filter((preimage) => preimage.key.type === 'local');
    const rest = preimages.filter((preimage) => preimage.key.type !== 'local');
    const withClaim = [
      ...boot.filter((p) => p.key.data[30] !== 3),
      { key: boot.find((p) => p.key.data[30] === 3)!.key, value: hexToBytes(forgedRequest.claimedL2OutputRoot) },
      ...rest,
    ];

    expect(await prove(headersOnly, withClaim)).toMatchObject({ type: 'prove' });
    const refused = await prove(reexecuting, withClaim);
    expect(refused).toEqual({
      type: 'error',
      message: expect.stringMatching(
        new RegExp(
          `^L2 block 3: re-execution gives block hash 0x[0-9a-f]{64}, the chain's is ${forgedHash} \\(differing: stateRoot, receiptsRoot, .*gasUsed`,
        ),
      ),
    });
  }, 60_000);
});
