import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { pino } from 'pino';
import { keccak256, numberToHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runChecker } from '../../src/checker/checker.ts';
import type { Answer } from '../../src/checker/compare.ts';
import { httpEndpoint, type Endpoint } from '../../src/checker/endpoint.ts';
import { createTally } from '../../src/checker/tally.ts';
import { decodePostExecTx } from '../../src/op/post-exec.ts';
import { createMetadataExecutor } from '../../src/execute/metadata.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { createMetricsRegistry } from '../../src/obs/metrics.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createIngest } from '../../streams/ingest.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { metricValue, tempDir, testContext } from '../helpers/context.ts';
import { prepareLagoonStandIn, type StandInChain } from '../helpers/lagoon-stand-in-chain.ts';
import { startLagoonStandIn, type LagoonStandIn } from '../helpers/lagoon-stand-in.ts';

/**
 * The gateway checker holds a Lagoon subblocks stream. No client here runs Lagoon as a live chain,
 * so a node serving the chain flashlog's engine built, and the subblocks feed of that chain, stand
 * in for one (test/helpers/lagoon-stand-in.ts; docs/lagoon.md § The stand-in chain): 14 blocks,
 * refunds from block 4, each block in three subblocks, the middle one with a provisional
 * post-exec transaction (each refund 1 gas smaller), the last with the block's own. flashlog runs as
 * `run --ws <feed> --rpc <node> --executor metadata` does (in process), and the checker holds its
 * pending answers against the node's sealed blocks: 0 mismatches, with `0x7d` transactions and
 * refunded receipts among what was compared, and every provisional version withdrawn.
 */
const states = vi.hoisted(() => [] as unknown[]);
vi.mock('../../src/evm/op/witness-state.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/evm/op/witness-state.ts')>();
  return {
    ...original,
    createWitnessState: (...args: Parameters<typeof original.createWitnessState>) => {
      const state = original.createWitnessState(...args);
      states.push(state);
      return state;
    },
  };
});

const BLOCKS = 14;
const BLOCK_MS = 1500;
let chain: StandInChain;
let standIn: LagoonStandIn;
let serve: Serve;
const cleanup: (() => Promise<void> | void)[] = [];
const ctx = testContext({ port: 0, rpcTimeoutMs: 5000, headPollMs: 200, canonicalPollMs: 100 });

beforeAll(async () => {
  chain = await prepareLagoonStandIn({
    blocks: BLOCKS,
    subblocks: 3,
    zeroedRoots: true,
    stateAfter: () => states.at(-1) as MerkleStateManager,
  });
  standIn = await startLagoonStandIn(chain, { blockMs: BLOCK_MS });
  cleanup.push(() => standIn.close());
  const dir = tempDir();
  const log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const executor = createMetadataExecutor({ metrics: ctx.metrics, logger: ctx.logger });
  const ingestDone = createIngest(ctx, { log, endpoints: { source: 'flashblocks', feedUrls: [standIn.feedUrl] }, executor }).run();
  serve = await createServe(ctx, { log, rpcUrl: standIn.rpcUrl });
  cleanup.push(async () => {
    await serve.close();
    await ctx.shutdown.run();
    await ingestDone.catch(() => undefined);
    await log.close();
    dir.remove();
  });
}, 120_000);

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** An endpoint that keeps what it was asked and answered. */
function recording(endpoint: Endpoint, calls: { method: string; params: readonly unknown[]; answer: Answer }[]): Endpoint {
  return {
    url: endpoint.url,
    async call(method, params) {
      const answer = await endpoint.call(method, params);
      calls.push({ method, params, answer });
      return answer;
    },
  };
}

describe('check-gateway on a Lagoon subblocks stream (a stand-in node and feed of an engine-built chain)', () => {
  it("every pending answer, 0x7d transactions and opGasRefund included, is the node's once sealed", async () => {
    const nodeCalls: { method: string; params: readonly unknown[]; answer: Answer }[] = [];
    const tally = createTally(createMetricsRegistry({ defaults: false }));
    const compared = new Set<string>();
    const addComparison = tally.addComparison.bind(tally);
    tally.addComparison = (block, ...rest) => {
      compared.add(block);
      addComparison(block, ...rest);
    };
    const gatewayCalls: { method: string; params: readonly unknown[]; answer: Answer }[] = [];
    standIn.start();
    const summary = await runChecker({
      gateway: recording(httpEndpoint(serve.gateway.url, 5000), gatewayCalls),
      node: recording(httpEndpoint(standIn.rpcUrl, 5000), nodeCalls),
      logger: pino({ level: 'silent' }),
      tally,
      signal: new AbortController().signal,
      durationMs: BLOCKS * BLOCK_MS,
      pollMs: 50,
      graceMs: 1000,
    });
    console.log('check-gateway on the Lagoon stand-in:', JSON.stringify(summary, null, 1));
    expect(summary.mismatchesByField).toEqual({});
    expect(summary.mismatches).toBe(0);
    expect(summary.blocks).toBeGreaterThanOrEqual(BLOCKS - 4);
    expect(summary.versionsBeingBuilt).toBeGreaterThan(0);

    // The final post-exec transactions and the refunded transactions the checker compared: asked
    // of the node by hash only when judging a version of their block the node sealed.
    const comparedByHash = new Set(
      nodeCalls.filter((call) => call.method === 'eth_getTransactionByHash').map((call) => String(call.params[0]).toLowerCase()),
    );
    const refunded = chain.blocks.filter((block) => block.refunds.length > 0);
    const postExecHashes = refunded.map((block) => String((block.full.transactions as { hash: string }[]).at(-1)!.hash).toLowerCase());
    const comparedPostExec = postExecHashes.filter((hash) => comparedByHash.has(hash));
    expect(comparedPostExec.length).toBeGreaterThanOrEqual(refunded.length - 4);
    // Whole versions of refunded blocks compared (the checker names a version "N with K txs"): their
    // eth_getBlockReceipts, where the node's receipts carry opGasRefund, a key the gateway must have.
    const wholeRefunded = refunded.filter((block) =>
      compared.has(`${block.number} with ${(block.full.transactions as unknown[]).length} txs`),
    );
    expect(wholeRefunded.length).toBeGreaterThanOrEqual(refunded.length - 4);
    // And the gateway's last pending receipts of those blocks gave each refunded transaction the
    // final refund (an earlier answer may hold the middle subblock's provisional one).
    for (const block of wholeRefunded) {
      const served = gatewayCalls.findLast(
        (call) =>
          call.method === 'eth_getBlockReceipts' &&
          'result' in call.answer &&
          Array.isArray(call.answer.result) &&
          call.answer.result.length === (block.full.transactions as unknown[]).length - 1 &&
          (call.answer.result[0] as { blockNumber: string }).blockNumber === numberToHex(block.number),
      );
      const receipts = (served?.answer as { result: { opGasRefund?: string }[] } | undefined)?.result;
      expect(receipts, `pending receipts of block ${block.number}`).toBeDefined();
      expect(block.refunds.map(([index]) => receipts![index]!.opGasRefund)).toEqual(block.refunds.map(([, refund]) => numberToHex(refund)));
    }

    // Only the last subblock's post-exec transaction wins: the provisional ones were served while
    // pending, and were withdrawn (a version holding one is counted replaced, not a mismatch).
    const provisional = new Set(
      chain.blocks.flatMap((block) =>
        block.subblocks
          .slice(0, -1)
          .map((subblock) => (subblock.diff as { post_exec_tx?: Hex }).post_exec_tx)
          .filter(
            (raw): raw is Hex =>
              raw !== undefined && keccak256(raw) !== keccak256((block.subblocks.at(-1)!.diff as { post_exec_tx: Hex }).post_exec_tx),
          )
          .map((raw) => keccak256(raw)),
      ),
    );
    const servedProvisional = gatewayCalls.filter(
      (call) =>
        call.method === 'eth_getBlockByNumber' &&
        'result' in call.answer &&
        ((call.answer.result as { transactions?: (string | { hash: string })[] } | null)?.transactions ?? []).some((tx) =>
          provisional.has((typeof tx === 'string' ? tx : tx.hash).toLowerCase() as Hex),
        ),
    );
    expect(servedProvisional.length).toBeGreaterThan(0);
    expect(summary.replaced).toBeGreaterThan(0);
    for (const hash of provisional) {
      const answer = await httpEndpoint(serve.gateway.url, 5000).call('eth_getTransactionByHash', [hash]);
      expect(answer).toEqual({ result: null });
    }
    // The provisional payloads were smaller than the final ones.
    const block4 = chain.blocks[3]!;
    const middle = decodePostExecTx((block4.subblocks[1]!.diff as { post_exec_tx: Hex }).post_exec_tx);
    expect(middle.gasRefundEntries[0]!.gasRefund).toBe(block4.refunds[0]![1] - 1n);
    expect(await metricValue(ctx, 'flashlog_execution_errors_total')).toBe(0);
    // The middle subblocks' provisional refunds: their gas_used disagrees with the final receipts, and is counted.
    expect(await metricValue(ctx, 'flashlog_executor_mismatches_total', { field: 'gas_used' })).toBeGreaterThan(0);
  }, 120_000);
});
