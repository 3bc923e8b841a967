import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Hex } from 'viem';
import { WebSocketServer, type WebSocket } from 'ws';
import { InvalidParamsError } from '../../src/errors.ts';
import { logFilterParam, matchesFilter, objectParam, type LogFilter } from '../../src/rpc/params.ts';
import { handleText, type RpcCall } from '../../src/jsonrpc/protocol.ts';
import type { DenimBlock } from './denim-producer.ts';
import { withBlockMillis, withMillis, type DenimHeads } from './denim-rpc.ts';
import type { Engine } from './edr-chain.ts';
import { shapeHeader } from './op-geth-shape.ts';

/**
 * The Denim devnet's JSON-RPC over WebSocket, on the HTTP port (as a node serves both): every
 * method of the HTTP dispatch, plus `eth_subscribe("newHeads")` and `eth_subscribe("logs",
 * filter?)` as geth and reth send them. When the head is replaced, `logs` subscribers first get
 * every log of the replaced block again with `removed: true`, then the new block's logs.
 */
export interface DenimSubscriptions {
  /** Announces a block the producer mined (in order). */
  publish(block: DenimBlock): void;
  attach(server: Server, dispatch: (call: RpcCall) => Promise<unknown>): () => Promise<void>;
}

type Sub = { readonly kind: 'newHeads' } | { readonly kind: 'logs'; readonly filter: LogFilter };
type Json = Record<string, unknown>;

export function createDenimSubscriptions(options: { engine: Engine; heads: DenimHeads; logger: Logger }): DenimSubscriptions {
  const { engine, heads, logger } = options;
  const sockets = new Map<WebSocket, Map<string, Sub>>();
  /** Logs of the newest block announced, by its hash, for `removed: true` copies on a replacement. */
  let lastLogs: { hash: Hex; logs: Json[] } | null = null;
  let chain: Promise<void> = Promise.resolve();

  function notify(socket: WebSocket, id: string, result: unknown): void {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: id, result } }));
  }

  function broadcastLogs(logs: readonly Json[]): void {
    for (const [socket, subs] of sockets) {
      for (const [id, sub] of subs) {
        if (sub.kind !== 'logs') continue;
        for (const log of logs) if (matchesFilter(log as { address: string; topics: string[] }, sub.filter)) notify(socket, id, log);
      }
    }
  }

  async function announce(block: DenimBlock): Promise<void> {
    const header = await engine.call<Json | null>('eth_getBlockByHash', [block.hash, false]);
    if (!header) return; // replaced before it could be announced; its replacement follows
    const logs = (withMillis(heads, 'eth_getLogs', await engine.call('eth_getLogs', [{ blockHash: block.hash }])) ?? []) as Json[];
    if (block.replaced && lastLogs?.hash === block.replaced) broadcastLogs(lastLogs.logs.map((log) => ({ ...log, removed: true })));
    const rest = shapeHeader(withBlockMillis(heads, header) as Json);
    for (const [socket, subs] of sockets) for (const [id, sub] of subs) if (sub.kind === 'newHeads') notify(socket, id, rest);
    broadcastLogs(logs);
    lastLogs = { hash: block.hash, logs };
  }

  function subscribe(socket: WebSocket, params: unknown): string {
    const list = Array.isArray(params) ? params : [];
    const kind = list[0];
    let sub: Sub;
    if (kind === 'newHeads') sub = { kind };
    else if (kind === 'logs')
      sub = { kind, filter: logFilterParam(list[1] === undefined ? {} : objectParam(list[1], 'params[1]', 'a log filter'), 'params[1]') };
    else throw new InvalidParamsError(`eth_subscribe: params[0]: expected "newHeads" or "logs", got ${JSON.stringify(kind)}`);
    const id = `0x${randomBytes(16).toString('hex')}`;
    sockets.get(socket)?.set(id, sub);
    return id;
  }

  return {
    publish(block) {
      chain = chain
        .then(() => announce(block))
        .catch((error: unknown) =>
          logger.warn({ err: (error as Error).message, block: block.number }, 'devnet: a block could not be announced to subscribers'),
        );
    },
    attach(server, dispatch) {
      const wss = new WebSocketServer({ server, maxPayload: 8 * 1024 * 1024 });
      wss.on('connection', (socket) => {
        sockets.set(socket, new Map());
        const local = async (call: RpcCall): Promise<unknown> => {
          if (call.method === 'eth_subscribe') return subscribe(socket, call.params);
          if (call.method === 'eth_unsubscribe') {
            const [id] = Array.isArray(call.params) ? call.params : [];
            return sockets.get(socket)?.delete(String(id)) ?? false;
          }
          return dispatch(call);
        };
        socket.on('message', (data) => {
          void handleText(data.toString(), local, { maxBatch: 1000 }).then((body) => {
            if (body !== null && socket.readyState === socket.OPEN) socket.send(body);
          });
        });
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => socket.terminate());
      });
      return async () => {
        for (const socket of sockets.keys()) socket.terminate();
        sockets.clear();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      };
    },
  };
}
