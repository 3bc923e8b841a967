import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, keccak256, parseEther, parseGwei, stringToHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevnetPortal } from '../../devnet/contracts/bytecode.ts';
import { devnetAccounts } from '../../devnet/edr/devnet.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';
import { proofRequestFromChains } from '../../src/prover/request-from-chain.ts';
import { proofResultFromWire } from '../../src/prover/request.ts';
import type { CompiledContract } from '../helpers/derived-chain-genesis.ts';
import { startDerivedL1, type DerivedL1 } from '../helpers/derived-chain-l1.ts';
import { runFlashlog, spawnFlashlog, startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';
import { goPrograms } from '../helpers/strict-clients.ts';

/**
 * `flashlog devnet --op-geth` as a user runs it: its L1 is EDR (Prague, blobs); the devnet deploys
 * its deposit contract there, runs op-geth as its L2, sequences it from that L1 and posts every
 * block to the batch inbox in blobs. A deposit made on the L1 and a transaction sent to op-geth's
 * txpool land on the L2. Then real `flashlog enclave` and `flashlog prover-host`, both
 * `--enclave-check derive`, the host given the devnet's rollup.json and beacon endpoint, prove a
 * range holding both: the enclave derives every block from the L1 and signs op-geth's output roots.
 */
const key = (name: string) => keccak256(stringToHex(`flashlog op-geth devnet test ${name}`));
/** One devnet per target, each with its own batcher key and inbox on the one L1. */
const targets = {
  blob: { batcherKey: key('blob batcher'), inbox: '0xff00000000000000000000000000000000000901' },
  calldata: { batcherKey: key('calldata batcher'), inbox: '0xff00000000000000000000000000000000000902' },
} as const;
const depositor = privateKeyToAccount(key('depositor'));
const depositRecipient: Address = '0x00000000000000000000000000000000000d3905';
const l2Recipient: Address = '0x000000000000000000000000000000000000c0de';

let dir: string;
let l1: DerivedL1;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flashlog-op-geth-devnet-'));
  l1 = await startDerivedL1({
    chainId: 900,
    // The helper's own portal is unused: the devnet deploys its own.
    portal: '0x0000000000000000000000000000000000042001',
    portalContract: DevnetPortal as CompiledContract,
    contracts: [],
    funded: [...Object.values(targets).map((target) => privateKeyToAccount(target.batcherKey).address), depositor.address].map(
      (address) => ({
        address,
        balance: parseEther('1000'),
      }),
    ),
  });
  // EDR loads its KZG setup at its first blob transaction: taken here, outside the batcher's RPC timeout.
  await l1.warmUpBlobs(depositor);
}, 120_000);

afterAll(async () => {
  await l1?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('flashlog devnet --op-geth', () => {
  it('refuses --op-geth without --batcher-l1-rpc, naming the flag', async () => {
    const run = await runFlashlog(['devnet', '--op-geth', goPrograms().opGeth, '--no-metrics', '--data-dir', join(dir, 'refused')]);
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/--batcher-l1-rpc \(FLASHLOG_BATCHER_L1_RPC\): missing/);
  });

  it('refuses an --op-geth that is not an executable, naming the setting', async () => {
    const run = await runFlashlog(['devnet', '--op-geth', join(dir, 'no-such-op-geth'), '--batcher-l1-rpc', l1.edr.url, '--no-metrics']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--op-geth \(or FLASHLOG_OP_GETH\).*expected the path of an executable op-geth binary/);
  });

  for (const target of ['blob', 'calldata'] as const)
    it(`derives its L2 from the L1 (batches in ${target === 'blob' ? 'blobs' : 'calldata'}); the enclave derives a range with a deposit and a pool transaction and signs op-geth's output roots`, async () => {
      await proveOnDevnet(target);
    }, 150_000);
});

async function proveOnDevnet(target: keyof typeof targets): Promise<void> {
  const mine: FlashlogProcess[] = [];
  try {
    const devnet = spawnFlashlog([
      'devnet',
      '--op-geth',
      goPrograms().opGeth,
      '--batcher-l1-rpc',
      l1.edr.url,
      '--batcher-key',
      targets[target].batcherKey,
      '--batcher-inbox',
      targets[target].inbox,
      '--batcher-target',
      target,
      '--batcher-every-blocks',
      '3',
      '--batcher-beacon-port',
      '0',
      '--devnet-port',
      '0',
      '--data-dir',
      join(dir, `devnet-${target}`),
      '--no-metrics',
      // The blob devnet also runs the built-in load through op-geth's txpool.
      ...(target === 'blob' ? ['--load', '5'] : []),
    ]);
    mine.push(devnet);
    const started = await devnet.waitFor((line) => line.msg === 'devnet started', 90_000);
    const l2Url = String(started.rpc);
    const rollupPath = String(started.rollupConfig);
    const rollup = parseRollupConfig(JSON.parse(readFileSync(rollupPath, 'utf8')));
    expect(rollup.l2_chain_id).toBe(Number(started.chainId));
    expect(rollup.deposit_contract_address?.toLowerCase()).toBe(String(started.portal).toLowerCase());
    const l2 = rpcCall(l2Url);
    // The range starts on a channel's first block: derivation from an agreed block inside a span
    // batch needs the blocks before it, which the enclave is not given.
    await until('L2 block 4', async () => (Number(await l2('eth_blockNumber', []).catch(() => '0x0')) >= 4 ? true : undefined));
    // A deposit through the devnet's portal on the L1, and a transfer to op-geth's txpool.
    const portal = String(started.portal) as Address;
    expect(portal).not.toBe(l1.portal);
    const deposit = await l1.signCall(depositor, await l1.nonce(depositor.address), {
      to: portal,
      value: parseEther('2'),
      data: encodeFunctionData({
        abi: DevnetPortal.abi,
        functionName: 'depositTransaction',
        args: [depositRecipient, parseEther('1'), 100_000n, false, '0x'],
      }),
    });
    const depositHash = (await l1.edr.request('eth_sendRawTransaction', [deposit])) as Hex;
    const depositReceipt = (await l1.edr.request('eth_getTransactionReceipt', [depositHash])) as { status: Hex; logs: unknown[] };
    expect(depositReceipt.status).toBe('0x1');
    expect(depositReceipt.logs).toHaveLength(1);
    // Account 9: the load signs with 0-7.
    const user = privateKeyToAccount(devnetAccounts()[9]!.privateKey);
    const transfer = await user.signTransaction({
      type: 'eip1559',
      chainId: Number(started.chainId),
      nonce: 0,
      gas: 21_000n,
      maxFeePerGas: parseGwei('5'),
      maxPriorityFeePerGas: 1_000_000n,
      to: l2Recipient,
      value: 12_345n,
    });
    const transferHash = (await l2('eth_sendRawTransaction', [transfer])) as Hex;
    const transferBlock = await until('the transfer on L2', async () => {
      // op-geth answers "transaction indexing is in progress" for its first moments.
      const receipt = (await l2('eth_getTransactionReceipt', [transferHash]).catch(() => null)) as { blockNumber: Hex; status: Hex } | null;
      if (receipt) expect(receipt.status).toBe('0x1');
      return receipt ? Number(receipt.blockNumber) : undefined;
    });
    const depositBlock = await until('the deposit on L2', async () => {
      const head = Number(await l2('eth_blockNumber', []));
      const balance = BigInt((await l2('eth_getBalance', [depositRecipient, 'latest'])) as Hex);
      return balance === parseEther('1') ? head : undefined;
    });
    // Whole channels of 3 blocks: agreed and claimed on their boundaries.
    const claimed = Math.ceil((Math.max(transferBlock, depositBlock) + 1) / 3) * 3;
    const agreed = Math.floor((Math.min(transferBlock, depositBlock) - 1) / 3) * 3;
    expect(agreed).toBeGreaterThan(0);
    // Every block of the range posted (a channel every 3 blocks).
    await devnet.waitFor(
      (line) => line.msg === 'batcher: channel posted to L1' && Number((line.l2Blocks as string[])[1]) >= claimed,
      60_000,
    );
    const enclave = await startEnclaveProcess(['--enclave-check', 'derive']);
    mine.push(enclave.process);
    const host = spawnFlashlog([
      'prover-host',
      '--l1-rpc',
      l1.edr.url,
      '--l2-rpc',
      l2Url,
      '--l1-beacon-rpc',
      String(started.beacon),
      '--rollup-config',
      rollupPath,
      '--enclave',
      enclave.url,
      '--enclave-check',
      'derive',
      '--port',
      '0',
      '--no-metrics',
    ]);
    mine.push(host);
    const hostUrl = String((await host.waitFor((line) => line.msg === 'prover host listening', 60_000)).url);
    const made = await runFlashlog([
      'proof-request',
      '--l1-rpc',
      l1.edr.url,
      '--l2-rpc',
      l2Url,
      '--block-number',
      String(claimed),
      '--agreed-block-number',
      String(agreed),
    ]);
    expect(made.code, made.stderr).toBe(0);
    const response = (await (
      await fetch(hostUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prover_prove', params: [JSON.parse(made.stdout)] }),
      })
    ).json()) as { result?: unknown; error?: { message: string } };
    expect(response.error).toBeUndefined();
    const report = await host.waitFor((line) => line.msg === 'derivation preimages');
    if (target === 'blob') expect(report.blobs).toBeGreaterThan(0);
    else expect(report.blobs).toBe(0);
    const result = proofResultFromWire(response.result);
    if (result.type !== 'tee') throw new Error('expected a TEE proof');
    expect(result.proposals.map((p) => p.l2BlockNumber)).toEqual(Array.from({ length: claimed - agreed }, (_, i) => agreed + 1 + i));
    if (target === 'blob') {
      // The load's transactions are in the proved range: blocks beyond the L1-info deposit and the test's own two.
      let transactions = 0;
      for (let n = agreed + 1; n <= claimed; n++)
        transactions += ((await l2('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as { transactions: Hex[] }).transactions.length;
      expect(transactions).toBeGreaterThan(claimed - agreed + 2 + 5);
    }
    const chains = { l1: rpcCall(l1.edr.url), l2 };
    for (const proposal of result.proposals) {
      const served = await proofRequestFromChains(chains, { claimedBlock: proposal.l2BlockNumber });
      expect(proposal.outputRoot).toBe(served.claimedL2OutputRoot);
    }
  } finally {
    for (const process of mine.reverse()) await process.stop();
  }
}
