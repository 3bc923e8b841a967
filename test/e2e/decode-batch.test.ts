import { RLP } from '@ethereumjs/rlp';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { bytesToHex, concat, hexToBytes, parseTransaction } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { specBlob } from '../helpers/op-blob.ts';
import { sharedPath } from '../helpers/shared.ts';

/**
 * `flashlog decode-batch` on the public vectors (shared/fixtures/derivation, SOURCE.md), as an
 * operator runs it: a raw OP Mainnet batcher transaction, the same data in a blob, a zlib channel,
 * and a raw span batch put in a channel.
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dir = tempDir('flashlog-decode-batch-');
afterAll(() => dir.remove());
const vector = (name: string) => sharedPath(`fixtures/derivation/${name}`);
const opMainnet = ['--l2-chain-id', '10', '--l2-genesis-time', '1686068903'];

function flashlog(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, 'decode-batch', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

interface Report {
  inputs: { kind: string; transaction?: { from: string; to: string; calldataBytes: number }; frames?: unknown[]; error?: string }[];
  channels: {
    id: string | null;
    compression: string;
    end: { reason: string };
    batches: {
      type: string;
      blockCount: number;
      relTimestamp: number;
      blocks?: { timestamp: number; transactions: { hash: string; raw: string }[] }[];
    }[];
  }[];
}

describe('flashlog decode-batch', () => {
  it('0xdeadbeef: says the input is not a signed transaction and what it expected, exit 1', async () => {
    const { code, stdout } = await flashlog(['0xdeadbeef']);
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as Report;
    expect(report.inputs).toEqual([{ label: '0xdeadbeef', kind: 'transaction', error: expect.any(String) }]);
    const error = report.inputs[0]!.error!;
    expect(error).not.toMatch(/Position `\d+` is out of bounds/);
    expect(error).toMatch(/^not a signed transaction \(4 bytes starting 0xde: .*length prefix runs past the end\)/);
    expect(error).toContain('--batch-input calldata|blob|channel');
  });

  it('prints the frames, channel and span batch of the OP Mainnet batcher transaction', async () => {
    const { code, stdout } = await flashlog([vector('raw_batcher_tx.hex'), ...opMainnet]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Report;
    expect(report.inputs[0]!.transaction).toMatchObject({
      from: '0x6887246668a3b87F54DeB3b94Ba47a6f63F32985',
      to: '0xff00000000000000000000000000000000000010',
      calldataBytes: 119_823,
    });
    expect(report.inputs[0]!.frames).toHaveLength(1);
    const [channel] = report.channels;
    expect(channel).toMatchObject({ id: '0xac329933f5efdcc35ccd284232a376d3', compression: 'zlib', end: { reason: 'end' } });
    const [batch] = channel!.batches;
    expect(batch).toMatchObject({ type: 'span', blockCount: 27 });
    expect(batch!.blocks![0]!.timestamp).toBe(1_686_068_903 + batch!.relTimestamp);
    // Each rebuilt transaction is an OP Mainnet (chain 10) transaction a strict client parses.
    for (const tx of batch!.blocks!.flatMap((block) => block.transactions)) {
      const parsed = parseTransaction(tx.raw as `0x${string}`);
      if (parsed.chainId !== undefined) expect(parsed.chainId).toBe(10);
    }
  });

  it('decodes the same batcher data from a blob (detected by its size) and from a hex file; --rollup-config stands for the flags', async () => {
    const tx = parseTransaction(bytesToHex(readFileSync(vector('raw_batcher_tx.hex'))));
    const blob = join(dir.path, 'batcher.blob');
    writeFileSync(blob, specBlob(hexToBytes(tx.data!)));
    const hexFile = join(dir.path, 'tx.hex');
    writeFileSync(hexFile, `${bytesToHex(readFileSync(vector('raw_batcher_tx.hex')))}\n`);
    const rollupConfig = join(dir.path, 'rollup.json');
    writeFileSync(rollupConfig, JSON.stringify({ l2_chain_id: 10, block_time: 2, genesis: { l2_time: 1_686_068_903 } }));
    const [fromTx, fromBlob, fromHex] = await Promise.all([
      flashlog([vector('raw_batcher_tx.hex'), '--rollup-config', rollupConfig]),
      flashlog([blob, ...opMainnet]),
      flashlog([hexFile, ...opMainnet]),
    ]);
    expect([fromTx.code, fromBlob.code, fromHex.code]).toEqual([0, 0, 0]);
    const channels = (out: string) => (JSON.parse(out) as Report).channels;
    expect((JSON.parse(fromBlob.stdout) as Report).inputs[0]!.kind).toBe('blob');
    expect(channels(fromBlob.stdout)).toEqual(channels(fromTx.stdout));
    expect(channels(fromHex.stdout)).toEqual(channels(fromTx.stdout));
  });

  it('reads the zlib channel vector, and the raw span batch put in a channel', async () => {
    const channel = await flashlog(['--batch-input', 'channel', vector('batch.hex')]);
    expect(channel.code).toBe(0);
    expect((JSON.parse(channel.stdout) as Report).channels[0]!.batches.map((b) => [b.type, b.blockCount])).toEqual([['span', 143]]);
    const spanChannel = join(dir.path, 'span.channel');
    writeFileSync(spanChannel, deflateSync(RLP.encode(concat([Uint8Array.of(1), readFileSync(vector('raw_batch.hex'))]))));
    const span = await flashlog(['--batch-input', 'channel', spanChannel, '--l2-chain-id', '981']);
    expect(span.code).toBe(0);
    const [batch] = (JSON.parse(span.stdout) as Report).channels[0]!.batches;
    expect(batch!.blocks!.flatMap((block) => block.transactions).length).toBeGreaterThan(0);
  });

  it('reports what does not decode with where, exits 1; a missing file is a usage error', async () => {
    const bad = await flashlog(['--batch-input', 'calldata', '0x0012']);
    expect(bad.code).toBe(1);
    expect((JSON.parse(bad.stdout) as Report).inputs[0]!.error).toBe('frame 0 channel_id at offset 1: needs 16 bytes, 1 left');
    const missing = await flashlog([join(dir.path, 'nope.bin')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^flashlog decode-batch: INPUT .*nope\.bin: ENOENT/);
    const none = await flashlog([]);
    expect(none.code).toBe(2);
    const empty = join(dir.path, 'empty.bin');
    writeFileSync(empty, '');
    expect(await flashlog([empty])).toMatchObject({ code: 2, stderr: expect.stringMatching(/INPUT .*empty\.bin: empty/) });
    const odd = join(dir.path, 'odd.hex');
    writeFileSync(odd, readFileSync(vector('batch.hex'), 'latin1').slice(0, 1001));
    expect(await flashlog(['--batch-input', 'channel', odd])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/odd\.hex: hex text with an odd number of digits \(1001\)/),
    });
    const text = join(dir.path, 'text.txt');
    writeFileSync(text, 'hello\n');
    const notATransaction = await flashlog([text]);
    expect(notATransaction.code).toBe(1);
    expect((JSON.parse(notATransaction.stdout) as Report).inputs[0]!.error).not.toContain('\n');
  });

  it('reads hex text broken over lines, as xxd -p and fold write it', async () => {
    const folded = join(dir.path, 'folded.hex');
    writeFileSync(
      folded,
      (
        readFileSync(vector('batch.hex'), 'latin1')
          .trim()
          .match(/.{1,60}/g) ?? []
      ).join('\n'),
    );
    const run = await flashlog(['--batch-input', 'channel', folded]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Report).channels[0]!.batches[0]!.blockCount).toBe(143);
  });
});
