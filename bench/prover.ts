import { createEnclaveCore } from '../src/prover/enclave/core.ts';
import { createEnclaveClient } from '../src/prover/host/enclave-client.ts';
import { serveEnclave } from '../src/prover/enclave/socket-server.ts';
import { journalDigest } from '../src/prover/journal.ts';
import { encodeEnclaveRequest } from '../src/prover/enclave-protocol.ts';
import { signDigest } from '../src/prover/signature.ts';
import { collectWitness } from '../src/prover/host/witness.ts';
import { rpcCall, startProverChains } from '../test/helpers/prover-fixture.ts';

/**
 * Local-mode proving costs on one core: signing a journal, the enclave's check-and-sign for
 * ranges of 1 to 1,800 L2 blocks (1,800 = one hour of Base at 2 s blocks), the same over TCP
 * frames, and the host's witness collection from a local JSON-RPC server of real headers.
 */
export async function run(): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  const key = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
  const zero = `0x${'00'.repeat(32)}` as const;
  const journal = {
    proposer: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as const,
    l1OriginHash: zero,
    prevOutputRoot: zero,
    startingL2Block: 1,
    outputRoot: zero,
    endingL2Block: 2,
    intermediateRoots: [],
    configHash: zero,
    teeImageHash: zero,
    scheduleId: zero,
  };
  let count = 0;
  const started = performance.now();
  while (performance.now() - started < 1000) {
    await signDigest(journalDigest({ ...journal, startingL2Block: count }), key);
    count++;
  }
  rows.push({ case: 'journal encode + keccak + sign', perSecond: Math.round(count / ((performance.now() - started) / 1000)) });

  const chains = await startProverChains({ l2Length: 1802 });
  const core = createEnclaveCore({ privateKey: key, check: 'headers' });
  const server = await serveEnclave(core, { endpoint: { kind: 'tcp', host: '127.0.0.1', port: 0 } });
  const client = createEnclaveClient(server.endpoint);
  try {
    for (const blocks of [1, 10, 100, 1800]) {
      const request = chains.request(1, 1 + blocks, { intermediateBlockInterval: blocks >= 10 ? 10 : 1 });
      const t0 = performance.now();
      const preimages = await collectWitness(request, {
        l1: rpcCall(chains.l1.url),
        l2: rpcCall(chains.l2.url),
        l2ChainId: 1337,
        check: 'headers',
      });
      const witnessMs = performance.now() - t0;
      const frameBytes = encodeEnclaveRequest({ type: 'prove', preimages }).length;
      const t1 = performance.now();
      const local = await core.handle({ type: 'prove', preimages });
      const proveMs = performance.now() - t1;
      if (local.type !== 'prove') throw new Error(JSON.stringify(local));
      const t2 = performance.now();
      await client.prove(preimages);
      const tcpMs = performance.now() - t2;
      rows.push({
        case: `prove ${blocks} block${blocks > 1 ? 's' : ''}`,
        requestFrameKiB: Math.round(frameBytes / 1024),
        witnessMs: Math.round(witnessMs),
        enclaveMs: Math.round(proveMs),
        overTcpMs: Math.round(tcpMs),
        blocksPerSecond: Math.round(blocks / (proveMs / 1000)),
        tcpOverheadRatio: Number((tcpMs / proveMs).toFixed(2)),
      });
    }
  } finally {
    await server.close();
    await chains.close();
  }
  return rows;
}
