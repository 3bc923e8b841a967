import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { embeddedLogFile } from '../../src/log/open.ts';
import { topics } from '../../src/records/topics.ts';
import { tempDir } from '../helpers/context.ts';
import { sharedPath } from '../helpers/shared.ts';

/**
 * Every command's stdout, read through a pipe by a deliberately slow reader, is byte for byte what
 * the same command writes into a file. Writes to a pipe are asynchronous in Node: a CLI that exits
 * before they are done loses what the reader had not taken yet (`tail … | consumer` kept 192 KiB
 * of 2 MB, the last line cut, exit 0).
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dir = tempDir('flashlog-cli-pipe-');
afterAll(() => dir.remove());

interface Output {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** The command with stdout a file; the file's bytes. */
function toFile(args: readonly string[], name: string): Promise<Output> {
  const path = join(dir.path, `${name}.out`);
  const fd = openSync(path, 'w');
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout: readFileSync(path), stderr })));
}

/** The command with stdout a pipe whose reader takes one chunk every `pauseMs`. */
function throughSlowPipe(args: readonly string[], pauseMs = 25): Promise<Output> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), pauseMs);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr })));
}

const logDir = join(dir.path, 'log');
/** Records of ~4 KB each: the topic prints ~2 MB, far more than a pipe's buffer (64 KiB). */
const recordCount = 500;
/** A longer topic for the backpressure test: 5,000 records of ~1 KB. */
const longLogDir = join(dir.path, 'long-log');
const longRecordCount = 5000;

beforeAll(async () => {
  mkdirSync(logDir, { recursive: true });
  const log = createEmbeddedLog({ path: join(logDir, embeddedLogFile) });
  await log.ensureTopics([{ name: topics.blocks, partitions: 1, replication: 1, retentionMs: -1 }]);
  const padding = 'x'.repeat(4000);
  await log.produce(
    Array.from({ length: recordCount }, (_, index) => ({
      topic: topics.blocks,
      key: String(index),
      value: JSON.stringify({ index, padding }),
    })),
  );
  await log.close();
  mkdirSync(longLogDir, { recursive: true });
  const long = createEmbeddedLog({ path: join(longLogDir, embeddedLogFile) });
  await long.ensureTopics([{ name: topics.blocks, partitions: 1, replication: 1, retentionMs: -1 }]);
  const shortPadding = 'y'.repeat(1000);
  await long.produce(
    Array.from({ length: longRecordCount }, (_, index) => ({
      topic: topics.blocks,
      key: String(index),
      value: JSON.stringify({ index, padding: shortPadding }),
    })),
  );
  await long.close();
});

/** The committed examples the README runs these commands on. */
const example = (file: string) => fileURLToPath(new URL(`../../examples/${file}`, import.meta.url));

/** A run's own timing (`"ms":302`) is the one field two runs may differ in: its digits are masked. */
const timing = /"ms":\d+/g;
const masked = (bytes: Buffer, mask: RegExp | undefined) =>
  mask ? bytes.toString('utf8').replace(mask, '"ms":0') : bytes.toString('latin1');

const cases: { name: string; args: () => string[]; minBytes: number; mask?: RegExp }[] = [
  { name: 'overview', args: () => ['--help'], minBytes: 500 },
  // Every command's help goes out by one path (streams/main.ts); one stands for them.
  { name: 'tail-help', args: () => ['tail', '--help'], minBytes: 500 },
  { name: 'schema-list', args: () => ['schema', '--list'], minBytes: 200 },
  { name: 'schema-blocks', args: () => ['schema', topics.blocks], minBytes: 1000 },
  {
    name: 'decode-batch',
    args: () => [
      'decode-batch',
      sharedPath('fixtures/derivation/raw_batcher_tx.hex'),
      '--l2-chain-id',
      '10',
      '--l2-genesis-time',
      '1686068903',
    ],
    minBytes: 100_000,
  },
  // The prover's commands: a re-executed block as JSON, a proof's journals and L1 proof bytes.
  { name: 'execute-block-json', args: () => ['execute-block', example('devnet-block.json'), '--json'], minBytes: 2000, mask: timing },
  { name: 'verify-proposal', args: () => ['verify-proposal', example('proof-reply.json'), example('proof-request.json')], minBytes: 2000 },
  {
    name: 'tail',
    args: () => ['tail', topics.blocks, '--from-beginning', '--data-dir', logDir, '--log-level', 'warn'],
    minBytes: recordCount * 4000,
  },
];

describe('flashlog CLI output through a slow pipe', () => {
  it.each(cases)(
    '$name: the same bytes as into a file',
    async ({ name, args, minBytes, mask }) => {
      const file = await toFile(args(), name);
      expect(file.code, file.stderr).toBe(0);
      expect(file.stdout.length).toBeGreaterThanOrEqual(minBytes);
      const piped = await throughSlowPipe(args());
      expect(piped.code, piped.stderr).toBe(0);
      if (mask) expect(masked(piped.stdout, mask)).toBe(masked(file.stdout, mask));
      else {
        expect(piped.stdout.length).toBe(file.stdout.length);
        expect(piped.stdout.equals(file.stdout)).toBe(true);
      }
    },
    60_000,
  );

  it('tail: every line is a whole JSON record, in offset order', async () => {
    const piped = await throughSlowPipe(['tail', topics.blocks, '--from-beginning', '--data-dir', logDir, '--log-level', 'warn']);
    expect(piped.code, piped.stderr).toBe(0);
    const lines = piped.stdout.toString('utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(recordCount);
    expect(lines.map((line) => (JSON.parse(line) as { offset: number }).offset)).toEqual(lines.map((_, index) => index));
  }, 60_000);

  it('tail into a slow reader reads the log only as fast as the reader takes it: few records held at once, the same bytes', async () => {
    const args = ['tail', topics.blocks, '--from-beginning', '--data-dir', longLogDir, '--log-level', 'debug'];
    const file = await toFile(args, 'tail-long');
    expect(file.code, file.stderr).toBe(0);
    const piped = await throughSlowPipe(args, 10);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout.equals(file.stdout)).toBe(true);
    expect(piped.stdout.toString('utf8').trimEnd().split('\n')).toHaveLength(longRecordCount);
    // What the process says it held: records handed to stdout before the reader had taken them.
    const done = piped.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; printed?: number; mostBuffered?: number; mostBufferedBytes?: number })
      .find((line) => line.msg === 'tail done');
    expect(done, piped.stderr.slice(0, 2000)).toBeDefined();
    expect(done!.printed).toBe(longRecordCount);
    // stdout's buffer holds 64 KiB (Node 24's default high-water mark, about 64 of these records)
    // before write() answers false, then one record more; without backpressure every record of the
    // topic (5,000, 5 MB) was held at once.
    expect(done!.mostBuffered).toBeGreaterThan(0);
    expect(done!.mostBuffered).toBeLessThanOrEqual(128);
    expect(done!.mostBufferedBytes).toBeLessThanOrEqual(128 * 1024);
  }, 120_000);

  it('a reader that closes early (| head) stops the command quietly with exit 0', async () => {
    const child = spawn(process.execPath, [bin, 'tail', topics.blocks, '--from-beginning', '--data-dir', logDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  }, 60_000);
});
