import { spawnSync } from 'node:child_process';
import { bytesToHex, concat, hexToBigInt, hexToBytes, hexToNumber, numberToHex, parseEther, slice, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBatcherData, type BatcherInput } from '../../src/derive/batcher-data.ts';
import type { BatchKind, BatcherTarget } from '../../src/derive/channel-out.ts';
import type { CompressionAlgo } from '../../src/derive/channel.ts';
import { derivationRules } from '../../src/derive/rules.ts';
import { transactionDepositedTopic } from '../../src/derive/user-deposits.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { fixtureFromRpc } from '../../src/prover/host/fixture.ts';
import { l1InfoCalldata, parseL1Info } from '../../src/op/l1-info.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';
import { collectBlockWitness } from '../../src/prover/host/witness-rpc.ts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import { startDerivedChain, type DerivedChain } from '../helpers/derived-chain.ts';
import { systemConfigUpdates } from '../helpers/derived-chain-scenario.ts';
import { buildDerivePeer, peerBeacon, peerDecode } from '../helpers/derive-peer.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';

/**
 * The derived chain harness (test/helpers/derived-chain.ts) makes what it says: an L2 that is
 * exactly what derivation from its L1 gives. Held against things flashlog did not write:
 * - op-geth built, validated and adopted every block from attributes holding the L1-info deposit,
 *   the L1 origin's portal deposits and the batch's transactions, and its blocks hold exactly
 *   those, deposits first; the deposits took effect on L2; the L1 SystemConfig's updates (gas
 *   limit, fee scalars, EIP-1559 parameters, operator fee, min base fee, DA footprint scalar) reach
 *   the headers and the L1-info deposits from their epoch's first block on;
 * - the batcher transactions on the L1 decode, with src/derive and with op-node's own code
 *   (test/go/derive-peer; blobs fetched by op-node's beacon client, which checks their KZG
 *   commitments), to exactly the L2 blocks' timestamps, L1 origins and user transactions;
 * - op-node's PreparePayloadAttributes (`derive-peer attributes`) over each L2 block's real L1
 *   origin (the whole header, so its hash is the L1's; its receipts) builds the very transactions
 *   of that block. The peer reads the L1 as Sepolia's config, whose blob base fee differs from
 *   Prague's only when excess blob gas is non-zero; the L1 here never has any (one blob a block).
 * And flashlog's stateless engine, given the rollup config the harness returns, re-executes every
 * block from op-geth's execution witness to its hash: the chain is one `prove` can re-execute.
 */
const runs: { target: BatcherTarget; kind: BatchKind; compression: CompressionAlgo; jovian: boolean }[] = [
  { target: 'calldata', kind: 'span', compression: 'zlib', jovian: true },
  { target: 'blob', kind: 'singular', compression: 'brotli', jovian: false },
];

let peer = '';
beforeAll(() => {
  peer = buildDerivePeer();
}, 20 * 60_000);

const lower = (value: unknown): unknown => JSON.parse(JSON.stringify(value).toLowerCase());

interface RpcBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  mixHash: Hex;
  gasLimit: Hex;
  miner: Hex;
  extraData: Hex;
  parentBeaconBlockRoot: Hex;
  excessBlobGas?: Hex;
  transactions: { hash: Hex; type: Hex; from: Hex; to: Hex | null; input: Hex; blobVersionedHashes?: Hex[] }[];
}
interface RpcReceipt {
  status: Hex;
  logs: { address: Hex; topics: Hex[]; data: Hex; logIndex: Hex }[];
}

describe.each(runs)(
  'a derived chain: $kind batches, $compression, in $target (Jovian: $jovian)',
  ({ target, kind, compression, jovian }) => {
    let chain: DerivedChain;
    let buildMs = 0;
    const l1 = <T>(method: string, params: unknown[]) => chain.l1.edr.request(method, params) as Promise<T>;
    const l2Block = (number: bigint) => chain.l2.rpc<RpcBlock>('eth_getBlockByNumber', [numberToHex(number), true]);
    const l1Block = (number: bigint) => l1<RpcBlock>('eth_getBlockByNumber', [numberToHex(number), true]);
    /** op-geth's transactions of block `number`, raw. */
    const rawTransactions = async (number: bigint) =>
      Promise.all((await l2Block(number)).transactions.map((tx) => chain.l2.rpc<Hex>('eth_getRawTransactionByHash', [tx.hash])));
    /** The L2 blocks as batches carry them. */
    const expectedBatches = () =>
      chain.l2Blocks.map((block) => ({
        timestamp: block.timestamp,
        epochNumber: block.l1Origin.number,
        transactions: block.userTransactions,
      }));

    beforeAll(async () => {
      const started = Date.now();
      chain = await startDerivedChain({ target, kind, compression, jovian, blocks: 20, blocksPerChannel: 5 });
      buildMs = Date.now() - started;
    }, 120_000);
    afterAll(async () => {
      await chain?.close();
    });

    it('spans several epochs, some of several blocks, with deposits, user transactions and empty blocks', () => {
      const blocks = chain.l2Blocks;
      expect(blocks.map((block) => block.number)).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 1)));
      const epochs = new Set(blocks.map((block) => block.l1Origin.number));
      expect(epochs.size).toBeGreaterThanOrEqual(4);
      expect(blocks.filter((block) => block.sequenceNumber >= 2n).length).toBeGreaterThan(3);
      const withDeposits = blocks.filter((block) => block.userDeposits > 0);
      expect(withDeposits.map((block) => block.sequenceNumber)).toEqual(withDeposits.map(() => 0n));
      expect(withDeposits.reduce((sum, block) => sum + block.userDeposits, 0)).toBeGreaterThanOrEqual(3);
      expect(blocks.some((block) => block.userDeposits >= 2)).toBe(true);
      expect(blocks.some((block) => block.userTransactions.length === 0)).toBe(true);
      expect(blocks.some((block) => block.userTransactions.length >= 2)).toBe(true);
      expect(chain.batches.length).toBeGreaterThanOrEqual(4);
      // The SystemConfig changes once, on the first block of its L1 block's epoch.
      const updated = blocks.findIndex((block) => block.systemConfig.gasLimit === systemConfigUpdates.gasLimit);
      expect(chain.systemConfigBlocks.map((block) => block.hash)).toEqual([blocks[updated]?.l1Origin.hash]);
      expect([updated > 0, blocks[updated]?.sequenceNumber, blocks.at(-1)!.systemConfig.gasLimit]).toEqual([true, 0n, 36_000_000n]);
      expect(chain.batches.every((batch) => batch.blobs.length > 0 === (target === 'blob'))).toBe(true);
      console.info(
        `derived chain (${target}, ${kind}, ${compression}): 20 L2 blocks over ${epochs.size} epochs built and posted in ${buildMs} ms`,
      );
    });

    it("op-geth's blocks are the attributes' blocks: the L1-info deposit, the origin's deposits, then the batch", async () => {
      const head = await chain.l2.rpc<RpcBlock>('eth_getBlockByNumber', ['latest', false]);
      expect(hexToBigInt(head.number)).toBe(20n);
      for (const block of chain.l2Blocks) {
        const node = await l2Block(block.number);
        const origin = await l1Block(block.l1Origin.number);
        expect(node.hash, `L2 block ${block.number}`).toBe(block.hash);
        expect(hexToBigInt(node.timestamp)).toBe(block.timestamp);
        // prevRandao and the beacon root come from the L1 origin.
        expect(node.mixHash).toBe(origin.mixHash);
        expect(node.parentBeaconBlockRoot).toBe(origin.parentBeaconBlockRoot);
        const raw = await rawTransactions(block.number);
        expect(raw, `L2 block ${block.number}`).toEqual(block.transactions);
        const deposits = 1 + block.userDeposits;
        expect(node.transactions.map((tx) => tx.type === '0x7e')).toEqual(raw.map((_, i) => i < deposits));
        expect(raw.slice(deposits)).toEqual(block.userTransactions);
        const info = parseL1Info(l1InfoCalldata(raw), `L2 block ${block.number}`);
        expect(info.form).toBe(jovian ? 'jovian' : 'isthmus');
        // The SystemConfig of the block's epoch, in the header and the L1-info deposit.
        const config = block.systemConfig;
        expect(hexToBigInt(node.gasLimit)).toBe(config.gasLimit);
        // Holocene's extraData: version 0 ‖ eip1559Params; Jovian's: version 1 ‖ eip1559Params ‖ minBaseFee u64.
        expect(node.extraData).toBe(
          jovian
            ? concat(['0x01', config.eip1559Params, numberToHex(config.minBaseFee, { size: 8 })])
            : concat(['0x00', config.eip1559Params]),
        );
        expect([info.baseFeeScalar, info.blobBaseFeeScalar]).toEqual([
          hexToNumber(slice(config.scalar, 28, 32)),
          hexToNumber(slice(config.scalar, 24, 28)),
        ]);
        expect([info.operatorFeeScalar, info.operatorFeeConstant]).toEqual([
          hexToNumber(slice(config.operatorFeeParams, 20, 24)),
          hexToBigInt(slice(config.operatorFeeParams, 24, 32)),
        ]);
        expect(info.daFootprintGasScalar).toBe(jovian ? config.daFootprintGasScalar || 400 : undefined);
        expect([info.l1BlockNumber, info.sequenceNumber]).toEqual([block.l1Origin.number, block.sequenceNumber]);
        expect(slice(l1InfoCalldata(raw), 100, 132)).toBe(origin.hash);
        // The portal's deposits of the origin, counted from the L1's receipts, land on the epoch's first block.
        const portalLogs = block.sequenceNumber === 0n ? await depositLogCount(origin) : 0;
        expect(block.userDeposits, `L2 block ${block.number}`).toBe(portalLogs);
      }
      // The deposit that minted 3 ETH and sent 2 to the recipient took effect, in its block.
      const recipient = privateKeyToAccount(chain.keys.depositRecipient).address;
      const minted = chain.l2Blocks.find((block) => block.userDeposits >= 2)!;
      const balance = (number: bigint) => chain.l2.rpc<Hex>('eth_getBalance', [recipient, numberToHex(number)]).then(hexToBigInt);
      expect((await balance(minted.number)) - (await balance(minted.number - 1n))).toBe(parseEther('2'));
      // Every deposit ran: the mint, the creation, the call with value.
      for (const block of chain.l2Blocks.filter((entry) => entry.userDeposits > 0))
        for (const tx of (await l2Block(block.number)).transactions.slice(1, 1 + block.userDeposits)) {
          const receipt = await chain.l2.rpc<{ status: Hex }>('eth_getTransactionReceipt', [tx.hash]);
          expect(receipt.status, `L2 block ${block.number} deposit ${tx.hash}`).toBe('0x1');
        }
    });

    async function depositLogCount(origin: RpcBlock): Promise<number> {
      let count = 0;
      for (const tx of origin.transactions) {
        const receipt = await l1<RpcReceipt>('eth_getTransactionReceipt', [tx.hash]);
        count += receipt.logs.filter((log) => log.address === chain.addresses.portal && log.topics[0] === transactionDepositedTopic).length;
      }
      return count;
    }

    it('the batches on L1 decode, with src/derive and with op-node, to the L2 blocks', async () => {
      const batcher = privateKeyToAccount(chain.keys.batcher).address.toLowerCase();
      const head = hexToBigInt(await l1<Hex>('eth_blockNumber', []));
      const posted: (RpcBlock['transactions'][number] & { time: bigint })[] = [];
      for (let n = chain.l2Genesis.l1Origin.number + 1n; n <= head; n++) {
        const block = await l1Block(n);
        for (const tx of block.transactions)
          if (tx.to === chain.addresses.batchInbox && tx.from === batcher) posted.push({ ...tx, time: hexToBigInt(block.timestamp) });
      }
      expect(posted.map((tx) => tx.hash)).toEqual(chain.batches.map((batch) => batch.l1TransactionHash));
      // Blobs by versioned hash through op-node's beacon client, from the harness's beacon endpoint.
      const fetched = await Promise.all(
        posted
          .filter((entry) => entry.blobVersionedHashes?.length)
          .map((tx) => peerBeacon(peer, { url: chain.beaconUrl, time: Number(tx.time), hashes: tx.blobVersionedHashes! })),
      );
      expect(fetched.map((answer) => answer.error)).toEqual(fetched.map(() => undefined));
      const blobs = fetched.flatMap((answer) => answer.blobs!);
      const inputs: BatcherInput[] =
        target === 'blob'
          ? blobs.map((blob, i) => ({ kind: 'blob', bytes: hexToBytes(blob), label: `blob ${i}` }))
          : posted.map((tx, i) => ({ kind: 'calldata', bytes: hexToBytes(tx.input), label: `tx ${i}` }));
      const genesisTime = chain.l2Genesis.timestamp;
      const report = await decodeBatcherData(inputs, derivationRules(jovian ? 'jovian' : 'isthmus'), {
        chainId: BigInt(chain.l2ChainId),
        l2GenesisTime: genesisTime,
        blockTime: BigInt(chain.rollupConfig.block_time),
      });
      expect(report.inputs.flatMap((input) => (input.error ? [input.error] : []))).toEqual([]);
      expect(report.channels.map((channel) => channel.read?.end.reason)).toEqual(report.channels.map(() => 'end'));
      const ours = report.channels.flatMap((channel) =>
        (channel.read?.batches ?? []).flatMap((entry) => {
          expect(entry.type).toBe(kind);
          if (entry.type === 'singular') {
            const block = chain.l2Blocks.find((candidate) => candidate.timestamp === entry.batch.timestamp);
            expect([entry.batch.parentHash, entry.batch.epochHash]).toEqual([block?.parentHash, block?.l1Origin.hash]);
          }
          return (entry.type === 'singular' ? [entry.batch] : entry.batch!.blocks).map((block) => ({
            timestamp: block.timestamp,
            epochNumber: block.epochNumber,
            transactions: block.transactions.map((tx) => bytesToHex(tx)),
          }));
        }),
      );
      expect(ours).toEqual(expectedBatches());

      const theirs = peerDecode(peer, {
        chain: { chainId: chain.l2ChainId, genesisTime: Number(genesisTime), blockTime: chain.rollupConfig.block_time },
        fjord: true,
        batcherData: target === 'calldata' ? posted.map((tx) => tx.input) : [],
        blobs,
      });
      expect(theirs.errors ?? []).toEqual([]);
      const opNode = theirs.channels.flatMap((channel) =>
        channel.batches.flatMap((batch) =>
          batch.blocks.map((block) => ({
            timestamp: BigInt(block.timestamp),
            epochNumber: BigInt(block.epochNumber),
            transactions: block.transactions ?? [],
          })),
        ),
      );
      expect(opNode).toEqual(expectedBatches());
    });

    it("op-node's PreparePayloadAttributes over each block's real L1 origin builds that block's transactions", async () => {
      const genesis = chain.rollupConfig.genesis.system_config;
      const peerConfig = (config: SystemConfig) => ({
        ...config,
        batcher: config.batcher.toLowerCase(),
        gasLimit: numberToHex(config.gasLimit),
        minBaseFee: numberToHex(config.minBaseFee),
      });
      // The parent's SystemConfig: the rollup config's at genesis, then each block's.
      let parentConfig = peerConfig({
        batcher: genesis.batcherAddr,
        overhead: genesis.overhead,
        scalar: genesis.scalar,
        gasLimit: BigInt(genesis.gasLimit),
        eip1559Params: genesis.eip1559Params,
        operatorFeeParams: genesis.operatorFeeParams,
        minBaseFee: BigInt(genesis.minBaseFee ?? 0),
        daFootprintGasScalar: genesis.daFootprintGasScalar ?? 0,
      });
      const cases = [];
      for (const block of chain.l2Blocks) {
        const header = await l1<RpcBlock>('eth_getBlockByNumber', [numberToHex(block.l1Origin.number), false]);
        const receipts = [];
        for (const hash of header.transactions as unknown as Hex[])
          receipts.push(await l1<RpcReceipt>('eth_getTransactionReceipt', [hash]));
        expect(header.excessBlobGas).toBe('0x0');
        cases.push({
          name: `L2 block ${block.number}`,
          header: {},
          rpcHeader: header,
          receipts: receipts.map((receipt) => ({
            status: Number(hexToBigInt(receipt.status)),
            logs: receipt.logs.map((log) => ({ ...log, logIndex: Number(hexToBigInt(log.logIndex)) })),
          })),
          systemConfig: parentConfig,
          sequenceNumber: Number(block.sequenceNumber),
          l2Time: Number(block.timestamp),
          batchTransactions: block.userTransactions,
        });
        parentConfig = peerConfig(block.systemConfig);
      }
      const run = spawnSync(peer, ['attributes'], {
        input: JSON.stringify({ rollup: chain.rollupConfig, cases }),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(run.status, run.stderr).toBe(0);
      const answers = JSON.parse(run.stdout) as {
        name: string;
        hash: Hex;
        depositsError?: string;
        attributesError?: string;
        systemConfig: Record<string, unknown>;
        attributes?: { timestamp: Hex; prevRandao: Hex; gasLimit: Hex; transactions: Hex[]; eip1559Params: Hex; minBaseFee?: number };
      }[];
      let withDeposits = 0;
      let updated = 0;
      for (const [i, block] of chain.l2Blocks.entries()) {
        const answer = answers[i]!;
        expect(answer.hash, answer.name).toBe(block.l1Origin.hash);
        expect(answer.attributesError, answer.name).toBeUndefined();
        const node = await l2Block(block.number);
        expect(answer.attributes!.transactions, answer.name).toEqual(await rawTransactions(block.number));
        expect([answer.attributes!.timestamp, answer.attributes!.prevRandao, answer.attributes!.gasLimit]).toEqual([
          node.timestamp,
          node.mixHash,
          node.gasLimit,
        ]);
        expect(slice(node.extraData, 1, 9)).toBe(answer.attributes!.eip1559Params);
        if (jovian) expect(hexToBigInt(slice(node.extraData, 9, 17))).toBe(BigInt(answer.attributes!.minBaseFee ?? -1));
        else expect(answer.attributes!.minBaseFee).toBeUndefined();
        expect(lower(answer.systemConfig), answer.name).toEqual(lower(peerConfig(block.systemConfig)));
        if (block.userDeposits > 0) withDeposits++;
        if (block.systemConfig.gasLimit !== BigInt(genesis.gasLimit)) updated++;
      }
      expect([withDeposits >= 2, updated >= 2]).toEqual([true, true]);
    });

    it("flashlog's stateless engine re-executes every block from op-geth's witness, with the harness's rollup config", async () => {
      const config = parseRollupConfig(chain.rollupConfig);
      for (const block of chain.l2Blocks) {
        const fixture = fixtureFromRpc(await collectBlockWitness(rpcCall(chain.l2RpcUrl), block.number), config);
        expect((await executeBlock(fixture.block)).hash, `L2 block ${block.number}`).toBe(block.hash);
      }
    });
  },
);
