import { describe, expect, it } from 'vitest';
import { blockRecordSchema, isBlockRecordValue } from './blocks.ts';
import { isLogRecordText, isLogRecordValue, logRecordSchema } from './logs.ts';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';

/** Every way of breaking one field: each leaf (and each object or array) replaced, nulled or removed. */
function* mutations(value: unknown, path: (string | number)[] = []): Generator<{ path: string; apply: (root: unknown) => unknown }> {
  if (typeof value !== 'object' || value === null) return;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    const at = [...path, Array.isArray(value) ? Number(key) : key];
    for (const replacement of ['0xzz', null, 7, -1, 1.5, '0x', true, [], {}, undefined]) {
      yield { path: `${at.join('.')} = ${JSON.stringify(replacement) ?? 'removed'}`, apply: (root) => set(root, at, replacement) };
    }
    yield* mutations(child, at);
  }
  // An extra key: the schemas keep unknown keys, except a transaction's strict {hash, raw}.
  yield { path: `${path.join('.')}.extra`, apply: (root) => set(root, [...path, 'extra'], '0x1') };
}

function set(root: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (replacement === undefined) delete node[last];
  else node[last] = replacement;
  return JSON.parse(JSON.stringify(copy));
}

describe('the fast record checks', () => {
  it('say yes to valid records and never yes where the schema says no, one broken field at a time', async () => {
    const block = blockBuilder(100n);
    const pool = await signedTransfers(3);
    block.flashblock(pool.slice(0, 1));
    const [blockRecord, ...logRecords] = block.flashblock(pool.slice(1, 3), {
      logsPerTx: 2,
      stateDiff: {
        '0x00000000000000000000000000000000000000aa': { balance: '0x1', storage: { [`0x${'1'.repeat(64)}`]: `0x${'2'.repeat(64)}` } },
      },
    });
    const blockValue: unknown = JSON.parse(blockRecord!.value);
    const logValue: unknown = JSON.parse(logRecords[0]!.value);
    expect(isBlockRecordValue(blockValue)).toBe(true);
    expect(isLogRecordValue(logValue)).toBe(true);
    expect(logRecords.every((record) => isLogRecordText(record.value))).toBe(true);

    let rejected = 0;
    for (const mutation of mutations(blockValue)) {
      const broken = mutation.apply(blockValue);
      if (!blockRecordSchema.safeParse(broken).success) {
        rejected++;
        expect(isBlockRecordValue(broken), mutation.path).toBe(false);
      }
    }
    for (const mutation of mutations(logValue)) {
      const broken = mutation.apply(logValue);
      if (!logRecordSchema.safeParse(broken).success) {
        rejected++;
        expect(isLogRecordValue(broken), mutation.path).toBe(false);
        expect(isLogRecordText(JSON.stringify(broken)), mutation.path).toBe(false);
      }
    }
    expect(rejected).toBeGreaterThan(500);
  });

  it("say no to objects the view keeps whose keys are not in the schema's output order, so the view serves the same text as through zod", async () => {
    const block = blockBuilder(9n);
    const [blockRecord] = block.flashblock(await signedTransfers(1), { logsPerTx: 1 });
    const value = JSON.parse(blockRecord!.value) as { receipts: { logs: Record<string, unknown>[] }[] };
    const { address, ...rest } = value.receipts[0]!.logs[0]!;
    value.receipts[0]!.logs[0] = { ...rest, address }; // a node's order, say: address last
    expect(blockRecordSchema.safeParse(value).success).toBe(true);
    expect(isBlockRecordValue(value)).toBe(false);
    const unknownFirst = JSON.parse(blockRecord!.value) as { header: Record<string, unknown> };
    unknownFirst.header = { hash: `0x${'3'.repeat(64)}`, ...unknownFirst.header };
    expect(isBlockRecordValue(unknownFirst)).toBe(false);
    const unknownLast = JSON.parse(blockRecord!.value) as { header: Record<string, unknown> };
    unknownLast.header = { ...unknownLast.header, hash: `0x${'3'.repeat(64)}` };
    expect(isBlockRecordValue(unknownLast)).toBe(true);
  });

  it('judge a log record from its text only in the layouts flashlog writes', async () => {
    const block = blockBuilder(7n);
    const [, logRecord] = block.flashblock(await signedTransfers(1), { logsPerTx: 1 });
    const value = JSON.parse(logRecord!.value) as Record<string, unknown>;
    const { v, index, ...log } = value;
    expect(isLogRecordText(JSON.stringify({ v, index, ...log }))).toBe(true);
    expect(isLogRecordText(JSON.stringify(value, null, 1))).toBe(false); // spaces: parsed instead
    expect(isLogRecordText(JSON.stringify({ ...value, index: 2 ** 60 }))).toBe(false); // not a safe integer
    expect(isLogRecordText(JSON.stringify({ ...value, extra: 1 }))).toBe(false);
  });
});
