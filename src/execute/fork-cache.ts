import { createServer, type IncomingMessage, type Server } from 'node:http';
import { InvalidRequestError, JsonRpcError, ParseError, errorMessage } from '../errors.ts';
import { errorResponse, parseMessage, readableId } from '../jsonrpc/protocol.ts';
import { listenOnLoopback } from '../jsonrpc/edge.ts';
import { exchange, exchangeBatch, exchangeError, upstreamLabel } from '../jsonrpc/upstream.ts';

/**
 * A caching, de-duplicating JSON-RPC proxy between EDR's fork client and the upstream.
 *
 * EDR reads forked state lazily, one account or slot at a time, always at a fixed block number.
 * Such an answer never changes, so it is cached, and a request already on its way is shared, not
 * sent twice. A new fork at the same block (a rebuild after a receipts_root mismatch) then reads
 * nothing from the upstream. Anything not pinned to a block number (latest, pending, a method we
 * do not know) goes through uncached.
 *
 * State reads (balance, nonce, code, storage, proofs) are kept for the newest `stateBlocks` block
 * numbers only: each fork reads at its own block, and the executor forks forward (at the canonical
 * parent, every 32 blocks), so the answers at an older fork block are never asked again. Kept for
 * good, they took about 340 bytes each, ~2,300 a minute at load 30 on the devnet (one fork's
 * ~1,900 reads every ~50 s), until the 200,000 bound after an hour and a half: ~68 MB of heap.
 * Headers, transactions by hash and the chain id (few) stay, oldest evicted past `maxEntries`.
 *
 * EDR speaks to it over 127.0.0.1 HTTP because EDR's fork client only takes a URL.
 */
export interface ForkCache {
  readonly url: string;
  readonly stats: { hits: number; misses: number; shared: number; upstreamRequests: number; byMethod: Map<string, number> };
  /** Answers held now. */
  cachedAnswers(): number;
  /** Accounts and storage slots EDR asked for since the last call (to pin them locally). */
  drainRequested(): { accounts: Set<string>; slots: Set<string> };
  close(): Promise<void>;
}

export interface ForkCacheOptions {
  readonly upstreamUrl: string;
  readonly timeoutMs: number;
  /** Most cached answers that are not state reads (headers, transactions by hash; default 20,000). */
  readonly maxEntries?: number;
  /** State reads are kept for this many block numbers, the newest (default 4). */
  readonly stateBlocks?: number;
}

/** A call EDR's fork client makes (its envelope read by jsonrpc/protocol.ts, params an array). */
interface JsonRpcRequest {
  readonly method: string;
  readonly params?: readonly unknown[] | undefined;
}

const pinned = (tag: unknown): boolean =>
  (typeof tag === 'string' && /^0x[0-9a-fA-F]+$/.test(tag)) ||
  (typeof tag === 'object' && tag !== null && ('blockNumber' in tag || 'blockHash' in tag));

const stateMethods = new Set(['eth_getBalance', 'eth_getTransactionCount', 'eth_getCode', 'eth_getStorageAt', 'eth_getProof']);

/** The block number a state read is pinned to (a hex number tag), or null (a hash, an object, not a state read). */
function stateBlock(request: JsonRpcRequest): bigint | null {
  if (!stateMethods.has(request.method)) return null;
  const params = request.params ?? [];
  const tag = params[params.length - 1];
  return typeof tag === 'string' && /^0x[0-9a-fA-F]+$/.test(tag) ? BigInt(tag) : null;
}

/**
 * Answers that cannot change: state reads by block number (the newest `stateBlocks` numbers, older
 * ones dropped whole), and the rest FIFO-bounded by `maxEntries`.
 */
function answerStore(maxEntries: number, stateBlocks: number) {
  type Reply = { result?: unknown; error?: unknown };
  const byBlock = new Map<bigint, Map<string, Reply>>();
  const other = new Map<string, Reply>();
  return {
    get(key: string, block: bigint | null): Reply | undefined {
      return block === null ? other.get(key) : byBlock.get(block)?.get(key);
    },
    set(key: string, block: bigint | null, reply: Reply): void {
      if (block === null) {
        other.set(key, reply);
        if (other.size > maxEntries) other.delete(other.keys().next().value!);
        return;
      }
      let answers = byBlock.get(block);
      if (!answers) {
        if (byBlock.size >= stateBlocks) {
          const oldest = [...byBlock.keys()].reduce((low, number) => (number < low ? number : low));
          // An answer at a block older than every one kept is not kept (nothing forks back there).
          if (block < oldest) return;
          byBlock.delete(oldest);
        }
        answers = new Map();
        byBlock.set(block, answers);
      }
      answers.set(key, reply);
    },
    get size(): number {
      let total = other.size;
      for (const answers of byBlock.values()) total += answers.size;
      return total;
    },
  };
}

/** The cache key of a request whose answer cannot change, or null. */
export function cacheKey(request: JsonRpcRequest): string | null {
  const params = request.params ?? [];
  switch (request.method) {
    case 'eth_chainId':
    case 'net_version':
      return request.method;
    case 'eth_getBalance':
    case 'eth_getTransactionCount':
    case 'eth_getCode':
    case 'eth_getStorageAt':
    case 'eth_getProof':
      return pinned(params[params.length - 1]) ? `${request.method}:${JSON.stringify(params).toLowerCase()}` : null;
    case 'eth_getBlockByNumber':
      return pinned(params[0]) ? `${request.method}:${JSON.stringify(params).toLowerCase()}` : null;
    case 'eth_getBlockByHash':
    case 'eth_getTransactionByHash':
      return `${request.method}:${JSON.stringify(params).toLowerCase()}`;
    default:
      return null;
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function createForkCache(options: ForkCacheOptions): Promise<ForkCache> {
  const cache = answerStore(options.maxEntries ?? 20_000, options.stateBlocks ?? 4);
  const inFlight = new Map<string, Promise<{ result?: unknown; error?: unknown }>>();
  const stats = { hits: 0, misses: 0, shared: 0, upstreamRequests: 0, byMethod: new Map<string, number>() };
  let requestedAccounts = new Set<string>();
  let requestedSlots = new Set<string>();
  async function upstream(batch: readonly JsonRpcRequest[]): Promise<{ result?: unknown; error?: unknown }[]> {
    stats.upstreamRequests++;
    const calls = batch.map((request) => ({ method: request.method, params: request.params ?? [] }));
    // One call goes as itself, not as a batch of one (what EDR's single reads are).
    const answers =
      calls.length === 1
        ? [await exchange(options.upstreamUrl, calls[0]!.method, calls[0]!.params, { timeoutMs: options.timeoutMs })]
        : await exchangeBatch(options.upstreamUrl, calls, { timeoutMs: options.timeoutMs });
    return answers.map((answer, i) => {
      if (answer.kind === 'result') return { result: answer.result };
      if (answer.kind === 'error')
        return {
          error:
            answer.data === undefined
              ? { code: answer.code, message: answer.message }
              : { code: answer.code, message: answer.message, data: answer.data },
        };
      // EDR's fork client reads an error object; a failure of the whole batch is every call's.
      const failure = exchangeError(answer, calls[i]!.method, { label: upstreamLabel(options.upstreamUrl), timeoutMs: options.timeoutMs });
      return { error: { code: failure.rpcCode, message: failure.message } };
    });
  }

  async function answer(requests: readonly JsonRpcRequest[]): Promise<{ result?: unknown; error?: unknown }[]> {
    const out: ({ result?: unknown; error?: unknown } | Promise<{ result?: unknown; error?: unknown }>)[] = [];
    const misses: { at: number; key: string | null; block: bigint | null; request: JsonRpcRequest }[] = [];
    requests.forEach((request, at) => {
      stats.byMethod.set(request.method, (stats.byMethod.get(request.method) ?? 0) + 1);
      const target = request.params?.[0];
      if (typeof target === 'string') {
        if (request.method === 'eth_getStorageAt' && typeof request.params?.[1] === 'string')
          requestedSlots.add(`${target.toLowerCase()}|${request.params[1]}`);
        else if (request.method === 'eth_getBalance' || request.method === 'eth_getTransactionCount' || request.method === 'eth_getCode')
          requestedAccounts.add(target.toLowerCase());
      }
      const key = cacheKey(request);
      const block = stateBlock(request);
      const hit = key === null ? undefined : cache.get(key, block);
      if (hit) {
        stats.hits++;
        out[at] = hit;
        return;
      }
      const pending = key === null ? undefined : inFlight.get(key);
      if (pending) {
        stats.shared++;
        out[at] = pending;
        return;
      }
      stats.misses++;
      misses.push({ at, key, block, request });
    });
    if (misses.length > 0) {
      const fetched = upstream(misses.map((miss) => miss.request));
      misses.forEach((miss, i) => {
        const one = fetched.then((replies) => replies[i]!);
        out[miss.at] = one;
        if (miss.key === null) return;
        const key = miss.key;
        inFlight.set(key, one);
        one
          .then(
            (reply) => {
              // A null answer (a block not there yet) may change: only real answers are kept.
              if (reply.error === undefined && reply.result !== null && reply.result !== undefined) {
                cache.set(key, miss.block, reply);
              }
            },
            () => undefined,
          )
          .finally(() => inFlight.delete(key));
      });
    }
    return Promise.all(out);
  }

  const server: Server = createServer((request, response) => {
    readBody(request)
      .then(async (text) => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(errorResponse(null, new ParseError())));
          return;
        }
        // The one envelope parser; the calls are then answered together, so the misses of a batch
        // go upstream as one batch.
        const calls = parseMessage(body, { maxBatch: Number.POSITIVE_INFINITY });
        if (calls instanceof JsonRpcError) {
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(errorResponse(readableId(body), calls)));
          return;
        }
        const batch = Array.isArray(body);
        const items = (batch ? body : [body]) as unknown[];
        const parsed = calls.map((call) =>
          call instanceof JsonRpcError || call.params === undefined || Array.isArray(call.params)
            ? call
            : new InvalidRequestError(`invalid request: params: expected an array, got ${JSON.stringify(call.params).slice(0, 40)}`),
        );
        const valid = parsed.flatMap((call) =>
          call instanceof JsonRpcError ? [] : [{ method: call.method, params: call.params as readonly unknown[] | undefined }],
        );
        let replies: { result?: unknown; error?: unknown }[];
        try {
          replies = await answer(valid);
        } catch (error) {
          replies = valid.map(() => ({ error: { code: -32000, message: `upstream RPC unreachable: ${errorMessage(error)}` } }));
        }
        let next = 0;
        const out = parsed.map((call, i) => {
          if (call instanceof JsonRpcError) return errorResponse(readableId(items[i]), call);
          return { jsonrpc: '2.0', id: call.id ?? null, ...replies[next++] };
        });
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(batch ? out : out[0]));
      })
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500).end(errorMessage(error));
      });
  });
  const url = await listenOnLoopback(server);
  return {
    url,
    stats,
    cachedAnswers: () => cache.size,
    drainRequested() {
      const out = { accounts: requestedAccounts, slots: requestedSlots };
      requestedAccounts = new Set();
      requestedSlots = new Set();
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
