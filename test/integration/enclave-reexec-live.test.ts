import { readFileSync } from 'node:fs';
import { concat, hexToBytes, keccak256, numberToHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opMainnetRollupConfig } from '../../src/op/chains.ts';
import { encodeHeader, headerFromRpc } from '../../src/op/header.ts';
import { l1InfoCalldata, parseL1Info } from '../../src/op/l1-info.ts';
import { orderedTrieNodes } from '../../src/evm/receipts.ts';
import { bootKeys } from '../../src/prover/boot-info.ts';
import { configHashes, configHashOfRollup } from '../../src/prover/config-hash.ts';
import { createEnclaveCore, zeroHash } from '../../src/prover/enclave/core.ts';
import { accountStorageRoot } from '../../src/prover/enclave/mpt.ts';
import { digestKey, localKey, type Preimage } from '../../src/prover/enclave-protocol.ts';
import { journalDigest } from '../../src/prover/journal.ts';
import { messagePasserAddress, outputRootV0 } from '../../src/prover/output-root.ts';
import { recoverSigner } from '../../src/prover/signature.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { rpcCall, startProverChains, type ProverChains } from '../helpers/prover-fixture.ts';
import { sharedPath } from '../helpers/shared.ts';
import { scheduleIdOf } from '../../src/prover/schedule-id.ts';

/**
 * OP Mainnet (chain 10) in the enclave. Real blocks, `--enclave-check reexecute` (the default):
 * each runs again under flashlog's built-in OP Mainnet rollup config (not the fixture's mock
 * config) from the witness alone, to the chain's block hash. These Ecotone blocks predate Isthmus,
 * so their output root needs the L2ToL1MessagePasser's account from the state, which kona's
 * fixtures do not carry: the enclave stops there, naming it, and signs nothing. The journal's
 * config hash (OP Mainnet's, computed from the registry genesis in that config) is shown on a
 * synthetic chain served as chain 10 (Isthmus headers, `--enclave-check headers`). Before, chain
 * 10 was UnsupportedChain.
 */
const names = ['120794432', '121003241', '121049889', '121057303', '121065789', '121135704'].map((n) => `op-mainnet-${n}.json`);
const key = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as const;
const proposer = '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65' as const;

interface OpBlockFixture {
  chainId: number;
  blockNumber: number;
  parentHeader: unknown;
  payload: { transactions: Hex[] };
  expected: { blockHash: Hex; header: { stateRoot: Hex; gasUsed: Hex } };
  preimages: Record<string, Hex>;
}

/** The preimages a host would hand the enclave to prove the fixture's block on top of its parent. */
async function requestOf(fixture: OpBlockFixture) {
  const parentRlp = encodeHeader(headerFromRpc(fixture.parentHeader, 'parentHeader'));
  const headerRlp = encodeHeader(headerFromRpc(fixture.expected.header, 'expected.header'));
  const parent = headerFromRpc(fixture.parentHeader);
  const byHash = new Map(Object.values(fixture.preimages).map((value) => [keccak256(value), hexToBytes(value)]));
  // The witness holds no path to the message passer's account: its storage root is unknown here.
  expect(accountStorageRoot(parent.stateRoot, messagePasserAddress, (hash) => byHash.get(hash))).toBeUndefined();
  const unknown = keccak256('0x');
  const agreedPreimage = concat([zeroHash, parent.stateRoot, unknown, keccak256(parentRlp)]);
  const claimed = outputRootV0(fixture.expected.header.stateRoot, unknown, fixture.expected.blockHash);
  const origin = parseL1Info(l1InfoCalldata(fixture.payload.transactions));
  const u64 = (value: number | bigint) => hexToBytes(numberToHex(value, { size: 8 }));
  const locals: [number, Uint8Array][] = [
    [bootKeys.l1Head, hexToBytes(origin.l1BlockHash!)],
    [bootKeys.agreedOutputRoot, hexToBytes(keccak256(agreedPreimage))],
    [bootKeys.claimedOutputRoot, hexToBytes(claimed)],
    [bootKeys.claimedBlockNumber, u64(fixture.blockNumber)],
    [bootKeys.chainId, u64(fixture.chainId)],
    [bootKeys.proposer, hexToBytes(proposer)],
    [bootKeys.intermediateBlockInterval, u64(1)],
    [bootKeys.l1HeadNumber, u64(origin.l1BlockNumber!)],
  ];
  const values = [
    ...Object.values(fixture.preimages),
    ...(await orderedTrieNodes(fixture.payload.transactions)),
    parentRlp,
    headerRlp,
    agreedPreimage,
  ];
  const preimages: Preimage[] = [
    ...locals.map(([id, value]) => ({ key: localKey(id), value })),
    ...[...new Set(values.map((value) => value.toLowerCase() as Hex))].map((value) => ({
      key: digestKey('keccak256', keccak256(value)),
      value: hexToBytes(value),
    })),
  ];
  return preimages;
}

const read = (name: string) => JSON.parse(readFileSync(sharedPath(`fixtures/op-blocks/${name}`), 'utf8')) as OpBlockFixture;
const opMainnetHash = configHashOfRollup(opMainnetRollupConfig)!;

describe('the enclave re-executes real OP Mainnet blocks under the built-in OP Mainnet config', () => {
  const core = createEnclaveCore({ privateKey: key, check: 'reexecute' });

  it.each(names)(
    '%s: re-executed to its hash, then refused for want of the message passer account',
    async (name) => {
      const fixture = read(name);
      expect(fixture.chainId).toBe(10);
      expect(keccak256(encodeHeader(headerFromRpc(fixture.expected.header)))).toBe(fixture.expected.blockHash);
      const response = await core.handle({ type: 'prove', preimages: await requestOf(fixture) });
      // The block hash is compared before the message passer is read: this refusal means the hash matched.
      expect(response).toEqual({
        type: 'error',
        message: expect.stringMatching(
          new RegExp(
            `^L2 block ${fixture.blockNumber}: witness incomplete: no preimage for 0x[0-9a-f]{64} \\(account ${messagePasserAddress}`,
          ),
        ),
      });
    },
    60_000,
  );

  it("refuses a header the re-execution does not give, naming the real block's hash it computed", async () => {
    const fixture = read(names[1]!);
    const header = fixture.expected.header;
    const forged = {
      ...fixture,
      expected: { ...fixture.expected, header: { ...header, gasUsed: numberToHex(BigInt(header.gasUsed) + 1n) } },
    };
    const response = await core.handle({ type: 'prove', preimages: await requestOf(forged) });
    expect(response).toEqual({
      type: 'error',
      message: `L2 block ${fixture.blockNumber}: re-execution gives block hash ${fixture.expected.blockHash}, the chain's is ${keccak256(encodeHeader(headerFromRpc(forged.expected.header)))} (differing: gasUsed)`,
    });
  }, 60_000);
});

describe('the journal carries the computed OP Mainnet config hash', () => {
  let chains: ProverChains;
  beforeAll(async () => {
    chains = await startProverChains({ l2ChainId: 10 });
  });
  afterAll(async () => {
    await chains?.close();
  });

  it("is computed, not Base's table", () => {
    expect(opMainnetHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(configHashes.has(10)).toBe(false);
    expect([...configHashes.values()]).not.toContain(opMainnetHash);
  });

  it('a chain-10 range is signed with it (headers check, Isthmus headers)', async () => {
    const core = createEnclaveCore({ privateKey: key, check: 'headers' });
    const request = chains.request(3, 4);
    const preimages = await collectWitness(request, {
      l1: rpcCall(chains.l1.url),
      l2: rpcCall(chains.l2.url),
      l2ChainId: 10,
      check: 'headers',
    });
    const response = await core.handle({ type: 'prove', preimages });
    if (response.type !== 'prove' || response.result.type !== 'tee') throw new Error(`refused: ${JSON.stringify(response)}`);
    const proposal = response.result.aggregateProposal;
    expect(proposal).toMatchObject({ outputRoot: chains.l2Blocks[4]!.outputRoot, l2BlockNumber: 4, configHash: opMainnetHash });
    const digest = journalDigest({
      proposer: request.proposer,
      l1OriginHash: request.l1Head,
      prevOutputRoot: request.agreedL2OutputRoot,
      startingL2Block: 3,
      outputRoot: request.claimedL2OutputRoot,
      endingL2Block: 4,
      intermediateRoots: [],
      configHash: opMainnetHash,
      teeImageHash: zeroHash,
      // chain 10's schedule pinned at the synthetic block's own time (it is numbered before OP Mainnet's genesis)
      scheduleId: scheduleIdOf(opMainnetRollupConfig, 4, BigInt(chains.l2Blocks[4]!.json.timestamp!)),
    });
    expect(await recoverSigner(digest, proposal.signature)).toBe(core.signerAddress);
  });
});
