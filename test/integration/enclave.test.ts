import { hexToBytes, keccak256, numberToHex, toHex, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnclaveCore, zeroHash } from '../../src/prover/enclave/core.ts';
import { createEnclaveClient, type EnclaveClient } from '../../src/prover/host/enclave-client.ts';
import { serveEnclave } from '../../src/prover/enclave/socket-server.ts';
import { configHashes } from '../../src/prover/config-hash.ts';
import { journalDigest } from '../../src/prover/journal.ts';
import { decodeEnclaveResponse, encodeEnclaveRequest, type Preimage, type Proposal } from '../../src/prover/enclave-protocol.ts';
import { recoverSigner } from '../../src/prover/signature.ts';
import { parseEndpoint, readFrame } from '../../src/prover/transport.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { tempDir } from '../helpers/context.ts';
import { startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { rpcCall, startProverChains, type ProverChains } from '../helpers/prover-fixture.ts';
import { devnetScheduleId } from '../helpers/schedule.ts';

let chains: ProverChains;
let enclave: { process: FlashlogProcess; url: string; signer: string };
let client: EnclaveClient;

beforeAll(async () => {
  [chains, enclave] = await Promise.all([startProverChains({ l2Length: 260 }), startEnclaveProcess(['--enclave-check', 'headers'])]);
  client = createEnclaveClient(parseEndpoint(enclave.url));
}, 30_000);
afterAll(async () => {
  await enclave?.process.stop();
  await chains?.close();
});

const witness = (agreed: number, claimed: number, overrides = {}) =>
  collectWitness(chains.request(agreed, claimed, overrides), {
    l1: rpcCall(chains.l1.url),
    l2: rpcCall(chains.l2.url),
    l2ChainId: 1337,
    check: 'headers',
  });

/** Rebuilds the per-block journal of a proposal and recovers who signed it. */
const perBlockSigner = (p: Proposal, proposer: Hex) =>
  recoverSigner(
    journalDigest({
      proposer: proposer as `0x${string}`,
      l1OriginHash: p.l1OriginHash,
      prevOutputRoot: p.prevOutputRoot,
      startingL2Block: p.l2BlockNumber - 1,
      outputRoot: p.outputRoot,
      endingL2Block: p.l2BlockNumber,
      intermediateRoots: [],
      configHash: p.configHash,
      teeImageHash: zeroHash,
      scheduleId: devnetScheduleId,
    }),
    p.signature,
  );

describe('local-mode enclave (real process over TCP)', () => {
  it('answers SignerPublicKey with a 65-byte uncompressed key of the logged signer', async () => {
    const key = await client.signerPublicKey();
    expect(key.length).toBe(65);
    expect(key[0]).toBe(4);
    expect(publicKeyToAddress(toHex(key))).toBe(enclave.signer);
    expect(
      enclave.process.lines.some((line) =>
        /local mode, headers only: .*re-executes nothing, does not derive the blocks from L1/.test(String(line.msg)),
      ),
    ).toBe(true);
    // Only the address is logged, never the key.
    expect(JSON.stringify(enclave.process.lines)).not.toMatch(/privateKey|secret/i);
  });

  it('refuses attestation: there is no security module', async () => {
    await expect(client.signerAttestation(Uint8Array.of(1), Uint8Array.of(2))).rejects.toThrow(/no Nitro security module/);
  });

  it('proves a one-block range: the aggregate is the per-block proposal, signed by the enclave', async () => {
    const request = chains.request(5, 6);
    const result = await client.prove(await witness(5, 6));
    if (result.type !== 'tee') throw new Error('expected a Tee result');
    expect(result.proposals).toHaveLength(1);
    expect(result.aggregateProposal).toEqual(result.proposals[0]);
    const p = result.proposals[0]!;
    expect(p).toMatchObject({
      outputRoot: chains.l2Blocks[6]!.outputRoot,
      l2BlockNumber: 6,
      prevOutputRoot: chains.l2Blocks[5]!.outputRoot,
      l1OriginHash: request.l1Head,
      l1OriginNumber: request.l1HeadNumber,
      configHash: configHashes.get(1337),
    });
    expect(hexToBytes(p.signature)).toHaveLength(65);
    expect([0, 1]).toContain(hexToBytes(p.signature)[64]);
    expect(await perBlockSigner(p, request.proposer)).toBe(enclave.signer);
  });

  it('proves blocks 10..14 with interval 2: chained per-block journals and an aggregate with 2 intermediate roots', async () => {
    const request = chains.request(10, 14);
    const result = await client.prove(await witness(10, 14));
    if (result.type !== 'tee') throw new Error('expected a Tee result');
    expect(result.proposals.map((p) => p.l2BlockNumber)).toEqual([11, 12, 13, 14]);
    for (const [i, p] of result.proposals.entries()) {
      expect(p.outputRoot).toBe(chains.l2Blocks[11 + i]!.outputRoot);
      expect(p.prevOutputRoot).toBe(chains.l2Blocks[10 + i]!.outputRoot);
      expect(await perBlockSigner(p, request.proposer)).toBe(enclave.signer);
    }
    const aggregate = result.aggregateProposal;
    expect(aggregate.prevOutputRoot).toBe(request.agreedL2OutputRoot);
    const digest = journalDigest({
      proposer: request.proposer,
      l1OriginHash: request.l1Head,
      prevOutputRoot: request.agreedL2OutputRoot,
      startingL2Block: 10,
      outputRoot: request.claimedL2OutputRoot,
      endingL2Block: 14,
      intermediateRoots: [chains.l2Blocks[12]!.outputRoot, chains.l2Blocks[14]!.outputRoot],
      configHash: configHashes.get(1337)!,
      teeImageHash: zeroHash,
      scheduleId: devnetScheduleId,
    });
    expect(await recoverSigner(digest, aggregate.signature)).toBe(enclave.signer);
  });

  it('proves 250 blocks in one request larger than 28 KiB (chunked writes both ways)', async () => {
    const preimages = await witness(3, 253, { intermediateBlockInterval: 10 });
    expect(encodeEnclaveRequest({ type: 'prove', preimages }).length).toBeGreaterThan(28 * 1024 * 4);
    const result = await client.prove(preimages);
    if (result.type !== 'tee') throw new Error('expected a Tee result');
    expect(result.proposals).toHaveLength(250);
    expect(result.aggregateProposal.outputRoot).toBe(chains.l2Blocks[253]!.outputRoot);
  });

  it('refuses a wrong claimed root and signs nothing', async () => {
    await expect(client.prove(await witness(5, 7, { claimedL2OutputRoot: keccak256('0x01') }))).rejects.toThrow(
      /output root mismatch at L2 block 7/,
    );
  });

  it('refuses a preimage that does not hash to its key', async () => {
    const preimages = await witness(5, 6);
    const tampered: Preimage[] = preimages.map((p) =>
      p.key.type === 'keccak256' && p.value.length > 200
        ? { key: p.key, value: Uint8Array.from(p.value, (b, i) => (i === 100 ? b ^ 1 : b)) }
        : p,
    );
    await expect(client.prove(tampered)).rejects.toThrow(/does not hash to its key/);
  });

  it('refuses an unknown chain: UnsupportedChain', async () => {
    const preimages = (await witness(5, 6)).map((p) =>
      p.key.type === 'local' && p.key.data[30] === 5 ? { key: p.key, value: hexToBytes(numberToHex(424242, { size: 8 })) } : p,
    );
    await expect(client.prove(preimages)).rejects.toThrow(/UnsupportedChain: no config hash for L2 chain id 424242/);
  });

  it('refuses a multi-block range with interval 0 (InvalidInterval)', async () => {
    await expect(client.prove(await witness(5, 7, { intermediateBlockInterval: 0 }))).rejects.toThrow(/InvalidInterval/);
  });

  it('answers a garbage frame with an Error response and stays up', async () => {
    const socket = createConnection({ host: '127.0.0.1', port: Number(new URL(enclave.url).port) });
    await new Promise((resolve) => socket.once('connect', resolve));
    const reply = readFrame(socket, 5000, 'test');
    socket.write(Uint8Array.of(0, 0, 0, 2, 9, 9));
    const response = decodeEnclaveResponse(await reply);
    expect(response).toMatchObject({ type: 'error' });
    expect((response as { message: string }).message).toMatch(/invalid request: .*unknown variant 9/);
    socket.destroy();
    expect((await client.signerPublicKey()).length).toBe(65);
  });
});

describe('enclave over a Unix socket', () => {
  it('serves SignerPublicKey and Prove', async () => {
    const dir = tempDir();
    const core = createEnclaveCore({ privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', check: 'headers' });
    const server = await serveEnclave(core, { endpoint: { kind: 'unix', path: `${dir.path}/enclave.sock` } });
    try {
      const unixClient = createEnclaveClient(parseEndpoint(`unix:${dir.path}/enclave.sock`));
      expect(toHex(await unixClient.signerPublicKey())).toBe(toHex(core.publicKey));
      const result = await unixClient.prove(await witness(1, 2));
      expect(result.type === 'tee' && result.aggregateProposal.outputRoot).toBe(chains.l2Blocks[2]!.outputRoot);
    } finally {
      await server.close();
      dir.remove();
    }
  });
});

describe('enclave request frame limits', () => {
  it('answers an Error when the request frame does not arrive in time, or announces too many bytes', async () => {
    const core = createEnclaveCore({ privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', check: 'headers' });
    const server = await serveEnclave(core, {
      endpoint: { kind: 'tcp', host: '127.0.0.1', port: 0 },
      requestTimeoutMs: 200,
      maxFrameBytes: 1024,
    });
    const port = (server.endpoint as { port: number }).port;
    const exchange = async (bytes: Uint8Array) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      await new Promise((resolve) => socket.once('connect', resolve));
      const reply = readFrame(socket, 5000, 'test');
      socket.write(bytes);
      try {
        return decodeEnclaveResponse(await reply);
      } finally {
        socket.destroy();
      }
    };
    try {
      // Half a frame, then silence.
      expect(await exchange(Uint8Array.of(0, 0, 0, 9, 1))).toEqual({
        type: 'error',
        message: 'invalid request frame: enclave request: no complete frame within 200 ms',
      });
      expect(await exchange(Uint8Array.of(0, 0, 8, 0))).toEqual({
        type: 'error',
        message: 'invalid request frame: frame announces 2048 bytes, over the cap of 1024',
      });
    } finally {
      await server.close();
    }
  });
});
