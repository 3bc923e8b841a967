import { createServer, type Server } from 'node:http';
import { numberToHex, type Hex } from 'viem';
import { InvalidParamsError, MethodNotFoundError, ServerError } from '../../src/errors.ts';
import { listenOnLoopback, readBody, replyJson } from '../../src/jsonrpc/edge.ts';
import { handleText, type RpcCall } from '../../src/jsonrpc/protocol.ts';
import { logFilterParam } from '../../src/rpc/params.ts';
import type { HistoryRing, RingBlock } from './history-ring.ts';
import type { StateMirror } from './state-mirror.ts';

/**
 * The JSON-RPC endpoint a rolled-over devnet provider forks from (rollover.ts), answering from the
 * devnet's own records, never from the provider it replaces:
 *
 *   state at a kept block     (eth_getBalance, eth_getTransactionCount, eth_getCode,
 *                             eth_getStorageAt) from the state mirror as of that block
 *                             (state-mirror.ts), however long after it is asked
 *   blocks, transactions,     from the ring of the newest sealed blocks (history-ring.ts):
 *   receipts, logs            null (or no logs) for a block older than the ring holds
 *   state at an older block   refused (-32000 "missing trie node", as a pruned geth says)
 *
 * EDR's fork client speaks to it over 127.0.0.1 HTTP (it only takes a URL).
 */
export interface EdrForkSource {
  readonly url: string;
  /** The block forks are made at from now on (the head sealed last). */
  setForkBlock(number: bigint): void;
  /** Requests answered, by method (the spike and the test read them). */
  readonly asked: Map<string, number>;
  /**
   * Accounts and slots (`address|slot`) read since the last call: the provider holds them for good
   * once they are written back to it (see rollover.ts), so it stops asking for them again.
   */
  drainRead(): { accounts: Set<Hex>; slots: Set<string> };
  close(): Promise<void>;
}

export interface ForkSourceOptions {
  readonly chainId: number;
  readonly ring: HistoryRing;
  readonly mirror: StateMirror;
}

/**
 * EDR caches what it reads from a fork's remote only for a block it deems safe from reorgs: at
 * least 128 blocks below the remote's head for a chain it does not know (DEFAULT_SAFE_BLOCK_DEPTH
 * in EDR's fork code). Without the cache, every re-execution (a trace, a re-mine after evm_revert)
 * asked again: about 13 requests per transaction for each of balance, nonce and code, and the
 * mirror's tracing then cost 11-16 ms per transaction instead of 3 (the spike, measured). A sealed
 * devnet block is never reorged, so the fork source says its head is that far above the fork block.
 */
const SAFE_BLOCK_DEPTH = 128n;

const STATE_TAG_AT: Readonly<Record<string, number>> = {
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getCode: 1,
  eth_getStorageAt: 2,
};

function hexParam(value: unknown, where: string): Hex {
  if (typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value)) return value.toLowerCase() as Hex;
  throw new InvalidParamsError(`${where}: expected hex, got ${JSON.stringify(value)}`);
}

export function forkSourceDispatch(
  options: ForkSourceOptions,
  forkBlock: () => bigint,
  read: { accounts: Set<Hex>; slots: Set<string> } = { accounts: new Set(), slots: new Set() },
) {
  const { ring, mirror } = options;

  function blockNumberOf(tag: unknown, where: string): bigint {
    if (tag === 'latest' || tag === 'safe' || tag === 'finalized' || tag === 'pending' || tag === undefined) return forkBlock();
    if (tag === 'earliest') return 0n;
    return BigInt(hexParam(tag, where));
  }
  const shaped = (block: RingBlock | undefined, full: unknown): unknown =>
    !block ? null : full === true ? block : { ...block, transactions: block.transactions.map((tx) => tx.hash) };

  return async (call: RpcCall): Promise<unknown> => {
    const params = (Array.isArray(call.params) ? call.params : []) as unknown[];
    const where = `${call.method}: params`;
    const stateAt = STATE_TAG_AT[call.method];
    if (stateAt !== undefined) {
      const at = blockNumberOf(params[stateAt], `${where}[${stateAt}]`);
      if (at < mirror.oldest() || at > forkBlock())
        throw new ServerError(
          `missing trie node: state at block ${at} is not kept (the devnet keeps the state of blocks ${mirror.oldest()} to its head)`,
        );
      const address = hexParam(params[0], `${where}[0]`);
      const state = mirror.at(at);
      if (call.method === 'eth_getStorageAt')
        read.slots.add(`${address}|${numberToHex(BigInt(hexParam(params[1], `${where}[1]`)), { size: 32 })}`);
      else read.accounts.add(address);
      if (call.method === 'eth_getBalance') return numberToHex(state.balance(address));
      if (call.method === 'eth_getTransactionCount') return numberToHex(state.nonce(address));
      if (call.method === 'eth_getCode') return state.code(address);
      return state.storage(address, hexParam(params[1], `${where}[1]`));
    }
    switch (call.method) {
      case 'eth_chainId':
        return numberToHex(options.chainId);
      case 'net_version':
        return String(options.chainId);
      case 'eth_blockNumber':
        return numberToHex(forkBlock() + SAFE_BLOCK_DEPTH);
      case 'eth_getBlockByNumber':
        return shaped(ring.byNumber(blockNumberOf(params[0], `${where}[0]`)), params[1]);
      case 'eth_getBlockByHash':
        return shaped(ring.byHash(hexParam(params[0], `${where}[0]`)), params[1]);
      case 'eth_getTransactionByHash': {
        const found = ring.transaction(hexParam(params[0], `${where}[0]`));
        return found ? found.block.transactions[found.index] : null;
      }
      case 'eth_getTransactionReceipt': {
        const found = ring.transaction(hexParam(params[0], `${where}[0]`));
        return found ? (ring.receiptsOf(BigInt(found.block.number))?.[found.index] ?? null) : null;
      }
      case 'eth_getLogs': {
        const filter = (params[0] ?? {}) as Record<string, unknown>;
        const criteria = logFilterParam(filter, `${where}[0]`);
        if (typeof filter.blockHash === 'string') {
          const block = ring.byHash(hexParam(filter.blockHash, `${where}[0].blockHash`));
          return block ? ring.logs(BigInt(block.number), BigInt(block.number), criteria) : [];
        }
        const from = blockNumberOf(filter.fromBlock, `${where}[0].fromBlock`);
        const to = blockNumberOf(filter.toBlock, `${where}[0].toBlock`);
        return ring.logs(from, to < forkBlock() ? to : forkBlock(), criteria);
      }
      default:
        throw new MethodNotFoundError(call.method);
    }
  };
}

export async function startForkSource(options: ForkSourceOptions): Promise<EdrForkSource> {
  let forkBlock = 0n;
  const asked = new Map<string, number>();
  let read = { accounts: new Set<Hex>(), slots: new Set<string>() };
  const dispatch = forkSourceDispatch(options, () => forkBlock, {
    get accounts() {
      return read.accounts;
    },
    get slots() {
      return read.slots;
    },
  });
  const counted = (call: RpcCall) => {
    asked.set(call.method, (asked.get(call.method) ?? 0) + 1);
    return dispatch(call);
  };
  const server: Server = createServer((request, response) => {
    void readBody(
      request,
      response,
      8 * 1024 * 1024,
      () => '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too large"}}',
    ).then((text) => {
      if (text === undefined) return;
      handleText(text, counted, { maxBatch: 10_000 }).then(
        (body) => replyJson(response, 200, body),
        () => replyJson(response, 500, null),
      );
    });
  });
  const url = await listenOnLoopback(server);
  return {
    url,
    setForkBlock(number) {
      forkBlock = number;
    },
    asked,
    drainRead() {
      const out = read;
      read = { accounts: new Set(), slots: new Set() };
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
