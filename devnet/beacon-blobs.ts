import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { hexToBigInt, type Hex } from 'viem';
import { errorMessage } from '../src/errors.ts';
import type { Upstream } from '../src/jsonrpc/upstream.ts';
import type { PostedBatch } from './batcher.ts';

/**
 * The beacon API's blob endpoints, for the blobs the devnet's batcher posted, as op-node's
 * L1BeaconClient and the prover host read them (beacon-APIs):
 *
 *     GET /eth/v1/beacon/genesis                         {data: {genesis_time}}: the L1's block 0 timestamp
 *     GET /eth/v1/config/spec                            {data: {SECONDS_PER_SLOT: "1"}}
 *     GET /eth/v1/beacon/blob_sidecars/{slot}[?indices=] {data: [{index, blob, kzg_commitment, kzg_proof, …}]}
 *     GET /eth/v1/beacon/blobs/{slot}[?versioned_hashes=] {data: [blob]}  (Fusaka's getBlobs, op-node from v1.16)
 *
 * A slot is one second: slot = L1 block timestamp - genesis timestamp, which names one block on an
 * L1 whose timestamps never repeat (EDR, anvil, a devnet). A sidecar's index is its blob's place
 * among every blob of its L1 block (read from the L1); blobs that other senders posted are not
 * known here and are not served. There is no beacon chain behind it: the signed block header
 * and the inclusion proof are zeros, so a client that checks them refuses these sidecars.
 */
export interface BeaconBlobServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const zero32 = `0x${'00'.repeat(32)}` as Hex;

export async function startBeaconBlobServer(options: {
  readonly host: string;
  readonly port: number;
  /** The L1's JSON-RPC: its genesis timestamp, each block's blob transactions. */
  readonly l1: Upstream;
  readonly posted: () => readonly PostedBatch[];
  readonly logger: Logger;
}): Promise<BeaconBlobServer> {
  let genesisTime: bigint | undefined;
  const genesis = async () =>
    (genesisTime ??= hexToBigInt(((await options.l1.call('eth_getBlockByNumber', ['0x0', false])) as { timestamp: Hex }).timestamp));

  /** The slot's blobs we hold, each with its index among the L1 block's blobs. */
  const sidecarsAt = async (slot: bigint) => {
    const time = (await genesis()) + slot;
    const entries = options.posted().filter((entry) => entry.l1BlockTimestamp === time && entry.blobs.length > 0);
    if (entries.length === 0) return [];
    const block = (await options.l1.call('eth_getBlockByNumber', [`0x${entries[0]!.l1BlockNumber.toString(16)}`, true])) as {
      transactions: { blobVersionedHashes?: Hex[] }[];
    };
    const order = block.transactions.flatMap((tx) => tx.blobVersionedHashes ?? []);
    const held = new Map(entries.flatMap((entry) => entry.blobs.map((blob) => [blob.versionedHash, blob] as const)));
    return order.flatMap((hash, index) => {
      const blob = held.get(hash);
      return blob ? [{ index, hash, blob }] : [];
    });
  };

  const route = async (url: URL): Promise<{ status: number; body: unknown }> => {
    const path = url.pathname.replace(/\/+$/, '');
    if (path === '/eth/v1/beacon/genesis') {
      return {
        status: 200,
        body: { data: { genesis_time: String(await genesis()), genesis_validators_root: zero32, genesis_fork_version: '0x00000000' } },
      };
    }
    if (path === '/eth/v1/config/spec') return { status: 200, body: { data: { SECONDS_PER_SLOT: '1' } } };
    const match = /^\/eth\/v1\/beacon\/(blob_sidecars|blobs)\/(\d+)$/.exec(path);
    if (!match)
      return {
        status: 404,
        body: { code: 404, message: `no route ${path}: expected a slot number (head, finalized and roots are not served)` },
      };
    const sidecars = await sidecarsAt(BigInt(match[2]!));
    if (match[1] === 'blobs') {
      const wanted = url.searchParams.getAll('versioned_hashes').map((hash) => hash.toLowerCase());
      const chosen = wanted.length ? sidecars.filter((entry) => wanted.includes(entry.hash.toLowerCase())) : sidecars;
      if (chosen.length < wanted.length) {
        return {
          status: 404,
          body: { code: 404, message: `slot ${match[2]}: ${wanted.length - chosen.length} of the versioned hashes asked for are not held` },
        };
      }
      return { status: 200, body: { data: chosen.map((entry) => entry.blob.blob) } };
    }
    const indices = url.searchParams
      .getAll('indices')
      .flatMap((value) => value.split(','))
      .filter(Boolean)
      .map(Number);
    const chosen = indices.length ? sidecars.filter((entry) => indices.includes(entry.index)) : sidecars;
    return {
      status: 200,
      body: {
        data: chosen.map((entry) => ({
          index: String(entry.index),
          blob: entry.blob.blob,
          kzg_commitment: entry.blob.commitment,
          kzg_proof: entry.blob.proof,
          signed_block_header: {
            message: { slot: match[2], proposer_index: '0', parent_root: zero32, state_root: zero32, body_root: zero32 },
            signature: `0x${'00'.repeat(96)}`,
          },
          kzg_commitment_inclusion_proof: Array.from({ length: 17 }, () => zero32),
        })),
      },
    };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://beacon');
    if (req.method !== 'GET') return void res.writeHead(405, { allow: 'GET' }).end();
    route(url).then(
      ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (error: unknown) => {
        options.logger.warn({ err: errorMessage(error), path: url.pathname }, 'devnet: beacon blob endpoint could not answer');
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 503, message: errorMessage(error) }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
