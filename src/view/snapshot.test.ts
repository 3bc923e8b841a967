import { describe, expect, it } from 'vitest';
import type { LogRecord, ProduceRecord } from '../log/port.ts';
import { blockBuilder, chainRecord, signedTransfers, zeroHash } from '../../test/helpers/view-records.ts';
import { decodeSnapshot, encodeSnapshot, snapshotVersion, valueDigest } from './snapshot.ts';
import { apply, findPendingTransaction, initialViewState, pendingAccount, type ViewState } from './state.ts';

const offsets = new Map<string, bigint>();
const asLog = (records: ProduceRecord[]): LogRecord[] =>
  records.map((record) => {
    const offset = offsets.get(record.topic) ?? 0n;
    offsets.set(record.topic, offset + 1n);
    return { ...record, partition: 0, offset, timestamp: 0 };
  });
const applyAll = (state: ViewState, records: LogRecord[]): ViewState =>
  records.reduce((s, record) => apply(s, { type: 'record', record }), state);
const checksOf = (state: ViewState) =>
  Object.entries(state.offsets).map(([key, next]) => ({
    topic: key.slice(0, key.lastIndexOf('/')),
    partition: 0,
    offset: next - 1n,
    sha256: 'x',
  }));

async function someState(): Promise<ViewState> {
  const txs = await signedTransfers(4);
  const first = blockBuilder(20n);
  const second = blockBuilder(21n);
  let state = applyAll(
    initialViewState(),
    asLog(
      first.flashblock([txs[0]!], {
        stateDiff: { '0x00000000000000000000000000000000000000aa': { balance: '0x7', storage: { [zeroHash]: `0x${'0'.repeat(63)}1` } } },
      }),
    ),
  );
  state = applyAll(state, asLog(first.flashblock([txs[1]!])));
  state = applyAll(state, asLog(second.flashblock([txs[2]!, txs[3]!])));
  return applyAll(state, asLog([chainRecord({ type: 'sealed', blockNumber: '0x13', blockHash: zeroHash, transactions: [] })]));
}

describe('view snapshot', () => {
  it('gives back the same state, and the state goes on the same way after it', async () => {
    const state = await someState();
    const decoded = decodeSnapshot(encodeSnapshot({ logIdentity: 'embedded:test', state, checks: checksOf(state) }));
    if (!decoded.ok) throw new Error(decoded.reason);
    const restored = decoded.snapshot.state;
    expect(restored.blocks.map((block) => block.number)).toEqual([20n, 21n]);
    expect(restored.change).toEqual({ type: 'none' });
    expect({ ...restored, change: state.change }).toEqual(state);
    expect(pendingAccount(restored, '0x00000000000000000000000000000000000000AA')).toEqual(
      pendingAccount(state, '0x00000000000000000000000000000000000000aa'),
    );
    expect(findPendingTransaction(restored, state.blocks[1]!.transactions[1]!.hash)?.position).toBe(1);
    const [txs] = [await signedTransfers(1, 9)];
    const more = asLog(blockBuilder(22n).flashblock(txs));
    expect(applyAll(restored, more)).toEqual(applyAll(state, more));
  });

  it('refuses a corrupt, truncated, other-version or incomplete snapshot with a reason', async () => {
    const state = await someState();
    const text = encodeSnapshot({ logIdentity: 'embedded:test', state, checks: checksOf(state) });
    expect(decodeSnapshot(text.slice(0, -20))).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    const envelope = JSON.parse(text) as { version: number; body: string; digest: string };
    expect(decodeSnapshot(JSON.stringify({ ...envelope, version: snapshotVersion + 1 }))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('version'),
    });
    expect(
      decodeSnapshot(JSON.stringify({ ...envelope, body: envelope.body.replace('"canonical":"19"', '"canonical":"18"') })),
    ).toMatchObject({ ok: false, reason: expect.stringContaining('digest') });
    const noChecks = encodeSnapshot({ logIdentity: 'embedded:test', state, checks: [] });
    expect(decodeSnapshot(noChecks)).toMatchObject({ ok: false, reason: expect.stringContaining('checks') });
  });

  it('carries the chain of its log; a snapshot written before it names none', async () => {
    const state = await someState();
    const chain = { chainId: 8453n, genesisHash: `0x${'ab'.repeat(32)}` as const };
    const decoded = decodeSnapshot(encodeSnapshot({ logIdentity: 'embedded:test', chain, state, checks: checksOf(state) }));
    expect(decoded).toMatchObject({ ok: true, snapshot: { chain } });
    // An older snapshot's body has no `chain`: read as null, not refused.
    const text = encodeSnapshot({ logIdentity: 'embedded:test', state, checks: checksOf(state) });
    const envelope = JSON.parse(text) as { body: string };
    const { chain: _dropped, ...olderBody } = JSON.parse(envelope.body) as Record<string, unknown>;
    const olderText = JSON.stringify(olderBody);
    const older = decodeSnapshot(JSON.stringify({ ...envelope, body: olderText, digest: valueDigest(olderText) }));
    expect(older).toMatchObject({ ok: true, snapshot: { chain: null } });
    const badText = envelope.body.replace('"chain":null', '"chain":{"chainId":"8453","genesisHash":"0x12"}');
    expect(decodeSnapshot(JSON.stringify({ ...envelope, body: badText, digest: valueDigest(badText) }))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('chain'),
    });
  });
});
