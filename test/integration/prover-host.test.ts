import { toHex, type Address, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnclaveClient } from '../../src/prover/host/enclave-client.ts';
import { zeroHash } from '../../src/prover/enclave/core.ts';
import { createProverHost, type ProverHost } from '../../src/prover/host/host.ts';
import { journalDigest } from '../../src/prover/journal.ts';
import { createSignerRegistry } from '../../src/prover/host/signer-registry.ts';
import { proofRequestToWire, proofResultFromWire, type ProofRequest } from '../../src/prover/request.ts';
import { recoverSigner } from '../../src/prover/signature.ts';
import { parseEndpoint } from '../../src/prover/transport.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { buildHeaderChain, serveHeaderChain, type HeaderChainServer, type TestBlock } from '../helpers/header-chain.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';
import { devnetScheduleId } from '../helpers/schedule.ts';

let l1: EdrChain;
let l2: HeaderChainServer;
let l2Blocks: TestBlock[];
let l1Head: { hash: Hex; number: number };
const enclaves: { process: FlashlogProcess; url: string; signer: string }[] = [];
const hosts: ProverHost[] = [];

beforeAll(async () => {
  l2Blocks = buildHeaderChain({ length: 30, seed: 'host-l2' });
  [l1, l2] = await Promise.all([startEdrChain(), serveHeaderChain(l2Blocks, 1337)]);
  const head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
  l1Head = { hash: head.hash, number: Number(BigInt(head.number)) };
  enclaves.push(
    ...(await Promise.all([
      startEnclaveProcess(['--enclave-check', 'headers']),
      startEnclaveProcess(['--enclave-check', 'headers']),
      startEnclaveProcess(['--prove-delay-ms', '3000', '--enclave-check', 'headers']),
    ])),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all(hosts.map((host) => host.close()));
  await Promise.all(enclaves.map((enclave) => enclave.process.stop()));
  await l2?.close();
  await l1?.close();
});

async function startHost(options: {
  enclaveUrls: string[];
  registry?: boolean;
  timeoutMs?: number;
}): Promise<{ host: ProverHost; url: string }> {
  const host = createProverHost({
    enclaves: options.enclaveUrls.map((url) => createEnclaveClient(parseEndpoint(url))),
    registry: options.registry ? createSignerRegistry({ address: l1.registry, l1RpcUrl: l1.url }) : undefined,
    witness: (request, signal) =>
      collectWitness(request, { l1: rpcCall(l1.url), l2: rpcCall(l2.url), l2ChainId: 1337, signal, check: 'headers' }),
    timeoutMs: options.timeoutMs ?? 60_000,
    version: '0.1.0',
  });
  hosts.push(host);
  const { url } = await host.listen('127.0.0.1', 0);
  return { host, url };
}

let nextId = 1;
async function rpc(
  url: string,
  method: string,
  params: unknown = [],
): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as never;
}

const request = (agreed: number, claimed: number, overrides: Partial<ProofRequest> = {}): ProofRequest => ({
  l1Head: l1Head.hash,
  agreedL2HeadHash: l2Blocks[agreed]!.hash,
  agreedL2OutputRoot: l2Blocks[agreed]!.outputRoot,
  claimedL2OutputRoot: l2Blocks[claimed]!.outputRoot,
  claimedL2BlockNumber: claimed,
  proposer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  intermediateBlockInterval: 1,
  l1HeadNumber: l1Head.number,
  imageHash: zeroHash,
  ...overrides,
});

/** Who signed the aggregate proposal of a `prover_prove` result. */
async function aggregateSigner(result: unknown, req: ProofRequest): Promise<Address> {
  const parsed = proofResultFromWire(result);
  if (parsed.type !== 'tee') throw new Error('expected Tee');
  const p = parsed.aggregateProposal;
  const count = parsed.proposals.length;
  const roots =
    count === 1 ? [] : parsed.proposals.filter((_, i) => (i + 1) % req.intermediateBlockInterval === 0).map((x) => x.outputRoot);
  return recoverSigner(
    journalDigest({
      proposer: req.proposer,
      l1OriginHash: p.l1OriginHash,
      prevOutputRoot: p.prevOutputRoot,
      startingL2Block: p.l2BlockNumber - count,
      outputRoot: p.outputRoot,
      endingL2Block: p.l2BlockNumber,
      intermediateRoots: roots,
      configHash: p.configHash,
      teeImageHash: zeroHash,
      scheduleId: devnetScheduleId,
    }),
    p.signature,
  );
}

describe('prover host without a registry (one enclave)', () => {
  let url: string;
  beforeAll(async () => {
    ({ url } = await startHost({ enclaveUrls: [enclaves[0]!.url] }));
  });

  it('prover_prove answers {"Tee":…} in Base\'s JSON: snake_case, numbers, 0x-hex; signed by the enclave', async () => {
    const req = request(4, 7, { intermediateBlockInterval: 3 });
    const wire = proofRequestToWire(req);
    // Optional fields absent -> zero; here they are present. Hashes without 0x are accepted too.
    const out = await rpc(url, 'prover_prove', [{ ...wire, l1_head: wire.l1_head.slice(2) }]);
    expect(out.error).toBeUndefined();
    const tee = (out.result as { Tee: { aggregate_proposal: Record<string, unknown>; proposals: Record<string, unknown>[] } }).Tee;
    expect(Object.keys(tee.aggregate_proposal).sort()).toEqual([
      'config_hash',
      'l1_origin_hash',
      'l1_origin_number',
      'l2_block_number',
      'output_root',
      'prev_output_root',
      'schedule_id',
      'signature',
    ]);
    expect(tee.aggregate_proposal.schedule_id).toBe(devnetScheduleId);
    expect((out.result as { Tee: { tee_signer: string } }).Tee.tee_signer).toBe(enclaves[0]!.signer);
    expect(tee.aggregate_proposal.l2_block_number).toBe(7);
    expect(tee.aggregate_proposal.l1_origin_number).toBe(l1Head.number);
    expect(tee.aggregate_proposal.output_root).toBe(l2Blocks[7]!.outputRoot);
    expect(tee.proposals).toHaveLength(3);
    expect(await aggregateSigner(out.result, req)).toBe(enclaves[0]!.signer);
  });

  it('missing optional request fields default to zero (proposer 0x0, one block needs no interval)', async () => {
    const {
      proposer: _p,
      intermediate_block_interval: _i,
      l1_head_number: _n,
      image_hash: _h,
      ...required
    } = proofRequestToWire(request(8, 9));
    const out = await rpc(url, 'prover_prove', [required]);
    const parsed = proofResultFromWire(out.result);
    expect(parsed.type === 'tee' && parsed.aggregateProposal.l1OriginNumber).toBe(0);
    expect(
      await aggregateSigner(out.result, request(8, 9, { proposer: '0x0000000000000000000000000000000000000000', l1HeadNumber: 0 })),
    ).toBe(enclaves[0]!.signer);
  });

  it('accepts named params {"request": …} as jsonrpsee does', async () => {
    const out = await rpc(url, 'prover_prove', { request: proofRequestToWire(request(12, 13)) });
    expect(proofResultFromWire(out.result)).toMatchObject({
      aggregateProposal: { l2BlockNumber: 13, outputRoot: l2Blocks[13]!.outputRoot },
    });
  });

  it("a wrong claimed root is -32000 with the enclave's text", async () => {
    const out = await rpc(url, 'prover_prove', [proofRequestToWire(request(4, 6, { claimedL2OutputRoot: l2Blocks[5]!.outputRoot }))]);
    expect(out.error?.code).toBe(-32000);
    expect(out.error?.message).toMatch(/^output root mismatch at L2 block 6: computed 0x[0-9a-f]{64}, claimed 0x/);
  });

  it('bad params are -32602 naming the field; block numbers must be JSON numbers', async () => {
    const out = await rpc(url, 'prover_prove', [{ ...proofRequestToWire(request(4, 6)), claimed_l2_block_number: '0x6' }]);
    expect(out.error?.code).toBe(-32602);
    expect(out.error?.message).toMatch(/^params\[0\]\.claimed_l2_block_number: /);
  });

  it('enclave_signerPublicKey returns one 65-byte key per enclave as arrays of integers', async () => {
    const out = await rpc(url, 'enclave_signerPublicKey');
    const keys = out.result as number[][];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toHaveLength(65);
    expect(keys[0]![0]).toBe(4);
    expect(publicKeyToAddress(toHex(Uint8Array.from(keys[0]!)))).toBe(enclaves[0]!.signer);
  });

  it('enclave_signerAttestation fails -32001 in local mode; over-long user_data/nonce is -32602 first', async () => {
    const local = await rpc(url, 'enclave_signerAttestation', [[1, 2, 3], null]);
    expect(local.error).toEqual({ code: -32001, message: 'attestation unavailable: no Nitro security module (local mode)' });
    const long = Array.from({ length: 513 }, () => 7);
    expect((await rpc(url, 'enclave_signerAttestation', [long, null])).error).toEqual({
      code: -32602,
      message: 'user_data exceeds 512-byte limit',
    });
    expect((await rpc(url, 'enclave_signerAttestation', [null, long])).error).toEqual({
      code: -32602,
      message: 'nonce exceeds 512-byte limit',
    });
  });

  it('checks sizes before calling any enclave (a host whose enclave is down still answers -32602)', async () => {
    const { url: deadUrl } = await startHost({ enclaveUrls: ['tcp://127.0.0.1:1'] });
    expect((await rpc(deadUrl, 'enclave_signerAttestation', [Array.from({ length: 600 }, () => 1)])).error?.code).toBe(-32602);
    const down = await rpc(deadUrl, 'enclave_signerPublicKey');
    expect(down.error?.code).toBe(-32001);
    expect(down.error?.message).toMatch(/tcp:\/\/127\.0\.0\.1:1/);
  });

  it('enclave_* is all-or-nothing over the enclaves', async () => {
    const { url: mixed } = await startHost({ enclaveUrls: [enclaves[0]!.url, 'tcp://127.0.0.1:1'] });
    expect((await rpc(mixed, 'enclave_signerPublicKey')).error?.code).toBe(-32001);
  });

  it('healthz and GET /healthz answer the version; unknown methods and bad JSON get their codes', async () => {
    expect((await rpc(url, 'healthz')).result).toEqual({ version: '0.1.0' });
    const get = await fetch(`${url}/healthz`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ version: '0.1.0' });
    expect((await rpc(url, 'eth_chainId')).error?.code).toBe(-32601);
    const bad = await fetch(url, { method: 'POST', body: '{"jsonrpc":"2.0",' });
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});

describe('prover host timeout and drain', () => {
  it('a proof over the timeout is -32000 "proof request timed out after 1s for L2 block N"', async () => {
    const { url } = await startHost({ enclaveUrls: [enclaves[2]!.url], timeoutMs: 1000 });
    const out = await rpc(url, 'prover_prove', [proofRequestToWire(request(2, 3))]);
    expect(out.error).toEqual({ code: -32000, message: 'proof request timed out after 1s for L2 block 3' });
  });

  it('close() stops accepting but lets an in-flight proof finish', async () => {
    const { host, url } = await startHost({ enclaveUrls: [enclaves[2]!.url] });
    const inFlight = rpc(url, 'prover_prove', [proofRequestToWire(request(2, 3))]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const closing = host.close();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    const out = await inFlight;
    expect(await aggregateSigner(out.result, request(2, 3))).toBe(enclaves[2]!.signer);
    await closing;
  });
});

describe('prover host with a signer registry on a local EDR chain (two enclaves)', () => {
  let url: string;
  beforeAll(async () => {
    ({ url } = await startHost({ enclaveUrls: [enclaves[0]!.url, enclaves[1]!.url], registry: true }));
  });

  it('routes, refuses with NoValidSigner, and latches health', async () => {
    const [a, b] = [enclaves[0]!.signer as Address, enclaves[1]!.signer as Address];
    // No signer valid yet: unhealthy, and proofs are refused with -32001.
    expect((await rpc(url, 'healthz')).error).toEqual({ code: -32000, message: 'signer is not a valid signer in TEEProverRegistry' });
    expect((await fetch(`${url}/healthz`)).status).toBe(500);
    const refused = await rpc(url, 'prover_prove', [proofRequestToWire(request(10, 11))]);
    expect(refused.error).toEqual({ code: -32001, message: `no valid signer found among: [${a}, ${b}]` });

    // Only the second enclave's signer is valid: requests go to it, and health turns OK.
    await l1.setValidSigner(b, true);
    const routed = await rpc(url, 'prover_prove', [proofRequestToWire(request(10, 11))]);
    expect(await aggregateSigner(routed.result, request(10, 11))).toBe(b);
    expect((await rpc(url, 'healthz')).result).toEqual({ version: '0.1.0' });

    // Both valid: the first in configured order wins.
    await l1.setValidSigner(a, true);
    const first = await rpc(url, 'prover_prove', [proofRequestToWire(request(11, 12))]);
    expect(await aggregateSigner(first.result, request(11, 12))).toBe(a);

    // Deregistered again: health stays latched, proofs are refused.
    await l1.setValidSigner(a, false);
    await l1.setValidSigner(b, false);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await rpc(url, 'prover_prove', [proofRequestToWire(request(10, 11))])).error?.code).toBe(-32001);
  });
});
