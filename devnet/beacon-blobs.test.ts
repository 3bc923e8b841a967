import { pino } from 'pino';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostedBatch } from './batcher.ts';
import { startBeaconBlobServer, type BeaconBlobServer } from './beacon-blobs.ts';

/**
 * The beacon blob endpoints' routing over a stub L1: slots are seconds from the L1's genesis, a
 * sidecar's index counts every blob of its L1 block (another sender's first), and what is not held
 * is refused with 404, not made up. The blobs' bytes and KZG are held against op-node's beacon
 * client in test/integration/devnet-batcher.test.ts.
 */
const hash = (n: number) => `0x01${n.toString(16).padStart(62, '0')}` as Hex;
const blob = (n: number) => ({
  blob: `0x${n.toString(16).padStart(2, '0')}` as Hex,
  commitment: `0xc${n}` as Hex,
  proof: `0xd${n}` as Hex,
});
const posted: PostedBatch[] = [
  {
    l1TransactionHash: `0x${'aa'.repeat(32)}`,
    l1BlockNumber: 7n,
    l1BlockTimestamp: 1_000_010n,
    channelId: `0x${'00'.repeat(16)}`,
    l2Blocks: [1n, 4n],
    blobs: [
      { ...blob(1), versionedHash: hash(1) },
      { ...blob(2), versionedHash: hash(2) },
    ],
  },
];
const l1 = {
  url: 'stub',
  async call(method: string, params: readonly unknown[]) {
    if (method === 'eth_getBlockByNumber' && params[0] === '0x0') return { timestamp: '0xf4240' }; // 1,000,000
    if (method === 'eth_getBlockByNumber' && params[0] === '0x7') {
      return { transactions: [{ blobVersionedHashes: [hash(9)] }, {}, { blobVersionedHashes: [hash(1), hash(2)] }] };
    }
    throw new Error(`unexpected ${method} ${JSON.stringify(params)}`);
  },
};
let server: BeaconBlobServer;

beforeAll(async () => {
  server = await startBeaconBlobServer({ host: '127.0.0.1', port: 0, l1, posted: () => posted, logger: pino({ level: 'silent' }) });
});
afterAll(() => server.close());

const get = async (path: string) => {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: (await response.json()) as { data?: unknown; message?: string } };
};

describe('the beacon blob endpoints', () => {
  it('answer genesis and spec with one-second slots from the L1 genesis', async () => {
    expect((await get('/eth/v1/beacon/genesis')).body.data).toMatchObject({ genesis_time: '1000000' });
    expect((await get('/eth/v1/config/spec')).body.data).toEqual({ SECONDS_PER_SLOT: '1' });
  });

  it('serve the sidecars of slot 10 with their index among the block’s blobs, and filter by index', async () => {
    const all = (await get('/eth/v1/beacon/blob_sidecars/10')).body.data as {
      index: string;
      blob: Hex;
      kzg_commitment: Hex;
      kzg_proof: Hex;
    }[];
    expect(all.map((sidecar) => [sidecar.index, sidecar.blob, sidecar.kzg_commitment, sidecar.kzg_proof])).toEqual([
      ['1', '0x01', '0xc1', '0xd1'],
      ['2', '0x02', '0xc2', '0xd2'],
    ]);
    expect(((await get('/eth/v1/beacon/blob_sidecars/10?indices=2')).body.data as { index: string }[]).map((s) => s.index)).toEqual(['2']);
    expect((await get('/eth/v1/beacon/blob_sidecars/11')).body.data).toEqual([]);
  });

  it('serve blobs by versioned hash, and refuse a hash not held', async () => {
    expect((await get(`/eth/v1/beacon/blobs/10?versioned_hashes=${hash(2)}`)).body.data).toEqual(['0x02']);
    const missing = await get(`/eth/v1/beacon/blobs/10?versioned_hashes=${hash(9)}`);
    expect([missing.status, missing.body.message]).toEqual([404, 'slot 10: 1 of the versioned hashes asked for are not held']);
    const route = await get('/eth/v1/beacon/blob_sidecars/head');
    expect(route.status).toBe(404);
    expect(route.body.message).toMatch(/expected a slot number/);
  });
});
