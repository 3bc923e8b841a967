import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesToHex, hexToBytes, keccak256, type Hex } from 'viem';
import { encodeChannelOut } from '../../src/derive/channel-out.ts';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeDeposit } from '../../src/op/deposit-tx.ts';
import { encodeHeader, decodeHeaderRlp } from '../../src/op/header.ts';
import { orderedTrieNodes, orderedTrieRoot } from '../../src/evm/receipts.ts';
import { digestKey, type Preimage } from '../../src/prover/enclave-protocol.ts';
import { createEnclaveCore } from '../../src/prover/enclave/core.ts';
import { createReexecPool } from '../../src/prover/enclave/reexec-pool.ts';
import { journalDigest } from '../../src/prover/journal.ts';
import { proofRequestFromChains } from '../../src/prover/request-from-chain.ts';
import { proofRequestToWire, proofResultFromWire, type ProofRequest } from '../../src/prover/request.ts';
import { recoverSigner } from '../../src/prover/signature.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { parseTransaction } from 'viem/op-stack';
import { startDerivedChain, derivedChainKeys, type DerivedChain } from '../helpers/derived-chain.ts';
import { runFlashlog, spawnFlashlog, startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';
import { scheduleIdOfChain } from '../helpers/schedule.ts';

/**
 * `prove` over a chain derived from a real L1: the L1 is EDR (Prague, blobs), the L2 is op-geth
 * built block by block from the attributes of its L1 origins, and flashlog's batcher posted the L2
 * blocks to the L1's batch inbox (test/helpers/derived-chain.ts). A real `flashlog prover-host`
 * and `flashlog enclave`, both `--enclave-check derive`, prove ranges of it: the host collects the
 * L1 (headers, transactions, receipts, blobs from the beacon endpoint) and the L2; the enclave
 * derives every block from that L1, re-executes it and signs. The signed output roots are the
 * ones op-geth serves. Then, in process, the same preimages with the L2 block a lying host would
 * supply (a transaction added, dropped, reordered, a forged deposit, the block a batch from a key
 * that is not the batcher describes): each refused, naming the block and the reason, nothing
 * signed. (That a batch from another key is never read is held decisively by
 * src/derive/pipeline.test.ts, where it is the only batch on L1; here the batcher's own batch for
 * the block came first.) An L1 head on an abandoned fork is refused by the host; the range on the
 * fork that stayed proves.
 */
const enclaveKey = keccak256('0x6465726976652d656e636c617665');
let blobChain: DerivedChain;
let calldataChain: DerivedChain;
let dir: string;
let enclave: { process: FlashlogProcess; url: string; signer: string };
const hosts: FlashlogProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flashlog-derived-prove-'));
  blobChain = await startDerivedChain({ target: 'blob', kind: 'span', compression: 'brotli' });
  calldataChain = await startDerivedChain({ target: 'calldata', kind: 'singular', compression: 'zlib', jovian: false });
  enclave = await startEnclaveProcess(['--enclave-check', 'derive', '--enclave-workers', '2']);
  expect(enclave.process.lines.find((line) => line.msg === 'enclave listening')).toMatchObject({ check: 'derive', reexecThreads: 2 });
}, 240_000);

afterAll(async () => {
  for (const host of hosts) await host.stop();
  await enclave?.process.stop();
  await Promise.all([blobChain?.close(), calldataChain?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function startHost(chain: DerivedChain): Promise<string> {
  const rollupPath = join(dir, `rollup-${chain.l2ChainId}-${hosts.length}.json`);
  writeFileSync(rollupPath, JSON.stringify(chain.rollupConfig));
  const host = spawnFlashlog([
    'prover-host',
    '--l1-rpc',
    chain.l1RpcUrl,
    '--l2-rpc',
    chain.l2RpcUrl,
    '--l1-beacon-rpc',
    chain.beaconUrl,
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
  hosts.push(host);
  return String((await host.waitFor((line) => line.msg === 'prover host listening')).url);
}

const rpcOf = (chain: DerivedChain) => ({ l1: rpcCall(chain.l1RpcUrl), l2: rpcCall(chain.l2RpcUrl) });

const hostUrls = new Map<DerivedChain, string>();

describe('prove over a chain derived from L1', () => {
  for (const which of ['blob', 'calldata'] as const) {
    it(`the enclave derives, re-executes and signs a range whose batches are in ${which === 'blob' ? 'blobs (span, brotli)' : 'calldata (singular, zlib)'}`, async () => {
      const chain = which === 'blob' ? blobChain : calldataChain;
      expect((await enclave.process.waitFor((line) => line.msg === 'enclave listening')).check).toBe('derive');
      const url = await startHost(chain);
      hostUrls.set(chain, url);
      const agreed = 5;
      const claimed = chain.l2Blocks.length;
      const request = await proofRequestFromChains(rpcOf(chain), {
        claimedBlock: claimed,
        agreedBlock: agreed,
        intermediateBlockInterval: 5,
      });
      const response = (await (
        await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prover_prove', params: [proofRequestToWire(request)] }),
        })
      ).json()) as { result?: unknown; error?: { message: string } };
      expect(response.error).toBeUndefined();
      // The host collected derivation's L1: from before the agreed block's origin to the L1 head, blobs too.
      const report = await hosts.at(-1)!.waitFor((line) => line.msg === 'derivation preimages');
      expect(report.l1Blocks).toBeGreaterThan(
        Number(chain.l2Blocks.at(-1)!.l1Origin.number) - Number(chain.l2Blocks[agreed - 1]!.l1Origin.number),
      );
      if (which === 'blob')
        expect(report.blobs).toBeGreaterThanOrEqual(chain.batches.filter((batch) => batch.l2Blocks[1] > BigInt(agreed)).length);
      else expect(report.blobs).toBe(0);
      const proving = await hosts.at(-1)!.waitFor((line) => line.msg === 'proving');
      expect((proving.bytesByType as Record<string, number>).blob ?? 0).toBe(which === 'blob' ? Number(report.blobs) * (131_072 + 48) : 0);
      const result = proofResultFromWire(response.result);
      if (result.type !== 'tee') throw new Error('expected a TEE proof');
      expect(result.proposals.map((p) => p.l2BlockNumber)).toEqual(Array.from({ length: claimed - agreed }, (_, i) => agreed + 1 + i));
      // Every signed output root is the one op-geth serves for that block.
      for (const proposal of result.proposals) {
        const served = await proofRequestFromChains(rpcOf(chain), { claimedBlock: proposal.l2BlockNumber });
        expect(proposal.outputRoot).toBe(served.claimedL2OutputRoot);
      }
      expect(result.aggregateProposal.outputRoot).toBe(request.claimedL2OutputRoot);
      const last = result.proposals.at(-1)!;
      const digest = journalDigest({
        proposer: request.proposer,
        l1OriginHash: request.l1Head,
        prevOutputRoot: last.prevOutputRoot,
        startingL2Block: last.l2BlockNumber - 1,
        outputRoot: last.outputRoot,
        endingL2Block: last.l2BlockNumber,
        intermediateRoots: [],
        configHash: last.configHash,
        teeImageHash: `0x${'00'.repeat(32)}`,
        scheduleId: scheduleIdOfChain(chain.rollupConfig, last.l2BlockNumber),
      });
      expect((await recoverSigner(digest, last.signature)).toLowerCase()).toBe(enclave.signer.toLowerCase());
    }, 180_000);
  }

  it('the commands as a prover runs them: proof-request, prover-bridge, prove, verify-proposal', async () => {
    const chain = blobChain;
    const url = hostUrls.get(chain)!;
    const data = join(dir, 'data');
    const requestPath = join(dir, 'request.json');
    const replyPath = join(dir, 'reply.json');
    const made = await runFlashlog([
      'proof-request',
      '--l1-rpc',
      chain.l1RpcUrl,
      '--l2-rpc',
      chain.l2RpcUrl,
      '--block-number',
      '20',
      '--agreed-block-number',
      '10',
    ]);
    expect(made.code, made.stderr).toBe(0);
    writeFileSync(requestPath, made.stdout);
    const bridge = spawnFlashlog(['prover-bridge', '--prover-url', url, '--data-dir', data, '--no-metrics']);
    hosts.push(bridge);
    await bridge.waitFor((line) => line.msg === 'prover bridge consuming', 60_000);
    const proved = await runFlashlog(['prove', requestPath, '--data-dir', data, '--timeout', '120', '--log-level', 'warn']);
    expect(proved.code, proved.stderr).toBe(0);
    writeFileSync(replyPath, proved.stdout);
    const verified = await runFlashlog(['verify-proposal', replyPath, requestPath]);
    expect(verified.code, verified.stderr).toBe(0);
    const kinds = verified.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds).toContain('aggregate');
    expect(kinds.filter((kind) => kind !== 'aggregate').length).toBe(10);
  }, 180_000);
});

/** The honest preimages of a range of the blob chain, as the host collects them for the derive check. */
async function honestPreimages(
  chain: DerivedChain,
  agreed: number,
  claimed: number,
): Promise<{ request: ProofRequest; preimages: Preimage[] }> {
  const request = await proofRequestFromChains(rpcOf(chain), {
    claimedBlock: claimed,
    agreedBlock: agreed,
    intermediateBlockInterval: claimed - agreed,
  });
  const preimages = await collectWitness(request, {
    ...rpcOf(chain),
    l2ChainId: chain.l2ChainId,
    check: 'derive',
    rollupConfigJson: JSON.stringify(chain.rollupConfig),
    derivation: {
      beaconUrl: chain.beaconUrl,
      batchInbox: chain.addresses.batchInbox,
      channelTimeout: 50,
      genesisL1Number: BigInt(chain.rollupConfig.genesis.l1.number),
    },
  });
  return { request, preimages };
}

/** `preimages` with the claimed block's header replaced by one holding `transactions` instead. */
async function withSuppliedBlock(
  preimages: readonly Preimage[],
  claimedHash: Hex,
  transactions: readonly Hex[],
  fields: { stateRoot?: Hex } = {},
): Promise<Preimage[]> {
  const honestKey = digestKey('keccak256', claimedHash);
  const honest = preimages.find((p) => p.key.type === 'keccak256' && p.key.data.every((b, i) => b === honestKey.data[i]))!;
  const header = decodeHeaderRlp(`0x${Buffer.from(honest.value).toString('hex')}` as Hex);
  const forged = encodeHeader({ ...header, transactionsRoot: await orderedTrieRoot(transactions), ...fields });
  const extra: Hex[] = [forged, ...(await orderedTrieNodes(transactions))];
  return [
    ...preimages.filter((p) => p !== honest),
    ...extra.map((value) => ({ key: digestKey('keccak256', keccak256(value)), value: Buffer.from(value.slice(2), 'hex') })),
  ];
}

describe('the derive check refuses a supplied chain that is not the derived one', () => {
  // The blocks re-execute on two threads here; the in-thread core must sign the same.
  const pool = createReexecPool({ workers: 2 });
  afterAll(() => pool.close());
  const core = createEnclaveCore({ privateKey: enclaveKey, check: 'derive', pool });
  const inThread = createEnclaveCore({ privateKey: enclaveKey, check: 'derive' });
  const prove = async (preimages: Preimage[]) => core.handle({ type: 'prove', preimages });

  it('signs the honest range, and refuses each forged block naming it and why', async () => {
    const chain = blobChain;
    // A block with user deposits and one with at least two user transactions, each claimed after an agreed channel end.
    const withDeposits = chain.l2Blocks.find((block) => block.userDeposits > 0 && block.number > 5n)!;
    const withTwo = chain.l2Blocks.find((block) => block.userTransactions.length >= 2 && block.number > 5n)!;
    expect(withDeposits).toBeDefined();
    expect(withTwo).toBeDefined();
    const agreedBefore = (n: bigint) => Number(((n - 1n) / 5n) * 5n);

    const honest = await honestPreimages(chain, agreedBefore(withTwo.number), Number(withTwo.number));
    const signed = await prove(honest.preimages);
    expect(signed.type).toBe('prove');
    expect(await inThread.handle({ type: 'prove', preimages: honest.preimages })).toEqual(signed);

    // The derived transactions and fields, but a stateRoot the execution does not reach: derivation
    // takes the supplied hash, the queued execution refuses it.
    const wrongRoot = await withSuppliedBlock(honest.preimages, withTwo.hash, withTwo.transactions, { stateRoot: keccak256('0x01') });
    const refusedRoot = await prove(wrongRoot);
    expect(refusedRoot).toEqual({
      type: 'error',
      message: expect.stringMatching(
        new RegExp(
          `^L2 block ${withTwo.number}: re-execution gives block hash 0x[0-9a-f]{64}, the chain's is 0x[0-9a-f]{64} \\(differing: stateRoot\\)$`,
        ),
      ),
    });
    expect(await inThread.handle({ type: 'prove', preimages: wrongRoot })).toEqual(refusedRoot);

    const user = privateKeyToAccount(derivedChainKeys.user);
    const extraTx = await user.signTransaction({
      chainId: chain.l2ChainId,
      type: 'eip1559',
      nonce: 9_999,
      to: user.address,
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
    });
    const txs = withTwo.transactions;
    const userStart = txs.length - withTwo.userTransactions.length;
    const cases: [string, readonly Hex[], RegExp][] = [
      [
        'a transaction added',
        [...txs, extraTx],
        new RegExp(
          `L2 block ${withTwo.number}: transaction ${txs.length} is transaction 0x[0-9a-f]{64} in the supplied block, nothing in the block derived from L1`,
        ),
      ],
      [
        'a transaction dropped',
        txs.slice(0, -1),
        new RegExp(`L2 block ${withTwo.number}: transaction ${txs.length - 1} is nothing in the supplied block`),
      ],
      [
        'two transactions reordered',
        [...txs.slice(0, userStart), txs[userStart + 1]!, txs[userStart]!, ...txs.slice(userStart + 2)],
        new RegExp(`L2 block ${withTwo.number}: transaction ${userStart} is transaction`),
      ],
    ];
    for (const [what, supplied, refusal] of cases) {
      const answer = await prove(await withSuppliedBlock(honest.preimages, withTwo.hash, supplied));
      expect(answer, what).toMatchObject({ type: 'error' });
      expect((answer as { message: string }).message, what).toMatch(refusal);
    }

    // A forged deposit: the block's first user deposit minting ten times as much.
    const forgedRange = await honestPreimages(chain, agreedBefore(withDeposits.number), Number(withDeposits.number));
    const depositTxs = [...withDeposits.transactions];
    const original = parseTransaction(depositTxs[1]!) as {
      sourceHash: Hex;
      from: Hex;
      to: Hex;
      mint?: bigint;
      value: bigint;
      gas: bigint;
      data?: Hex;
      isSystemTx?: boolean;
    };
    depositTxs[1] = encodeDeposit({
      sourceHash: original.sourceHash,
      from: original.from,
      to: original.to ?? null,
      mint: (original.mint ?? 0n) * 10n + 1n,
      value: original.value,
      gas: original.gas,
      isSystemTx: false,
      data: original.data ?? '0x',
    });
    const answer = await prove(await withSuppliedBlock(forgedRange.preimages, withDeposits.hash, depositTxs));
    expect(answer).toMatchObject({ type: 'error' });
    expect((answer as { message: string }).message).toMatch(
      new RegExp(`L2 block ${withDeposits.number}: transaction 1 is deposit 0x[0-9a-f]{64} in the supplied block, deposit 0x`),
    );
  }, 180_000);

  it('a batch from a key that is not the batcher, on the same L1, changes nothing: the block it describes is refused, the honest one proves', async () => {
    const chain = blobChain;
    const target = chain.l2Blocks.find((block) => block.userTransactions.length >= 1 && block.number > 10n)!;
    const user = privateKeyToAccount(derivedChainKeys.user);
    const extraTx = await user.signTransaction({
      chainId: chain.l2ChainId,
      type: 'eip1559',
      nonce: 9_998,
      to: user.address,
      value: 2n,
      gas: 21_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
    });
    // The depositor (funded on L1, not the batcher) posts a singular batch for the target block with one more transaction.
    const parent = chain.l2Blocks[Number(target.number) - 2]!;
    const forgedBatch = encodeChannelOut(
      [
        {
          parentHash: parent.hash,
          timestamp: target.timestamp,
          epochNumber: target.l1Origin.number,
          epochHash: target.l1Origin.hash,
          sequenceNumber: target.sequenceNumber,
          transactions: [...target.userTransactions, extraTx].map((tx) => hexToBytes(tx)),
        },
      ],
      {
        kind: 'singular',
        compression: 'zlib',
        channelId: keccak256('0x5a').slice(0, 34) as Hex,
        target: 'calldata',
        chain: spanChainOf(chain),
      },
    );
    const stranger = privateKeyToAccount(derivedChainKeys.depositor);
    const head = await chain.l1.head();
    const posted = await chain.l1.signCall(stranger, await chain.l1.nonce(stranger.address), {
      to: chain.addresses.batchInbox,
      data: bytesToHex(forgedBatch.data[0]!),
    });
    await chain.l1.mine(head.timestamp + 12n, [posted]);
    const agreed = Number(((target.number - 1n) / 5n) * 5n);
    const honest = await honestPreimages(chain, agreed, Number(target.number));
    const answer = await prove(await withSuppliedBlock(honest.preimages, target.hash, [...target.transactions, extraTx]));
    expect(answer).toMatchObject({ type: 'error' });
    expect((answer as { message: string }).message).toMatch(
      new RegExp(
        `L2 block ${target.number}: transaction ${target.transactions.length} is transaction 0x[0-9a-f]{64} in the supplied block, nothing in the block derived`,
      ),
    );
    // The honest block, with the stranger's batch on the same L1, still proves.
    expect((await prove(honest.preimages)).type).toBe('prove');
  }, 120_000);

  it('an agreed block inside a span batch proves with the blocks before it, and is refused without them', async () => {
    const chain = blobChain;
    // Inside the first channel's span batch (blocks 1-5): its parent check reaches the genesis block.
    const first = await honestPreimages(chain, 3, 5);
    expect(await prove(first.preimages)).toMatchObject({ type: 'prove' });
    const agreed = 7;
    const { preimages } = await honestPreimages(chain, agreed, 9);
    expect((await prove(preimages)).type).toBe('prove');
    const before = new Set(chain.l2Blocks.filter((block) => block.number < BigInt(agreed)).map((block) => block.hash.toLowerCase()));
    const without = preimages.filter((p) => p.key.type !== 'keccak256' || !before.has(keccak256(p.value).toLowerCase()));
    expect(without.length).toBe(preimages.length - before.size);
    const answer = await prove(without);
    expect(answer).toMatchObject({ type: 'error' });
    expect((answer as { message: string }).message).toMatch(/derivation from L1: L1 up to 0x[0-9a-f]{64} derives L2 blocks up to 7, not 9/);
  }, 120_000);

  it('an L1 head on an abandoned fork is refused; the same range on the fork that stayed proves', async () => {
    const chain = blobChain;
    const edr = chain.l1.edr;
    const snapshot = (await edr.request('evm_snapshot', [])) as Hex;
    const head = await chain.l1.head();
    await chain.l1.mine(head.timestamp + 12n);
    const abandoned = await honestPreimages(chain, 15, 18);
    expect(await edr.request('evm_revert', [snapshot])).toBe(true);
    const kept = await chain.l1.mine(head.timestamp + 13n);
    expect(kept.hash).not.toBe(abandoned.request.l1Head);
    const stale = { ...abandoned.request };
    await expect(
      collectWitness(stale, {
        ...rpcOf(chain),
        l2ChainId: chain.l2ChainId,
        check: 'derive',
        rollupConfigJson: JSON.stringify(chain.rollupConfig),
        derivation: { beaconUrl: chain.beaconUrl, batchInbox: chain.addresses.batchInbox, channelTimeout: 50, genesisL1Number: 1n },
      }),
    ).rejects.toThrow(new RegExp(`L1 head ${stale.l1Head} not found`));
    const fresh = await honestPreimages(chain, 15, 18);
    expect(fresh.request.l1Head).toBe(kept.hash);
    expect((await prove(fresh.preimages)).type).toBe('prove');
  }, 120_000);
});

const spanChainOf = (chain: DerivedChain) => ({
  l2GenesisTime: BigInt(chain.rollupConfig.genesis.l2_time),
  blockTime: BigInt(chain.rollupConfig.block_time),
  chainId: BigInt(chain.l2ChainId),
});
