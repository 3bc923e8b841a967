import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { topics } from '../../src/records/topics.ts';
import { proofRequestRecordSchema } from '../../src/records/proofs.ts';
import { tempDir } from '../helpers/context.ts';

/** `flashlog prove` without a bridge: what it writes to the log, its timeout and input errors. */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dir = tempDir();
afterAll(() => dir.remove());
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const prove = (...args: string[]) =>
  spawnSync(process.execPath, [bin, 'prove', ...args, '--data-dir', dir.path, '--log-level', 'warn'], {
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('flashlog prove', () => {
  it('produces a v1 request record keyed by its id, and exits 1 when no reply comes in time', async () => {
    const file = join(dir.path, 'request.json');
    writeFileSync(
      file,
      JSON.stringify({
        l1_head: hash(1),
        agreed_l2_head_hash: hash(2),
        agreed_l2_output_root: hash(3),
        claimed_l2_output_root: hash(4),
        claimed_l2_block_number: 12,
      }),
    );
    const out = prove(file, '--timeout', '1');
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(/no reply for request [0-9a-f-]{36} within 1s/);
    const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
    try {
      const ends = await log.endOffsets(topics.proofRequests);
      expect(ends[0]!.offset).toBe(1n);
      const consumer = log.consumer({ topics: [topics.proofRequests], from: 'earliest' });
      const record = await firstValueFrom(consumer.records$);
      await consumer.close();
      const parsed = proofRequestRecordSchema.parse(JSON.parse(record.value));
      expect(parsed.requestId).toBe(record.key);
      expect(parsed.replyTopic).toBe(topics.proofReplies);
      expect(parsed.request).toMatchObject({
        claimed_l2_block_number: 12,
        intermediate_block_interval: 0,
        proposer: '0x0000000000000000000000000000000000000000',
      });
    } finally {
      await log.close();
    }
  });

  it('refuses a request file naming the bad field (exit 2)', () => {
    const file = join(dir.path, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        l1_head: hash(1),
        agreed_l2_head_hash: hash(2),
        agreed_l2_output_root: hash(3),
        claimed_l2_output_root: hash(4),
        claimed_l2_block_number: '0xc',
      }),
    );
    const out = prove(file);
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/bad\.json: request\.claimed_l2_block_number: /);
    expect(prove().status).toBe(2);
  });
});
