import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAddressFromString } from '@ethereumjs/util';
import { bytesToHex, numberToHex, pad, type Hex } from 'viem';
import { pino } from 'pino';
import { startFeedServer, type FeedServer } from '../../devnet/edr/feed-server.ts';
import type { StandInBlock, StandInChain } from './lagoon-stand-in-chain.ts';

/**
 * A stand-in for a Lagoon chain's node and its subblocks feed, since no client here runs Lagoon:
 * the chain flashlog's engine built (test/helpers/lagoon-stand-in-chain.ts) replayed one block at a
 * time. Every `blockMs` the next block's subblocks go out on the feed (plain JSON text frames, as
 * OP's subblocks endpoint sends them), spread over the block time, and only then does the node
 * seal the block (its head moves to it). The node answers over JSON-RPC (node:http, single and
 * batch) what the checker and flashlog ask an OP node: eth_chainId, net_version, eth_blockNumber,
 * eth_getBlockByNumber/ByHash, eth_getBlockReceipts, eth_getTransactionByHash,
 * eth_getTransactionReceipt, eth_getLogs (by block hash or range), eth_getBlockTransactionCountByNumber,
 * and eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt from the engine's state
 * after each block. `pending` answers as `latest` (op-geth without --rollup.computependingblock).
 * A block not sealed yet is unknown to it (null), as to any node.
 */
type Json = Record<string, unknown>;

export interface LagoonStandIn {
  readonly rpcUrl: string;
  readonly feedUrl: string;
  /** The node's head. */
  head(): bigint;
  /** Starts sealing (the chain sits at genesis until then). */
  start(): void;
  /** Resolves when the node has sealed its last block. */
  readonly finished: Promise<void>;
  close(): Promise<void>;
}

class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export async function startLagoonStandIn(chain: StandInChain, options: { readonly blockMs: number }): Promise<LagoonStandIn> {
  let head = 0n;
  const sealed = (number: bigint): StandInBlock | undefined =>
    number >= 1n && number <= head ? chain.blocks[Number(number) - 1] : undefined;
  const genesis = { number: 0n, hash: chain.genesis.hash, full: chain.genesis.full, receipts: [] as Json[], state: chain.genesis.state };
  const byHash = (hash: unknown): Pick<StandInBlock, 'number' | 'full' | 'receipts' | 'state'> | undefined =>
    String(hash).toLowerCase() === chain.genesis.hash.toLowerCase()
      ? genesis
      : chain.blocks.find((block) => block.number <= head && block.hash.toLowerCase() === String(hash).toLowerCase());

  const numberOf = (tag: unknown): bigint | undefined => {
    if (tag === undefined || tag === null || tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') return head;
    if (tag === 'earliest') return 0n;
    if (typeof tag === 'string' && /^0x[0-9a-f]+$/i.test(tag)) return BigInt(tag);
    if (typeof tag === 'object' && tag !== null && 'blockHash' in tag) return byHash((tag as { blockHash: string }).blockHash)?.number;
    throw new RpcError(-32602, `invalid block tag ${JSON.stringify(tag)}`);
  };
  const blockAt = (number: bigint | undefined) => (number === 0n ? genesis : number === undefined ? undefined : sealed(number));
  const shaped = (full: Json, withTransactions: unknown): Json =>
    withTransactions === true ? full : { ...full, transactions: (full.transactions as Json[]).map((tx) => tx.hash) };
  const stateAt = (tag: unknown): MerkleStateManager => {
    const number = numberOf(tag);
    if (number === undefined || number > head) throw new RpcError(-32000, `header not found: ${JSON.stringify(tag)}`);
    return blockAt(number)!.state;
  };
  const findTransaction = (hash: unknown) => {
    for (const block of chain.blocks) {
      if (block.number > head) break;
      const index = (block.full.transactions as Json[]).findIndex((tx) => String(tx.hash).toLowerCase() === String(hash).toLowerCase());
      if (index >= 0) return { block, index };
    }
    return undefined;
  };
  const account = async (address: unknown, tag: unknown) => stateAt(tag).getAccount(createAddressFromString(String(address)));

  const methods: Record<string, (params: unknown[]) => unknown> = {
    eth_chainId: () => numberToHex(chain.chainId),
    net_version: () => String(chain.chainId),
    eth_blockNumber: () => numberToHex(head),
    eth_getBlockByNumber: ([tag, full]) => {
      const block = blockAt(numberOf(tag));
      return block ? shaped(block.full, full) : null;
    },
    eth_getBlockByHash: ([hash, full]) => {
      const block = byHash(hash);
      return block ? shaped(block.full, full) : null;
    },
    eth_getBlockReceipts: ([tag]) => {
      const block = typeof tag === 'string' && tag.length === 66 ? byHash(tag) : blockAt(numberOf(tag));
      return block ? block.receipts : null;
    },
    eth_getBlockTransactionCountByNumber: ([tag]) => {
      const block = blockAt(numberOf(tag));
      return block ? numberToHex((block.full.transactions as unknown[]).length) : null;
    },
    eth_getTransactionByHash: ([hash]) => {
      const found = findTransaction(hash);
      return found ? (found.block.full.transactions as Json[])[found.index] : null;
    },
    eth_getTransactionReceipt: ([hash]) => {
      const found = findTransaction(hash);
      return found ? found.block.receipts[found.index] : null;
    },
    eth_getLogs: ([filter]) => {
      const { blockHash, fromBlock, toBlock } = (filter ?? {}) as { blockHash?: string; fromBlock?: unknown; toBlock?: unknown };
      const blocks = blockHash
        ? [byHash(blockHash)].filter((block) => block !== undefined)
        : chain.blocks.filter(
            (block) =>
              block.number >= (numberOf(fromBlock) ?? head) && block.number <= Math.min(Number(numberOf(toBlock) ?? head), Number(head)),
          );
      if (blockHash && blocks.length === 0) throw new RpcError(-32000, `unknown block ${blockHash}`);
      return blocks.flatMap((block) => block.receipts.flatMap((receipt) => receipt.logs as Json[]));
    },
    eth_getBalance: async ([address, tag]) => numberToHex((await account(address, tag))?.balance ?? 0n),
    eth_getTransactionCount: async ([address, tag]) => numberToHex((await account(address, tag))?.nonce ?? 0n),
    eth_getCode: async ([address, tag]) => bytesToHex(await stateAt(tag).getCode(createAddressFromString(String(address)))),
    eth_getStorageAt: async ([address, slot, tag]) => {
      const state = stateAt(tag);
      const at = createAddressFromString(String(address));
      if (!(await state.getAccount(at))) return pad('0x', { size: 32 });
      const value = await state.getStorage(at, Buffer.from(pad(String(slot) as Hex, { size: 32 }).slice(2), 'hex'));
      return pad(bytesToHex(value), { size: 32 });
    },
  };

  const answer = async (request: { id?: unknown; method?: string; params?: unknown[] }) => {
    try {
      const method = methods[request.method ?? ''];
      if (!method) throw new RpcError(-32601, `the method ${request.method} does not exist/is not available`);
      return { jsonrpc: '2.0', id: request.id ?? null, result: (await method(request.params ?? [])) ?? null };
    } catch (error) {
      const code = error instanceof RpcError ? error.code : -32603;
      return { jsonrpc: '2.0', id: request.id ?? null, error: { code, message: (error as Error).message } };
    }
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString());
        } catch {
          response.writeHead(400).end();
          return;
        }
        const result = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body as Json);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const feed: FeedServer = await startFeedServer({ host: '127.0.0.1', port: 0, plain: true, logger: pino({ level: 'silent' }) });

  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  /** Block head+1: its subblocks spread over the block time, then sealed. */
  const next = () => {
    const block = chain.blocks[Number(head)];
    if (!block) return finish();
    const step = options.blockMs / (block.subblocks.length + 1);
    block.subblocks.forEach((subblock, i) => later(step * i, () => feed.broadcast(subblock)));
    later(options.blockMs, () => {
      head = block.number;
      next();
    });
  };
  return {
    rpcUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    feedUrl: feed.url,
    head: () => head,
    start: next,
    finished,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      finish();
      await feed.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
