import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { decodeErrorResult, fromRlp, isHex } from 'viem';
import { z } from 'zod';
import { ExecutionRevertedError, InvalidParamsError, JsonRpcError, MethodNotFoundError, ServerError } from '../../src/errors.ts';
import { parseParam } from '../../src/schemas/issue.ts';
import { answerMetrics, type Registry } from '../../src/obs/metrics.ts';
import { readBody, replyJson } from '../../src/jsonrpc/edge.ts';
import { handleText, type RpcCall } from '../../src/jsonrpc/protocol.ts';
import { hash32, hexBytes } from '../../src/schemas/hex.ts';
import type { Engine } from './edr-chain.ts';
import type { Producer } from './producer.ts';
import { createOpGethShape, pendingBlockAsLatest } from './op-geth-shape.ts';
import { createSealedFilters } from './sealed-filters.ts';
import { atSealedHead, hideTrialBlocks } from './sealed-view.ts';

/**
 * The devnet's JSON-RPC over HTTP: EDR answers the standard methods; the devnet adds
 * eth_sendRawTransaction (held until the next flashblock; deposits wait for the next block's
 * index 0) and eth_getBlockReceipts (EDR lacks it). Methods that would move the chain behind the
 * producer's back (evm_*, hardhat_*) are refused. Blocks and transactions are answered in
 * op-geth's shape (op-geth-shape.ts), whichever devnet mode serves them.
 */
export interface RpcServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_BATCH = 1000;

const sendRawParams = z.tuple([hexBytes.refine((raw) => raw.length > 2, 'expected a non-empty transaction')]);
const blockId = z.union([
  z.enum(['latest', 'earliest', 'pending', 'safe', 'finalized']),
  z.string().regex(/^0x[0-9a-fA-F]{1,16}$/, 'expected a block number'),
  hash32,
]);
const blockReceiptsParams = z.tuple([blockId]);
const paramsArray = z.array(z.unknown()).optional();

function parseParams<T>(schema: z.ZodType<T>, params: unknown, method: string): T {
  return parseParam(schema, params ?? [], `${method}: params`);
}

/** A deposit is only queued (for the next block's index 0) if it is at least well-formed. Returns its from. */
function checkDeposit(raw: `0x${string}`): string {
  let fields: unknown;
  try {
    fields = fromRlp(`0x${raw.slice(4)}`);
  } catch (error) {
    throw new InvalidParamsError(
      `eth_sendRawTransaction: params[0]: a deposit (0x7e) whose RLP does not decode: ${(error as Error).message}`,
    );
  }
  if (!Array.isArray(fields) || fields.length !== 8 || fields.some((field) => typeof field !== 'string')) {
    throw new InvalidParamsError(
      'eth_sendRawTransaction: params[0]: a deposit (0x7e) must be rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data])',
    );
  }
  const [source, from] = fields as string[];
  if (source!.length !== 66 || from!.length !== 42) {
    throw new InvalidParamsError('eth_sendRawTransaction: params[0]: a deposit (0x7e) needs a 32-byte sourceHash and a 20-byte from');
  }
  return from!;
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * EDR charges the OP L1 data fee inside eth_call, so a call from an account without ETH (and a
 * call without `from`, which runs as the zero address) fails with "Sender doesn't have enough
 * funds", where op-geth and op-reth answer. A call without `from` therefore runs as the zero
 * address with a balance override (unless the caller overrides that account itself).
 */
function withCallerFunds(params: readonly unknown[]): unknown[] {
  const [request, block, overrides, ...rest] = params;
  if (typeof request !== 'object' || request === null || 'from' in request) return [...params];
  const given = (typeof overrides === 'object' && overrides !== null ? overrides : {}) as Record<string, unknown>;
  if (Object.keys(given).some((address) => address.toLowerCase() === ZERO_ADDRESS)) return [...params];
  return [
    { ...request, from: ZERO_ADDRESS },
    block ?? 'latest',
    { ...given, [ZERO_ADDRESS]: { balance: '0xffffffffffffffffffffffffffffffff' } },
    ...rest,
  ];
}

/**
 * A failed eth_call / eth_estimateGas as op-geth and op-reth answer it: a revert is code 3,
 * `execution reverted` (with the Error(string) reason appended when there is one) and the revert
 * data as `data`; any other failure (out of gas, invalid opcode) is -32000 with EDR's message.
 * EDR itself answers -32000 with a Hardhat-style message and an object in `data`.
 */
export function asNodeCallError(error: unknown): never {
  if (!(error instanceof JsonRpcError)) throw error;
  const detail = error.data as { reason?: { Revert?: unknown } } | null | undefined;
  const revert = detail?.reason?.Revert;
  if (typeof revert === 'string' && isHex(revert)) {
    let reason = '';
    try {
      const decoded = decodeErrorResult({ data: revert });
      if (decoded.errorName === 'Error') reason = `: ${String(decoded.args[0])}`;
    } catch {
      // empty or custom revert data: no reason text
    }
    throw new ExecutionRevertedError(`execution reverted${reason}`, revert);
  }
  throw new ServerError(error.message);
}

function createDevnetDispatch(engine: Engine, producer: Producer, sendAnswerDelayMs = 0): (call: RpcCall) => Promise<unknown> {
  const filters = createSealedFilters();
  const shape = createOpGethShape();
  return async (call) => {
    const method = call.method;
    if (/^(evm|hardhat)_/.test(method)) {
      throw new MethodNotFoundError(
        method,
        `the method ${method} is not served by the devnet: it would move the chain behind the block producer`,
      );
    }
    if (method === 'eth_sendRawTransaction') {
      const [raw] = parseParams(sendRawParams, call.params, method);
      if (raw.startsWith('0x7e')) {
        const from = checkDeposit(raw as `0x${string}`);
        const nonce = await engine.call<string>('eth_getTransactionCount', [from, 'pending']);
        if (BigInt(nonce) !== 0n) {
          throw new InvalidParamsError(
            `eth_sendRawTransaction: params[0]: the deposit's from ${from} has nonce ${BigInt(nonce)}; the devnet (EDR) takes deposits only from accounts with nonce 0, use a fresh from`,
          );
        }
        return producer.submitDeposit(raw as `0x${string}`);
      }
      const hash = await producer.submit(raw as `0x${string}`);
      if (sendAnswerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, sendAnswerDelayMs));
      return hash;
    }
    if (method === 'eth_getBlockReceipts') {
      const [id] = pendingBlockAsLatest(method, parseParams(blockReceiptsParams, call.params, method)) as [string];
      return engine.exclusive(async (rpc) => {
        const head = producer.sealedHead?.();
        const at = head === undefined || id.length === 66 ? { params: [id] } : atSealedHead(head, method, [id]);
        if ('answer' in at) return at.answer;
        const found = await rpc<{ number: string; transactions: string[] } | null>(
          id.length === 66 ? 'eth_getBlockByHash' : 'eth_getBlockByNumber',
          [at.params[0], false],
        );
        const block = head === undefined ? found : (hideTrialBlocks(head, 'eth_getBlockByHash', found) as typeof found);
        if (!block) return null;
        const receipts: unknown[] = [];
        for (const hash of block.transactions) receipts.push(await rpc('eth_getTransactionReceipt', [hash]));
        return receipts;
      });
    }
    const params = pendingBlockAsLatest(method, parseParams(paramsArray, call.params, method) ?? []);
    const answered = await engine
      .exclusive(async (rpc) => {
        // The flashblocks devnet answers as of its sealed head (see sealed-view.ts); the Denim one has no trial blocks.
        const head = producer.sealedHead?.();
        if (head !== undefined && filters.handles(method)) return filters.answer(rpc, head, method, params);
        const at = head === undefined ? { params } : atSealedHead(head, method, params);
        if ('answer' in at) return at.answer;
        const result = await rpc(method, method === 'eth_call' ? withCallerFunds(at.params) : at.params);
        return shape.answer(rpc, method, head === undefined ? result : hideTrialBlocks(head, method, result));
      })
      .catch((error: unknown) => {
        if (method === 'eth_call' || method === 'eth_estimateGas') asNodeCallError(error);
        // EDR answers a method it lacks with -32004; nodes (and the spec) answer -32601.
        if (error instanceof JsonRpcError && error.rpcCode === -32004) throw new MethodNotFoundError(method);
        throw error;
      });
    return answered;
  };
}

export async function startRpcServer(options: {
  host: string;
  port: number;
  engine: Engine;
  producer: Producer;
  logger: Logger;
  /** Serve `GET /metrics` from this registry on the JSON-RPC port. */
  metrics?: Registry | undefined;
  /** Testing: hold each eth_sendRawTransaction answer this many ms (see DevnetOptions.preconfirmOnSubmit). */
  sendAnswerDelayMs?: number;
  /** Wraps the devnet's dispatch (the Denim devnet adds its fields and tags). */
  wrap?: (dispatch: (call: RpcCall) => Promise<unknown>) => (call: RpcCall) => Promise<unknown>;
  /** Attaches more to the HTTP server (the Denim devnet's WebSocket on the same port); returns its closer. */
  attach?: (server: Server, dispatch: (call: RpcCall) => Promise<unknown>) => () => Promise<void>;
}): Promise<RpcServer> {
  const plain = createDevnetDispatch(options.engine, options.producer, options.sendAnswerDelayMs ?? 0);
  const dispatch = options.wrap ? options.wrap(plain) : plain;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (options.metrics && answerMetrics(options.metrics, request, response)) return;
    const reply = (status: number, body: string | null) => replyJson(response, status, body);
    if (request.method !== 'POST') {
      reply(
        405,
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `invalid request: HTTP ${request.method}: expected POST with a JSON-RPC body` },
        }),
      );
      return;
    }
    const tooLarge = () =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: `invalid request: body exceeds ${MAX_BODY_BYTES} bytes` },
      });
    void readBody(request, response, MAX_BODY_BYTES, tooLarge).then((text) => {
      if (text === undefined) return;
      handleText(text, dispatch, { maxBatch: MAX_BATCH }).then(
        (body) => reply(body === null ? 204 : 200, body),
        (error: unknown) => {
          options.logger.error({ err: error }, 'devnet: JSON-RPC handler failed');
          reply(500, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error' } }));
        },
      );
    });
    request.on('error', () => response.destroy());
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const detach = options.attach?.(server, dispatch);
  return {
    port,
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        void detach?.();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
