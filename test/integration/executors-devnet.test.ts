import { afterEach, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { topics } from '../../src/records/topics.ts';
import { blockRecordSchema, type BlockRecord } from '../../src/records/blocks.ts';
import { chainRecordSchema } from '../../src/records/chain.ts';
import { eventually, metricValue, testContext } from '../helpers/context.ts';
import { readTopic, startFlashlog, type FlashlogUnderTest } from '../helpers/execution-harness.ts';

/**
 * The other two adapters on the devnet with load: `metadata` (the devnet's --metadata-receipts,
 * era B) and `node` (receipts asked from the devnet's JSON-RPC by hash, retried until visible: the
 * devnet only answers once sealed). Both must give the canonical receipts, on the fields they know.
 */
type Json = Record<string, unknown>;
const ZERO = `0x${'0'.repeat(64)}`;

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function compareSealed(
  devnet: Devnet,
  flashlog: FlashlogUnderTest,
  fields: (receipt: Json) => readonly string[],
  kind: string,
): Promise<number> {
  const blocks = (await readTopic(flashlog.log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
  const byNumber = new Map<bigint, BlockRecord[]>();
  for (const block of blocks) {
    const number = BigInt(block.blockNumber);
    if (!byNumber.has(number) && block.firstNew !== 0) continue;
    byNumber.set(number, [...(byNumber.get(number) ?? []), block]);
  }
  // Blocks flashlog reconciled as sealed: pre-confirmed in full, from index 0 to the last flashblock.
  const sealed = new Set(
    (await readTopic(flashlog.log, topics.chain))
      .map((record) => chainRecordSchema.parse(JSON.parse(record.value)))
      .filter((record) => record.type === 'sealed')
      .map((record) => BigInt(record.blockNumber)),
  );
  let compared = 0;
  for (const [number, records] of byNumber) {
    if (!sealed.has(number)) continue;
    const canonical = await rpc<Json[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [`0x${number.toString(16)}`]);
    const ours = records.flatMap((record) => {
      expect(record.executor, `block ${number} index ${record.index}`).toBe(kind);
      return record.receipts ?? [];
    }) as unknown as Json[];
    expect(ours.map((receipt) => receipt.transactionHash)).toEqual(canonical.map((receipt) => receipt.transactionHash));
    canonical.forEach((receipt, i) => {
      const mine = ours[i]!;
      expect(mine.blockHash).toBe(ZERO);
      for (const field of fields(receipt)) {
        if (field === 'logs') {
          const strip = (logs: Json[]) => logs.map(({ blockHash: _ignored, ...rest }) => rest);
          expect({ field, tx: receipt.transactionHash, value: strip(mine.logs as Json[]) }).toEqual({
            field,
            tx: receipt.transactionHash,
            value: strip(receipt.logs as Json[]),
          });
        } else {
          expect({ field, tx: receipt.transactionHash, value: mine[field] }).toEqual({
            field,
            tx: receipt.transactionHash,
            value: receipt[field],
          });
        }
      }
      compared++;
    });
  }
  return compared;
}

describe('metadata and node executors on the devnet', () => {
  let devnet: Devnet | undefined;
  let flashlog: FlashlogUnderTest | undefined;
  afterEach(async () => {
    await flashlog?.stop().catch(() => undefined);
    await devnet?.close();
    flashlog = undefined;
    devnet = undefined;
  });

  it('metadata: era B receipts completed into the canonical receipts (no state diff)', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 250, load: 30, metadataReceipts: true, rpcPort: 0, wsPort: 0 });
    const ctx = testContext({ rpc: devnet.rpcUrl, executor: 'auto', canonicalPollMs: 100 });
    flashlog = await startFlashlog(ctx, { wsUrl: devnet.wsUrl, rpcUrl: devnet.rpcUrl });
    await eventually(
      async () => ((await metricValue(ctx, 'flashlog_reconcile_total', { result: 'sealed' })) >= 6 ? true : undefined),
      40_000,
      '6 sealed blocks',
    );
    await flashlog.stop();
    expect(await metricValue(ctx, 'flashlog_execution_errors_total')).toBe(0);
    // Every flashblock's metadata receipts give its receipts_root and gas_used (src/execute/receipts-root.ts).
    expect(await metricValue(ctx, 'flashlog_executor_checks_total', { result: 'match' })).toBeGreaterThan(20);
    expect(await metricValue(ctx, 'flashlog_executor_checks_total', { result: 'mismatch' })).toBe(0);
    const compared = await compareSealed(
      devnet,
      flashlog,
      (receipt) => [
        'transactionIndex',
        'blockNumber',
        'from',
        'to',
        'cumulativeGasUsed',
        'gasUsed',
        'effectiveGasPrice',
        'logs',
        'logsBloom',
        'status',
        'type',
        ...(receipt.type === '0x7e' ? ['depositNonce', 'depositReceiptVersion'] : ['contractAddress']),
      ],
      'metadata',
    );
    expect(compared).toBeGreaterThan(60);
  }, 90_000);

  it('node: receipts asked by hash from the upstream, retried until visible, equal the canonical ones', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 250, load: 30, rpcPort: 0, wsPort: 0 });
    const ctx = testContext({ rpc: devnet.rpcUrl, executor: 'node', canonicalPollMs: 100 });
    flashlog = await startFlashlog(ctx, { wsUrl: devnet.wsUrl, rpcUrl: devnet.rpcUrl });
    await eventually(
      async () => ((await metricValue(ctx, 'flashlog_reconcile_total', { result: 'sealed' })) >= 6 ? true : undefined),
      40_000,
      '6 sealed blocks',
    );
    await flashlog.stop();
    expect(await metricValue(ctx, 'flashlog_executor_node_retries_total')).toBeGreaterThan(0);
    const compared = await compareSealed(
      devnet,
      flashlog,
      (receipt) => Object.keys(receipt).filter((field) => field !== 'blockHash'),
      'node',
    );
    expect(compared).toBeGreaterThan(60);
  }, 90_000);
});
