import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { compareHeaders } from '../../src/evm/op/compare.ts';
import { executionCrypto } from '../../src/evm/op/crypto.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { parseBlockFixture } from '../../src/prover/host/fixture.ts';
import { sharedPath } from '../helpers/shared.ts';

/**
 * Real OP Sepolia (Holocene era) and OP Mainnet (Ecotone) blocks re-executed from their witnesses
 * alone: a rebuilt header that hashes to the chain's block hash means the block ran exactly as the
 * chain ran it.
 */
const dir = sharedPath('fixtures/op-blocks');
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort();
const raw = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, any>;
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));

const sepolia = files.filter((name) => name.startsWith('op-sepolia-'));

describe('re-executing real OP Sepolia and OP Mainnet blocks from their witnesses', () => {
  it('has the 14 fixtures: 8 OP Sepolia (Holocene), 6 OP Mainnet (Ecotone)', () => {
    expect(sepolia).toHaveLength(8);
    expect(files.filter((name) => name.startsWith('op-mainnet-'))).toHaveLength(6);
  });

  it.each(files)('%s reproduces its real block hash', async (name) => {
    const fixture = parseBlockFixture(raw(name), name);
    const started = performance.now();
    const executed = await executeBlock(fixture.block);
    const ms = Math.round(performance.now() - started);
    console.log(`${name}: ${executed.receipts.length} transactions, ${executed.header.gasUsed} gas, ${ms} ms`);
    if (fixture.expectedHeader) expect(compareHeaders(executed.header, fixture.expectedHeader).differing).toEqual([]);
    expect(executed.hash).toBe(fixture.expectedHash);
  });

  it('the reference path (ethereumjs crypto and loop, every read written back) gives the same block and receipts', async () => {
    const fixture = parseBlockFixture(raw(sepolia[0]!), sepolia[0]);
    const [fast, reference] = [await executeBlock(fixture.block), await executeBlock(fixture.block, { reference: true })];
    expect(reference.hash).toBe(fixture.expectedHash);
    expect(reference.receipts).toEqual(fast.receipts);
  });

  it('runs the bn254 precompiles on the fast path bn254 (ethereumjs createEVM drops that option)', async () => {
    const { bn254 } = await executionCrypto('fast');
    const name = 'op-sepolia-26208384.json';
    const pairing = vi.spyOn(bn254!, 'pairing');
    try {
      const fixture = parseBlockFixture(raw(name), name);
      expect((await executeBlock(fixture.block)).hash).toBe(fixture.expectedHash);
      expect(pairing).toHaveBeenCalled();
    } finally {
      pairing.mockRestore();
    }
  });

  it('refuses a witness node with one flipped byte, naming it', () => {
    const json = raw(sepolia[0]!);
    const [key, value] = Object.entries(json.preimages as Record<string, string>)[7]!;
    const flipped = `${value.slice(0, 10)}${(Number.parseInt(value.slice(10, 12), 16) ^ 1).toString(16).padStart(2, '0')}${value.slice(12)}`;
    expect(() => parseBlockFixture({ ...json, preimages: { ...json.preimages, [key]: flipped } })).toThrow(`preimage of ${key} hashes to`);
  });

  it('refuses a witness that lacks a node, naming the key and what needed it', async () => {
    const json = raw(sepolia[0]!);
    const root = (json.parentHeader.stateRoot as string).toLowerCase();
    const preimages = { ...json.preimages };
    delete preimages[root];
    const fixture = parseBlockFixture({ ...json, preimages });
    await expect(executeBlock(fixture.block)).rejects.toThrow(
      new RegExp(`witness incomplete: no preimage for ${root} \\((account|code of) 0x[0-9a-f]{40}`),
    );
  });

  it('gives another hash for a changed transaction list, and says which header fields moved', async () => {
    const json = raw(sepolia[0]!);
    const fixture = parseBlockFixture({ ...json, payload: { ...json.payload, transactions: json.payload.transactions.slice(0, -1) } });
    const executed = await executeBlock(fixture.block);
    expect(executed.hash).not.toBe(fixture.expectedHash);
    expect(compareHeaders(executed.header, fixture.expectedHeader).differing).toEqual(
      expect.arrayContaining(['stateRoot', 'transactionsRoot', 'receiptsRoot', 'gasUsed']),
    );
  });

  it('refuses a transaction whose signature was altered (another sender, whose account the witness lacks)', async () => {
    const json = raw(sepolia[0]!);
    const txs = [...json.payload.transactions] as string[];
    const last = txs[txs.length - 1]!;
    txs[txs.length - 1] = `${last.slice(0, -4)}${last.slice(-4) === 'aaaa' ? 'bbbb' : 'aaaa'}`;
    const fixture = parseBlockFixture({ ...json, payload: { ...json.payload, transactions: txs } });
    await expect(executeBlock(fixture.block)).rejects.toThrow(
      /witness incomplete: no preimage for 0x[0-9a-f]{64} \(account 0x[0-9a-f]{40}, transaction 9\)/,
    );
  });

  it('flashlog execute-block exits 0 on a matching block and 1 when the expected hash differs', () => {
    const ok = spawnSync(process.execPath, [bin, 'execute-block', join(dir, sepolia[0]!), '--json'], { encoding: 'utf8' });
    expect(ok.status).toBe(0);
    const report = JSON.parse(ok.stdout) as { matches: boolean; differing: string[]; transactions: number };
    expect(report).toMatchObject({ matches: true, differing: [], transactions: 10 });

    const json = raw(sepolia[0]!);
    const wrong = join(mkdtempSync(join(tmpdir(), 'execute-block-')), 'wrong.json');
    writeFileSync(
      wrong,
      JSON.stringify({
        ...json,
        expected: { ...json.expected, blockHash: `0x${'11'.repeat(32)}`, header: { ...json.expected.header, gasUsed: '0x1' } },
      }),
    );
    const bad = spawnSync(process.execPath, [bin, 'execute-block', wrong], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('block hash differs: gasUsed');
  });
});
