import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';

/**
 * The checked-in JSON Schemas (schemas/, what consumers in other languages validate with) know the
 * millisecond fields of Base since Denim: `header.timestampMs` (and the node's header fields) on
 * flashlog.blocks, `blockTimestampMs` on every log. Held with a JSON Schema validator, not zod.
 */
const schemaOf = (topic: string) => JSON.parse(readFileSync(new URL(`../../schemas/${topic}.schema.json`, import.meta.url), 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
const blocks = ajv.compile(schemaOf('flashlog.blocks'));
const logs = ajv.compile(schemaOf('flashlog.logs'));

describe('the JSON Schemas of the log', () => {
  it('flashlog.blocks declares the header fields of a 200 ms block: a wrong type in any of them is refused', async () => {
    const builder = blockBuilder(5n);
    const [record] = builder.flashblock(await signedTransfers(1));
    const value = JSON.parse(String(record!.value));
    const denim = {
      hash: `0x${'ab'.repeat(32)}`,
      timestampMs: '0x19b4d8e2f31',
      transactionsRoot: `0x${'cd'.repeat(32)}`,
      size: '0x2a1',
      excessBlobGas: '0x0',
      requestsHash: `0x${'ef'.repeat(32)}`,
    };
    expect(blocks({ ...value, header: { ...value.header, ...denim } }), JSON.stringify(blocks.errors)).toBe(true);
    for (const field of Object.keys(denim)) {
      expect(blocks({ ...value, header: { ...value.header, ...denim, [field]: 1234 } }), field).toBe(false);
      expect(JSON.stringify(blocks.errors)).toContain(`/header/${field}`);
    }
  });

  it('flashlog.logs and the logs inside flashlog.blocks declare blockTimestampMs', async () => {
    const builder = blockBuilder(6n);
    const records = builder.flashblock(await signedTransfers(1));
    const log = JSON.parse(String(records[1]!.value));
    expect(logs({ ...log, blockTimestampMs: '0x19b4d8e2f31' }), JSON.stringify(logs.errors)).toBe(true);
    expect(logs({ ...log, blockTimestampMs: 1_766_000_000_000 })).toBe(false);
    const block = JSON.parse(String(records[0]!.value));
    block.receipts[0].logs[0].blockTimestampMs = 'soon';
    expect(blocks(block)).toBe(false);
    expect(JSON.stringify(blocks.errors)).toContain('blockTimestampMs');
  });
});
