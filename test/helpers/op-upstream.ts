import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, keccak256, numberToHex, pad, toFunctionSelector, toRlp, type Hex } from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import type { AssembledBlock } from '../../src/chain/assemble.ts';
import { createOpProvider, edrCaller, edrContext, type EdrCaller } from '../../src/evm/edr.ts';
import { transactionHash } from '../../src/wire/tx-hash.ts';

/**
 * A local OP chain standing in for Base's sequencer and node in executor tests (the devnet does
 * the same with a real feed): EDR (OP chain type, Isthmus, FIFO mempool, automine off) behind
 * node:http, and a block producer that turns chunks of raw transactions into the assembled
 * flashblocks a feed would yield. Each flashblock's running fields come from a trial block of the
 * transactions so far (snapshot, mine, read, revert); the final block is then mined for real.
 */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
export const accounts: HDAccount[] = Array.from({ length: 10 }, (_, i) => mnemonicToAccount(TEST_MNEMONIC, { addressIndex: i }));

/**
 * A contract, hand-assembled (no compiler here). Runtime, calldata word x:
 *   if byte0(x) == 0xff: revert
 *   storage[x] = caller; LOG1(topic = x, data = x)
 */
export const loggerRuntime: Hex = ('0x60003580' + '60f81c60ff14601b57' + '8033905580600052' + '60206000a1' + '00' + '5b60006000fd') as Hex;
export const loggerInitcode: Hex = concat([
  `0x60${((loggerRuntime.length - 2) / 2).toString(16).padStart(2, '0')}80600b6000396000f3`,
  loggerRuntime,
]);

const DEPOSITOR: Hex = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';
const L1_BLOCK: Hex = '0x4200000000000000000000000000000000000015';
const q = (value: bigint): Hex => (value === 0n ? '0x' : numberToHex(value));

export function encodeDeposit(d: { sourceHash: Hex; from: Hex; to: Hex | null; mint: bigint; value: bigint; gas: bigint; data: Hex }): Hex {
  return concat(['0x7e', toRlp([d.sourceHash, d.from, d.to ?? '0x', q(d.mint), q(d.value), q(d.gas), '0x', d.data])]);
}

/** The L1-attributes deposit (setL1BlockValuesIsthmus) that opens every OP block. */
export function l1AttributesDeposit(l2Number: bigint): Hex {
  const u = (value: bigint | number, size: number) => pad(numberToHex(value), { size });
  const data = concat([
    toFunctionSelector('setL1BlockValuesIsthmus()'),
    u(1368, 4),
    u(810949, 4),
    u(l2Number % 6n, 8),
    u(1_700_000_000n + l2Number, 8),
    u(100n + l2Number / 6n, 8),
    u(7_000_000_000n, 32),
    u(1n, 32),
    keccak256(numberToHex(l2Number / 6n)),
    u(0n, 32),
    u(0, 4),
    u(0n, 8),
  ]);
  return encodeDeposit({
    sourceHash: keccak256(numberToHex(l2Number)),
    from: DEPOSITOR,
    to: L1_BLOCK,
    mint: 0n,
    value: 0n,
    gas: 1_000_000n,
    data,
  });
}

export interface OpUpstream {
  readonly url: string;
  readonly chainId: bigint;
  readonly engine: EdrCaller;
  /** Head block number. */
  head(): Promise<bigint>;
  /** Mines one block from chunks of raw txs (chunk 0 follows the L1-attributes deposit); returns its flashblocks. */
  produceBlock(chunks: readonly Hex[][], options?: { omitFromCanonical?: Hex }): Promise<AssembledBlock[]>;
  /** While set, the HTTP server answers 503 (an upstream outage). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

interface Header {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  gasUsed: Hex;
  gasLimit: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  baseFeePerGas: Hex;
  miner: Hex;
  mixHash: Hex;
  stateRoot: Hex;
  extraData: Hex;
  withdrawalsRoot?: Hex;
  parentBeaconBlockRoot?: Hex;
}

export async function startOpUpstream(options: { chainId?: bigint } = {}): Promise<OpUpstream> {
  const { edr } = await edrContext();
  const chainId = options.chainId ?? 84_532_001n;
  const provider = await createOpProvider({
    chainId,
    coinbase: '0x4200000000000000000000000000000000000011',
    hardfork: 'isthmus',
    initialBaseFeePerGas: 1_000_000n,
    blockGasLimit: 60_000_000n,
    bailOnCallFailure: false,
    allowBlocksWithSameTimestamp: false,
    genesisState: [
      ...edr.opGenesisState(edr.OpHardfork.Isthmus),
      ...accounts.map((account) => ({ address: Uint8Array.from(Buffer.from(account.address.slice(2), 'hex')), balance: 10n ** 24n })),
    ],
    network: { genesisBlockGasLimit: 60_000_000n, genesisBlockTime: 1_700_000_000n },
    maxCachedStates: 100_000,
  });
  const engine = edrCaller(provider);
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work);
    tail = run.catch(() => undefined);
    return run;
  };
  let down = false;

  const answer = async (request: { id?: unknown; method: string; params?: unknown[] }) => {
    try {
      return { jsonrpc: '2.0', id: request.id ?? null, result: await exclusive(() => engine.call(request.method, request.params ?? [])) };
    } catch (error) {
      return {
        jsonrpc: '2.0',
        id: request.id ?? null,
        error: { code: (error as { rpcCode?: number }).rpcCode ?? -32603, message: (error as Error).message },
      };
    }
  };
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    req.on('end', () => {
      if (down) {
        res.writeHead(503).end('down');
        return;
      }
      const body = JSON.parse(text) as unknown;
      const work = Array.isArray(body) ? Promise.all(body.map(answer)) : answer(body as never);
      work.then((out) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    chainId,
    engine,
    head: async () => BigInt(await exclusive(() => engine.call<Hex>('eth_blockNumber'))),
    setDown(value) {
      down = value;
    },
    produceBlock: (chunks, produceOptions = {}) =>
      exclusive(async () => {
        const parent = await engine.call<Header>('eth_getBlockByNumber', ['latest', false]);
        const number = BigInt(parent.number) + 1n;
        const timestamp = BigInt(parent.timestamp) + 2n;
        const all: Hex[] = [];
        const flashblocks: AssembledBlock[] = [];
        const withDeposit = chunks.map((chunk, i) => (i === 0 ? [l1AttributesDeposit(number), ...chunk] : [...chunk]));
        for (let index = 0; index < withDeposit.length; index++) {
          const firstNew = all.length;
          for (const raw of withDeposit[index]!) {
            try {
              await engine.call('eth_sendRawTransaction', [raw]);
            } catch (error) {
              // EDR refuses a deposit whose sender's nonce is not 0 (NomicFoundation/edr#1578): the
              // L1-attributes deposit makes it into block 1 only. The block goes on without it.
              if (raw.startsWith('0x7e')) continue;
              throw error;
            }
            all.push(raw);
          }
          const snapshot = await engine.call<string>('evm_snapshot');
          await engine.call('evm_setNextBlockTimestamp', [numberToHex(timestamp)]);
          await engine.call('evm_mine');
          const trial = await engine.call<Header>('eth_getBlockByNumber', ['latest', false]);
          await engine.call('evm_revert', [snapshot]);
          flashblocks.push({
            blockNumber: number,
            index,
            payloadId: `0x${number.toString(16).padStart(16, '0')}`,
            header: {
              number: numberToHex(number),
              parentHash: parent.hash,
              parentBeaconBlockRoot: trial.parentBeaconBlockRoot ?? `0x${'0'.repeat(64)}`,
              miner: trial.miner,
              prevRandao: trial.mixHash,
              gasLimit: trial.gasLimit,
              timestamp: trial.timestamp,
              extraData: trial.extraData,
              baseFeePerGas: trial.baseFeePerGas,
              gasUsed: trial.gasUsed,
              receiptsRoot: trial.receiptsRoot,
              logsBloom: trial.logsBloom,
              stateRoot: `0x${'0'.repeat(64)}`,
              flashblockHash: trial.hash,
              withdrawalsRoot: trial.withdrawalsRoot ?? `0x${'0'.repeat(64)}`,
              blobGasUsed: null,
              withdrawals: [],
            },
            transactions: all.map((raw) => ({ hash: transactionHash(raw), raw })),
            firstNew,
            metadataReceipts: null,
            metadataBalances: null,
          });
        }
        if (produceOptions.omitFromCanonical !== undefined) {
          // A reorg: the sealed block leaves one pre-confirmed transaction out.
          await engine.call('hardhat_dropTransaction', [transactionHash(produceOptions.omitFromCanonical)]);
        }
        await engine.call('evm_setNextBlockTimestamp', [numberToHex(timestamp)]);
        await engine.call('evm_mine');
        return flashblocks;
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
