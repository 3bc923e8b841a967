import { Common, Mainnet } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import { bytesToHex, concat, decodeFunctionResult, encodeFunctionData, hexToBytes, slice, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnclaveCore } from '../../src/prover/enclave/core.ts';
import type { ProofResult } from '../../src/prover/enclave-protocol.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { intermediateRootsOf } from '../../src/prover/journal.ts';
import type { ProofRequest } from '../../src/prover/request.ts';
import { verifyProofResult } from '../../src/prover/verify.ts';
import { activatedScheduleId, upgradeScheduleOf } from '../../src/prover/schedule-id.ts';
import { baseMainnetRollupConfig, devnetRollupConfig } from '../../src/op/chains.ts';
import { compileHelperContract } from '../helpers/derived-chain-genesis.ts';
import { rpcCall, startProverChains, type ProverChains } from '../helpers/prover-fixture.ts';
import { devnetScheduleId } from '../helpers/schedule.ts';

/**
 * A proof of devnet blocks held against a Solidity copy of AggregateVerifier's journal hashing and
 * TEEVerifier's signer recovery (test/helpers/contracts/JournalHarness.sol, compiled with solc and
 * run on the ethereumjs EVM): the contract side is solc's abi.encodePacked and the ecrecover
 * precompile, not flashlog's encoder.
 */
const harness = compileHelperContract('JournalHarness.sol', 'JournalHarness');
const zero: Hex = `0x${'00'.repeat(32)}`;
let chains: ProverChains;
let request: ProofRequest;
let result: Extract<ProofResult, { type: 'tee' }>;

beforeAll(async () => {
  chains = await startProverChains();
  request = chains.request(2, 6, { intermediateBlockInterval: 2 });
  const core = createEnclaveCore({ privateKey: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a', check: 'headers' });
  const preimages = await collectWitness(request, {
    l1: rpcCall(chains.l1.url),
    l2: rpcCall(chains.l2.url),
    l2ChainId: 1337,
    check: 'headers',
  });
  const response = await core.handle({ type: 'prove', preimages });
  if (response.type !== 'prove' || response.result.type !== 'tee') throw new Error(JSON.stringify(response));
  result = response.result;
}, 60_000);
afterAll(async () => {
  await chains?.close();
});

/** The aggregate's journal fields as AggregateVerifier has them for this game. */
const aggregateJournal = (scheduleId: Hex) => {
  const a = result.aggregateProposal;
  return {
    proposer: request.proposer,
    l1OriginHash: a.l1OriginHash,
    startingRoot: request.agreedL2OutputRoot,
    startingL2SequenceNumber: BigInt(request.claimedL2BlockNumber - result.proposals.length),
    endingRoot: a.outputRoot,
    endingL2SequenceNumber: BigInt(a.l2BlockNumber),
    intermediateRoots: concat(intermediateRootsOf(result.proposals, request.intermediateBlockInterval)),
    configHash: a.configHash,
    teeImageHash: zero,
    scheduleId,
  };
};

async function signerOnChain(journal: ReturnType<typeof aggregateJournal>, signature65: Hex): Promise<{ digest: Hex; signer: Address }> {
  const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork: 'cancun' }) });
  const data = encodeFunctionData({ abi: harness.abi, functionName: 'signerOf', args: [journal, concat([journal.proposer, signature65])] });
  const out = await evm.runCode({ code: hexToBytes(harness.deployedBytecode), data: hexToBytes(data), gasLimit: 10_000_000n });
  if (out.exceptionError) throw new Error(`harness reverted: ${out.exceptionError.error} ${bytesToHex(out.returnValue)}`);
  const [digest, signer] = decodeFunctionResult({ abi: harness.abi, functionName: 'signerOf', data: bytesToHex(out.returnValue) }) as [
    Hex,
    Address,
  ];
  return { digest, signer };
}

describe('the journal harness (AggregateVerifier hashing, TEEVerifier recovery)', () => {
  it("a devnet proof's aggregate recovers to the enclave's tee_signer with the devnet scheduleId, the digest flashlog rebuilds", async () => {
    expect(result.aggregateProposal.scheduleId).toBe(devnetScheduleId);
    const { proposals } = await verifyProofResult(result, request, zero, devnetScheduleId);
    const aggregate = proposals.at(-1)!;
    // the 65-byte r‖s‖v with v as 27/28 ends the L1 proof bytes verify-proposal prints
    const onChain = await signerOnChain(aggregateJournal(devnetScheduleId), slice(aggregate.proof, 65));
    expect(onChain.digest).toBe(aggregate.digest);
    expect(onChain.signer).toBe(result.teeSigner);
    expect(aggregate.signer).toBe(result.teeSigner);
  });

  it('refuses (recovers another signer) when the game pins another scheduleId', async () => {
    const { proposals } = await verifyProofResult(result, request, zero, devnetScheduleId);
    const other = await signerOnChain(aggregateJournal(`0x${'ab'.repeat(32)}`), slice(proposals.at(-1)!.proof, 65));
    expect(other.signer).not.toBe(result.teeSigner);
  });

  it('refuses a signature over the journal before scheduleId', async () => {
    const { signDigest } = await import('../../src/prover/signature.ts');
    const { preScheduleJournalDigest } = await import('../../src/prover/journal.ts');
    const j = aggregateJournal(devnetScheduleId);
    const before = await signDigest(
      preScheduleJournalDigest({
        proposer: j.proposer,
        l1OriginHash: j.l1OriginHash,
        prevOutputRoot: j.startingRoot,
        startingL2Block: j.startingL2SequenceNumber,
        outputRoot: j.endingRoot,
        endingL2Block: j.endingL2SequenceNumber,
        intermediateRoots: intermediateRootsOf(result.proposals, request.intermediateBlockInterval),
        configHash: j.configHash,
        teeImageHash: j.teeImageHash,
      }),
      '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
    );
    const v27 = concat([slice(before, 0, 64), bytesToHex(Uint8Array.of(hexToBytes(before)[64]! + 27))]);
    const onChain = await signerOnChain(j, v27);
    expect(onChain.signer).not.toBe(result.teeSigner);
  });
});

describe('the scheduleId against a Solidity copy of ProtocolVersions.activatedScheduleId', () => {
  const schedule = compileHelperContract('ScheduleHarness.sol', 'ScheduleHarness');
  const onChain = async (timestamps: bigint[], at: bigint): Promise<Hex> => {
    const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork: 'cancun' }) });
    const data = encodeFunctionData({ abi: schedule.abi, functionName: 'activatedScheduleId', args: [timestamps, at] });
    const out = await evm.runCode({ code: hexToBytes(schedule.deployedBytecode), data: hexToBytes(data), gasLimit: 10_000_000n });
    if (out.exceptionError) throw new Error(`harness reverted: ${out.exceptionError.error}`);
    return decodeFunctionResult({ abi: schedule.abi, functionName: 'activatedScheduleId', data: bytesToHex(out.returnValue) }) as Hex;
  };

  it.each([
    ['Base mainnet at Denim', upgradeScheduleOf(baseMainnetRollupConfig), 1793901600n],
    ['Base mainnet the second before Denim', upgradeScheduleOf(baseMainnetRollupConfig), 1793901599n],
    ['the devnet', upgradeScheduleOf(devnetRollupConfig), 1_000n],
    ['a gap below the active upgrade', [10n, 50n, 0n, 30n, 1000n], 60n],
    ['nothing active yet', [10n, 20n], 9n],
  ])('%s: flashlog and the EVM agree', async (_, timestamps, at) => {
    expect(await onChain(timestamps, at)).toBe(activatedScheduleId(timestamps, at));
  });
});
