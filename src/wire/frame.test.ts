import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../test/helpers/shared.ts';
import { decodeFrame } from './frame.ts';

const sepolia = JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/base-sepolia-33439826.json'), 'utf8')) as object[];
const brotli = (text: string) =>
  brotliCompressSync(Buffer.from(text), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 22 },
  });
const options = { maxBytes: 16 * 1024 * 1024 };

describe('decodeFrame', () => {
  it('decodes text, binary JSON (with leading whitespace) and brotli frames alike', () => {
    const text = JSON.stringify(sepolia[1]);
    for (const frame of [text, Buffer.from(`  \n${text}`), brotli(text)]) {
      const decoded = decodeFrame(frame, options);
      expect(decoded.ok).toBe(true);
      if (decoded.ok) expect(decoded.flashblock.index).toBe(1);
    }
    const compressed = decodeFrame(brotli(text), options);
    expect(compressed.ok && compressed.compressed).toBe(true);
  });

  it('keeps unknown fields and accepts base: null after index 0', () => {
    const message = { ...(sepolia[2] as Record<string, unknown>), base: null, extra_field: { kept: true } };
    const decoded = decodeFrame(JSON.stringify(message), options);
    expect(decoded.ok).toBe(true);
    if (decoded.ok) expect((decoded.flashblock as Record<string, unknown>).extra_field).toEqual({ kept: true });
  });

  it('names the reason of each failure', () => {
    expect(decodeFrame(Buffer.from([0xff, 0x00, 0x13, 0x37]), options)).toMatchObject({ ok: false, reason: 'brotli' });
    expect(decodeFrame('{"payload_id": ', options)).toMatchObject({ ok: false, reason: 'json' });
    expect(decodeFrame(JSON.stringify({ index: 0 }), options)).toMatchObject({ ok: false, reason: 'schema' });
    const noBase = { ...(sepolia[0] as Record<string, unknown>), base: undefined };
    expect(decodeFrame(JSON.stringify(noBase), options)).toMatchObject({
      ok: false,
      reason: 'schema',
      detail: expect.stringContaining('base'),
    });
    expect(decodeFrame('x'.repeat(100), { maxBytes: 10 })).toMatchObject({ ok: false, reason: 'oversized' });
  });

  it('stops a brotli bomb at the cap instead of inflating it', () => {
    const bomb = brotli(' '.repeat(64 * 1024 * 1024)); // 64 MiB of spaces in a few hundred bytes
    expect(bomb.byteLength).toBeLessThan(10_000);
    const before = process.memoryUsage().rss;
    expect(decodeFrame(bomb, { maxBytes: 1024 * 1024 })).toMatchObject({ ok: false, reason: 'oversized' });
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  });
});

describe('metadata eras', () => {
  const load = (name: string) => JSON.parse(readFileSync(sharedPath(`fixtures/flashblocks/${name}`), 'utf8')) as unknown;
  it('normalises era A externally tagged receipts to a type', () => {
    const messages = load('unichain-sepolia-35535698-with-receipts.json') as object[];
    const decoded = decodeFrame(JSON.stringify(messages[0]), options);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    const receipts = Object.values(decoded.flashblock.metadata.receipts ?? {});
    expect(receipts.map((receipt) => receipt.type).sort()).toEqual(['0x2', '0x7e']);
    const mainnet = decodeFrame(JSON.stringify(load('base-mainnet-37646058-index10.json')), options);
    expect(
      mainnet.ok &&
        Object.values(mainnet.flashblock.metadata.receipts ?? {})
          .map((receipt) => receipt.type)
          .sort(),
    ).toEqual(['0x0', '0x2']);
  });
  it('accepts era B type-tagged receipts and era C metadata without receipts', () => {
    const base = (load('base-sepolia-33439826.json') as Record<string, unknown>[])[1]!;
    const eraB = {
      ...base,
      metadata: {
        block_number: 33439826,
        new_account_balances: {},
        receipts: { [`0x${'1'.repeat(64)}`]: { cumulativeGasUsed: '0x177d7bd', logs: [], status: '0x1', type: '0x2' } },
        access_list: null,
      },
    };
    const eraC = { ...base, metadata: { block_number: 33439826, access_list: null } };
    const decodedB = decodeFrame(JSON.stringify(eraB), options);
    expect(decodedB.ok && Object.values(decodedB.flashblock.metadata.receipts ?? {})[0]!.type).toBe('0x2');
    expect(decodeFrame(JSON.stringify(eraC), options).ok).toBe(true);
    const badReceipt = { ...base, metadata: { block_number: 33439826, receipts: { [`0x${'1'.repeat(64)}`]: { Bogus: {} } } } };
    expect(decodeFrame(JSON.stringify(badReceipt), options)).toMatchObject({ ok: false, reason: 'schema' });
  });
});

describe('transactionHash', () => {
  it('equals viem keccak256 of the raw transaction', async () => {
    const { keccak256 } = await import('viem');
    const { transactionHash } = await import('./tx-hash.ts');
    for (const message of sepolia as { diff: { transactions: `0x${string}`[] } }[]) {
      for (const raw of message.diff.transactions) expect(transactionHash(raw)).toBe(keccak256(raw));
    }
  });
});

describe('producers that still stream flashblocks (the real Unichain Sepolia 35535698 in each envelope)', async () => {
  const { opRbuilderMessages, opSpecsMessages, sourceMessages, xLayerFrames } = await import('../../test/helpers/feed-formats.ts');
  const { createPayloadBlocks } = await import('./payload-blocks.ts');
  const { extendBlock, startBlock } = await import('../chain/assemble.ts');
  const { flashblockSchema } = await import('../schemas/flashblock.ts');
  type Fb = import('../schemas/flashblock.ts').Flashblock;
  const assemble = (flashblocks: Fb[]) =>
    flashblocks.slice(1).reduce((block, flashblock) => extendBlock(block, flashblock), startBlock(flashblocks[0]!));
  const decodeAll = (messages: object[], payloadBlocks = createPayloadBlocks()) =>
    messages.map((message) => decodeFrame(JSON.stringify(message), { ...options, payloadBlocks }));
  const flashblocksOf = (decoded: ReturnType<typeof decodeFrame>[]) =>
    decoded.map((result) => {
      if (!result.ok) throw new Error(`${result.reason}: ${result.detail}`);
      return result.flashblock;
    });
  const reference = assemble(sourceMessages().map((message) => flashblockSchema.parse(message)));

  it('op-rbuilder: receipts and balances in hash/address order, blob_gas_used; the same block as the source', () => {
    const flashblocks = flashblocksOf(decodeAll(opRbuilderMessages()));
    const block = assemble(flashblocks);
    expect(block.header).toEqual({ ...reference.header, blobGasUsed: '0x0' });
    expect(block.transactions).toEqual(reference.transactions);
    expect(flashblocks.map((flashblock) => Object.keys(flashblock.metadata.receipts ?? {}).length)).toEqual([2, 1, 1, 1, 1]);
    expect(
      Object.values(flashblocks[0]!.metadata.receipts!)
        .map((receipt) => receipt.type)
        .sort(),
    ).toEqual(['0x2', '0x7e']);
  });

  it('X Layer: target_index is read and kept; a bare {payload_id} frame ends the sequence; an odd target_index is ignored, not fatal', () => {
    const decoded = decodeAll(xLayerFrames());
    const last = decoded.at(-1)!;
    expect(last).toMatchObject({ ok: false, reason: 'end_of_sequence', payloadId: sourceMessages()[0]!.payload_id });
    const flashblocks = flashblocksOf(decoded.slice(0, -1));
    expect(flashblocks.map((flashblock) => flashblock.target_index)).toEqual([0, 4, 4, 4, 4]);
    expect(assemble(flashblocks).transactions).toEqual(reference.transactions);
    const odd = decodeFrame(JSON.stringify({ ...xLayerFrames()[1]!, target_index: 'soon' }), options);
    expect(odd.ok && odd.flashblock.target_index).toBe(undefined);
    expect(odd.ok && (odd.json as { target_index: unknown }).target_index).toBe('soon');
    // A bare payload_id that is not a payload id is not an end-of-sequence frame.
    expect(decodeFrame('{"payload_id":"0x12"}', options)).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('OP specs: static read as base, JSON-number and decimal quantities as hex, later indices numbered by payload id; the same block as the source', async () => {
    const messages = await opSpecsMessages();
    const decoded = decodeAll(messages);
    const flashblocks = flashblocksOf(decoded);
    expect(flashblocks[0]!.base).toMatchObject({
      block_number: '0x21e3b52',
      gas_limit: '0x3938700',
      timestamp: '0x690be89e',
      base_fee_per_gas: '0x33',
    });
    expect(flashblocks.map((flashblock) => flashblock.metadata.block_number)).toEqual([35535698, 35535698, 35535698, 35535698, 35535698]);
    expect(flashblocks[4]!.diff.gas_used).toBe('0x32138');
    expect(flashblocks[1]!.metadata.transactions).toEqual([{ status: '0x1', gas_used: '0x85e9', contract_address: null }]);
    const block = assemble(flashblocks);
    expect(block.header).toEqual(reference.header);
    expect(block.transactions).toEqual(reference.transactions);
    expect(block.metadataReceipts).toBeNull(); // no logs in the OP-specs metadata: receipts come from execution
  });

  it('OP specs: a later index whose index 0 was not seen is refused as unknown_payload; malformed spec fields name the path', async () => {
    const messages = await opSpecsMessages();
    expect(decodeFrame(JSON.stringify(messages[2]), options)).toMatchObject({
      ok: false,
      reason: 'unknown_payload',
      detail: expect.stringContaining('was not seen at index 0'),
    });
    expect(decodeFrame(JSON.stringify({ ...messages[1]!, parent_flash_hash: 'yesterday' }), options)).toMatchObject({
      ok: false,
      reason: 'schema',
      detail: expect.stringContaining('parent_flash_hash'),
    });
    const unsafe = { ...messages[0]!, diff: { ...(messages[0]!.diff as object), gas_used: 2 ** 60 } };
    expect(decodeFrame(JSON.stringify(unsafe), options)).toMatchObject({
      ok: false,
      reason: 'schema',
      detail: expect.stringContaining('diff.gas_used'),
    });
    const noStatic = { ...messages[0]!, static: undefined };
    expect(decodeFrame(JSON.stringify(noStatic), options)).toMatchObject({
      ok: false,
      reason: 'schema',
      detail: expect.stringContaining('base (or static)'),
    });
  });
});
