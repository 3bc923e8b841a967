import { hexToBytes, keccak256, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnclaveCore } from '../../src/prover/enclave/core.ts';
import { accountStorageRoot } from '../../src/prover/enclave/mpt.ts';
import { emptyTrieRoot } from '../../src/evm/op/witness-state.ts';
import { messagePasserAddress, outputRootV0 } from '../../src/prover/output-root.ts';
import type { ProofRequest } from '../../src/prover/request.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';

/**
 * The pre-Isthmus path: the message-passer storage root is not in the header, so the host sends
 * the account proof (state-trie nodes from eth_getProof) and the enclave walks it from the
 * header's stateRoot. L2 here is a real EDR chain whose id (763360) has no Isthmus time in the
 * table, so this path is taken; the message passer's storage changes between blocks.
 */
let l1: EdrChain;
let l2: EdrChain;
const blocks: { number: number; hash: Hex; stateRoot: Hex; storageRoot: Hex; outputRoot: Hex; withdrawalsRoot: Hex }[] = [];

beforeAll(async () => {
  [l1, l2] = await Promise.all([
    startEdrChain(),
    // The message passer here is a stand-in whose code stores calldata[32:64] at slot calldata[0:32].
    startEdrChain({
      chainId: 763360,
      genesis: [{ address: messagePasserAddress, storage: [{ index: 1n, value: 5n }], code: '0x6020356000355500' }],
    }),
  ]);
  for (let i = 0; i < 4; i++) {
    await l2.send({ to: messagePasserAddress, data: `0x${(10 + i).toString(16).padStart(64, '0')}${'ab'.repeat(32)}` });
  }
  const head = Number(BigInt((await l2.request('eth_blockNumber')) as Hex));
  for (let n = 0; n <= head; n++) {
    const block = (await l2.request('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as {
      hash: Hex;
      stateRoot: Hex;
      withdrawalsRoot: Hex;
    };
    const proof = (await l2.request('eth_getProof', [messagePasserAddress, [], `0x${n.toString(16)}`])) as { storageHash: Hex };
    blocks.push({
      number: n,
      hash: block.hash,
      stateRoot: block.stateRoot,
      storageRoot: proof.storageHash,
      withdrawalsRoot: block.withdrawalsRoot,
      outputRoot: outputRootV0(block.stateRoot, proof.storageHash, block.hash),
    });
  }
}, 60_000);
afterAll(async () => {
  await l2?.close();
  await l1?.close();
});

const core = createEnclaveCore({ privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a', check: 'headers' });
const last = () => blocks[blocks.length - 1]!;

async function request(claimedRoot?: Hex): Promise<ProofRequest> {
  const l1Head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
  const agreed = blocks[2]!;
  return {
    l1Head: l1Head.hash,
    agreedL2HeadHash: agreed.hash,
    agreedL2OutputRoot: agreed.outputRoot,
    claimedL2OutputRoot: claimedRoot ?? last().outputRoot,
    claimedL2BlockNumber: last().number,
    proposer: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
    intermediateBlockInterval: 1,
    l1HeadNumber: Number(BigInt(l1Head.number)),
    imageHash: `0x${'00'.repeat(32)}`,
  };
}
const witness = (req: ProofRequest) =>
  collectWitness(req, { l1: rpcCall(l1.url), l2: rpcCall(l2.url), l2ChainId: 763360, check: 'headers' });

describe('message-passer storage root from an account proof', () => {
  it('the storage roots of the last blocks differ and are not the header withdrawalsRoot', () => {
    expect(new Set(blocks.slice(-4).map((b) => b.storageRoot)).size).toBe(4);
    expect(blocks.every((b) => b.storageRoot !== b.withdrawalsRoot)).toBe(true);
  });

  it('the enclave walks the proof from each stateRoot and signs the claimed root', async () => {
    const req = await request();
    const response = await core.handle({ type: 'prove', preimages: await witness(req) });
    if (response.type !== 'prove' || response.result.type !== 'tee') throw new Error(`expected a proof, got ${JSON.stringify(response)}`);
    expect(response.result.proposals.map((p) => p.outputRoot)).toEqual(blocks.slice(3).map((b) => b.outputRoot));
  });

  it('refuses a claim built from the header withdrawalsRoot instead', async () => {
    const wrong = outputRootV0(last().stateRoot, last().withdrawalsRoot, last().hash);
    const response = await core.handle({ type: 'prove', preimages: await witness(await request(wrong)) });
    expect(response).toMatchObject({ type: 'error' });
    expect((response as { message: string }).message).toMatch(/output root mismatch/);
  });

  it('refuses when the proof nodes are left out', async () => {
    const req = await request();
    const preimages = await witness(req);
    const proof = (await l2.request('eth_getProof', [messagePasserAddress, [], `0x${last().number.toString(16)}`])) as {
      accountProof: Hex[];
    };
    const leafHash = keccak256(proof.accountProof[proof.accountProof.length - 1]!);
    const without = preimages.filter((p) => !(p.key.type === 'keccak256' && keccak256(p.value) === leafHash));
    expect(without.length).toBe(preimages.length - 1);
    const response = await core.handle({ type: 'prove', preimages: without });
    expect((response as { message: string }).message).toMatch(/message-passer account proof is missing/);
  });

  it('an absent account has the empty storage root', async () => {
    const absent = '0x000000000000000000000000000000000000dEaD';
    const proof = (await l2.request('eth_getProof', [absent, [], 'latest'])) as { accountProof: Hex[]; storageHash: Hex };
    const nodes = new Map(proof.accountProof.map((node) => [keccak256(node), hexToBytes(node)]));
    expect(accountStorageRoot(last().stateRoot, absent, (h) => nodes.get(h))).toBe(emptyTrieRoot);
    expect(accountStorageRoot(last().stateRoot, messagePasserAddress, (h) => nodes.get(h))).toBeUndefined();
  });
});
