import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { concat, hexToBytes, numberToHex, pad, slice, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnclaveCore } from '../../src/prover/enclave/core.ts';
import { proofRequestToWire, proofResultToWire } from '../../src/prover/request.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { preScheduleJournalDigest } from '../../src/prover/journal.ts';
import { signDigest } from '../../src/prover/signature.ts';
import type { Proposal } from '../../src/prover/enclave-protocol.ts';
import { tempDir } from '../helpers/context.ts';
import { devnetScheduleId } from '../helpers/schedule.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { rpcCall, startProverChains, type ProverChains } from '../helpers/prover-fixture.ts';

const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dir = tempDir();
let chains: ProverChains;
let evm: EdrChain;
const privateKey: Hex = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';
const core = createEnclaveCore({ privateKey, check: 'headers' });

let single: { request: ReturnType<ProverChains['request']>; response: Awaited<ReturnType<typeof core.handle>> };
beforeAll(async () => {
  [chains, evm] = await Promise.all([startProverChains(), startEdrChain()]);
  const request = chains.request(2, 3);
  const preimages = await collectWitness(request, {
    l1: rpcCall(chains.l1.url),
    l2: rpcCall(chains.l2.url),
    l2ChainId: 1337,
    check: 'headers',
  });
  single = { request, response: await core.handle({ type: 'prove', preimages }) };
}, 60_000);
afterAll(async () => {
  await chains?.close();
  await evm?.close();
  dir.remove();
});

const cli = (...args: string[]) => spawnSync(process.execPath, [bin, 'verify-proposal', ...args], { encoding: 'utf8', timeout: 30_000 });

describe('flashlog verify-proposal', () => {
  it('rebuilds the journals, recovers the enclave signer and prints 130-byte proofs the EVM ecrecover accepts', async () => {
    const request = chains.request(2, 6, { intermediateBlockInterval: 2 });
    const response = await core.handle({
      type: 'prove',
      preimages: await collectWitness(request, {
        l1: rpcCall(chains.l1.url),
        l2: rpcCall(chains.l2.url),
        l2ChainId: 1337,
        check: 'headers',
      }),
    });
    if (response.type !== 'prove') throw new Error(JSON.stringify(response));
    const resultFile = join(dir.path, 'result.json');
    const requestFile = join(dir.path, 'request.json');
    // A reply record as `flashlog prove` prints it.
    writeFileSync(resultFile, JSON.stringify({ v: 1, requestId: 'x', repliedAt: 0, result: proofResultToWire(response.result) }));
    writeFileSync(requestFile, JSON.stringify(proofRequestToWire(request)));
    const out = cli(resultFile, requestFile, '--schedule-id', devnetScheduleId);
    expect(out.status, out.stderr).toBe(0);
    const rows = out.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            kind: string;
            signer: string;
            proof: Hex;
            digest: Hex;
            journal: Hex;
            startingL2Block: number;
            scheduleId: Hex;
          },
      );
    expect(rows.map((r) => r.kind)).toEqual(['block', 'block', 'block', 'block', 'aggregate']);
    expect(rows.every((r) => r.signer === core.signerAddress)).toBe(true);
    expect(rows[4]!.startingL2Block).toBe(2);
    // the journal ends with the devnet's scheduleId (228 + 32·N bytes)
    expect(hexToBytes(rows[4]!.journal).length).toBe(228 + 2 * 32);
    expect(rows.every((r) => r.scheduleId === devnetScheduleId && r.journal.endsWith(devnetScheduleId.slice(2)))).toBe(true);
    for (const row of rows) {
      const proof = hexToBytes(row.proof);
      expect(proof.length).toBe(130);
      expect([27, 28]).toContain(proof[129]);
      // The EVM's ecrecover precompile (what OpenZeppelin's ECDSA.tryRecover uses) takes v as 27/28.
      const sig = slice(row.proof, 65);
      const input = concat([row.digest, pad(numberToHex(proof[129]!), { size: 32 }), slice(sig, 0, 32), slice(sig, 32, 64)]);
      const recovered = (await evm.request('eth_call', [
        { to: '0x0000000000000000000000000000000000000001', data: input },
        'latest',
      ])) as Hex;
      expect(`0x${recovered.slice(26)}`).toBe(core.signerAddress.toLowerCase());
    }
  });

  it('exits 1 when the result does not match the request, and 2 on unreadable input', async () => {
    const request = chains.request(2, 3);
    const response = await core.handle({
      type: 'prove',
      preimages: await collectWitness(request, {
        l1: rpcCall(chains.l1.url),
        l2: rpcCall(chains.l2.url),
        l2ChainId: 1337,
        check: 'headers',
      }),
    });
    if (response.type !== 'prove') throw new Error(JSON.stringify(response));
    const resultFile = join(dir.path, 'result1.json');
    const requestFile = join(dir.path, 'request-other.json');
    writeFileSync(resultFile, JSON.stringify(proofResultToWire(response.result)));
    writeFileSync(requestFile, JSON.stringify(proofRequestToWire(chains.request(2, 4))));
    const mismatch = cli(resultFile, requestFile);
    expect(mismatch.status).toBe(1);
    expect(mismatch.stderr).toMatch(/aggregate output_root 0x[0-9a-f]{64} is not the claimed/);
    const missing = cli(join(dir.path, 'nope.json'), requestFile);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/RESULT\.json .*nope\.json: cannot read JSON/);
  });

  it('refuses a proof whose scheduleId differs from the pinned one, and one signed over the journal before scheduleId, saying which', async () => {
    // Proved before any test runs the CLI: spawnSync blocks this thread past the fixture servers' keep-alive.
    const { request, response } = single;
    if (response.type !== 'prove' || response.result.type !== 'tee') throw new Error(JSON.stringify(response));
    const requestFile = join(dir.path, 'request-schedule.json');
    writeFileSync(requestFile, JSON.stringify(proofRequestToWire(request)));
    const resultFile = join(dir.path, 'result-schedule.json');
    writeFileSync(resultFile, JSON.stringify(proofResultToWire(response.result)));

    const otherSchedule = `0x${'ab'.repeat(32)}`;
    const differs = cli(resultFile, requestFile, '--schedule-id', otherSchedule);
    expect(differs.status).toBe(1);
    expect(differs.stderr).toContain(
      `proposal for L2 block 3: scheduleId ${devnetScheduleId} differs from ${otherSchedule}, the one the L1 game pins`,
    );

    // The same range signed by the same key over the journal as it was before scheduleId.
    const resign = async (p: Proposal): Promise<Proposal> => ({
      ...p,
      signature: await signDigest(
        preScheduleJournalDigest({
          proposer: request.proposer,
          l1OriginHash: p.l1OriginHash,
          prevOutputRoot: p.prevOutputRoot,
          startingL2Block: p.l2BlockNumber - 1,
          outputRoot: p.outputRoot,
          endingL2Block: p.l2BlockNumber,
          intermediateRoots: [],
          configHash: p.configHash,
          teeImageHash: `0x${'00'.repeat(32)}`,
        }),
        privateKey,
      ),
    });
    const old = {
      ...response.result,
      aggregateProposal: await resign(response.result.aggregateProposal),
      proposals: [await resign(response.result.proposals[0]!)],
    };
    const oldFile = join(dir.path, 'result-old-journal.json');
    writeFileSync(oldFile, JSON.stringify(proofResultToWire(old)));
    const before = cli(oldFile, requestFile, '--schedule-id', devnetScheduleId);
    expect(before.status).toBe(1);
    expect(before.stderr).toContain('proposal for L2 block 3: signed over the journal before scheduleId');
    // A reply from before the scheduleId fields at all: no schedule_id, no tee_signer.
    const legacy = proofResultToWire({
      ...old,
      teeSigner: undefined,
      aggregateProposal: { ...old.aggregateProposal, scheduleId: undefined },
      proposals: [{ ...old.proposals[0]!, scheduleId: undefined }],
    });
    writeFileSync(oldFile, JSON.stringify(legacy));
    const none = cli(oldFile, requestFile, '--schedule-id', devnetScheduleId);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('proposal for L2 block 3: no schedule_id: a result from before the scheduleId journal');
  });
});
