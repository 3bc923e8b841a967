import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proofRequestToWire } from '../../src/prover/request.ts';
import { spawnFlashlog, startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { startProverChains, type ProverChains } from '../helpers/prover-fixture.ts';

/** `flashlog prover-host` as a process: startup checks, the chain from the L2 RPC, drain on SIGTERM. */
let chains: ProverChains;
let enclave: { process: FlashlogProcess; url: string; signer: string };
beforeAll(async () => {
  [chains, enclave] = await Promise.all([
    startProverChains(),
    startEnclaveProcess(['--prove-delay-ms', '1500', '--enclave-check', 'headers']),
  ]);
}, 30_000);
afterAll(async () => {
  await enclave?.process.stop();
  await chains?.close();
});

const stderrOf = (proc: FlashlogProcess) =>
  new Promise<string>((resolve) => {
    let text = '';
    proc.child.stderr!.on('data', (c: Buffer) => {
      text += c.toString();
    });
    void proc.exited.then(() => resolve(text));
  });

describe('flashlog prover-host', () => {
  it('refuses an unknown chain with a clear error (exit 2)', async () => {
    const proc = spawnFlashlog([
      'prover-host',
      '--l1-rpc',
      chains.l1.url,
      '--l2-rpc',
      chains.l2.url,
      '--l2-chain-id',
      '424242',
      '--port',
      '0',
      '--no-metrics',
      '--enclave-check',
      'headers',
    ]);
    const stderr = stderrOf(proc);
    expect(await proc.exited).toBe(2);
    expect(await stderr).toMatch(/--l2-chain-id \(FLASHLOG_L2_CHAIN_ID\): unknown chain 424242, expected one of 8453 \(base-mainnet\)/);
  });

  it('serves OP Mainnet by its chain id alone: config hash and rollup config built in', async () => {
    const proc = spawnFlashlog([
      'prover-host',
      '--l1-rpc',
      chains.l1.url,
      '--l2-rpc',
      chains.l2.url,
      '--l2-chain-id',
      '10',
      '--enclave',
      enclave.url,
      '--port',
      '0',
      '--no-metrics',
    ]);
    const line = await proc.waitFor((l) => l.msg === 'prover host listening');
    expect(line).toMatchObject({ chainId: 10, chain: 'op-mainnet', check: 'reexecute' });
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });

  it('derives OP Mainnet with its built-in derivation fields when no --rollup-config is given', async () => {
    const proc = spawnFlashlog([
      'prover-host',
      '--l1-rpc',
      chains.l1.url,
      '--l2-rpc',
      chains.l2.url,
      '--l2-chain-id',
      '10',
      '--enclave',
      enclave.url,
      '--port',
      '0',
      '--no-metrics',
      '--enclave-check',
      'derive',
    ]);
    const line = await proc.waitFor((l) => l.msg === 'prover host listening');
    expect(line).toMatchObject({ chainId: 10, chain: 'op-mainnet', check: 'derive' });
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });

  it('needs --registry with more than one enclave (exit 2)', async () => {
    const proc = spawnFlashlog([
      'prover-host',
      '--l1-rpc',
      chains.l1.url,
      '--l2-rpc',
      chains.l2.url,
      '--enclave',
      'tcp://127.0.0.1:1',
      '--enclave',
      'tcp://127.0.0.1:2',
      '--no-metrics',
    ]);
    const stderr = stderrOf(proc);
    expect(await proc.exited).toBe(2);
    expect(await stderr).toMatch(/--registry \(FLASHLOG_REGISTRY\): required with more than one --enclave \(got 2\)/);
  });

  it('asks the L2 RPC for its chain, serves, and drains an in-flight proof on SIGTERM', async () => {
    const proc = spawnFlashlog([
      'prover-host',
      '--l1-rpc',
      chains.l1.url,
      '--l2-rpc',
      chains.l2.url,
      '--enclave',
      enclave.url,
      '--port',
      '0',
      '--no-metrics',
      '--enclave-check',
      'headers',
    ]);
    const line = await proc.waitFor((l) => l.msg === 'prover host listening');
    expect(line).toMatchObject({ chainId: 1337, chain: 'devnet' });
    const url = String(line.url);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ version: '0.1.0' });
    const inFlight = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'prover_prove', params: [proofRequestToWire(chains.request(3, 4))] }),
    });
    await proc.waitFor((l) => l.msg === 'proving');
    proc.child.kill('SIGTERM');
    const reply = (await (await inFlight).json()) as { id: number; result?: { Tee: { aggregate_proposal: { output_root: string } } } };
    expect(reply.id).toBe(7);
    expect(reply.result?.Tee.aggregate_proposal.output_root).toBe(chains.l2Blocks[4]!.outputRoot);
    expect(await proc.exited).toBe(0);
  });
});
