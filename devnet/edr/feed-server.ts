import { brotliCompressSync, constants as zlib } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * The devnet's flashblocks WebSocket: every message goes to every connected client, as Base's
 * websocket-proxy does (no replay: a client sees the stream from the moment it connects).
 * Frames are brotli-compressed binary (quality 5, window 22, as the proxy's --enable-compression)
 * or, with `plain`, text frames of the JSON.
 */
export interface FeedServer {
  readonly port: number;
  readonly url: string;
  broadcast(message: unknown): void;
  clientCount(): number;
  close(): Promise<void>;
}

export function encodeFlashblockFrame(message: unknown, plain: boolean): string | Buffer {
  const json = JSON.stringify(message);
  if (plain) return json;
  return brotliCompressSync(json, {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_LGWIN]: 22, [zlib.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(json) },
  });
}

export async function startFeedServer(options: { host: string; port: number; plain: boolean; logger: Logger }): Promise<FeedServer> {
  const server = new WebSocketServer({ host: options.host, port: options.port, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.on('error', (error) => options.logger.error({ err: error }, 'devnet: flashblocks WebSocket server error'));
  server.on('connection', (socket: WebSocket) => {
    socket.on('error', (error) => options.logger.debug({ err: error.message }, 'devnet: flashblocks client error'));
    // Clients have nothing to say; whatever they send is ignored, as on Base.
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `ws://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    broadcast(message) {
      if (server.clients.size === 0) return;
      const frame = encodeFlashblockFrame(message, options.plain);
      for (const client of server.clients) {
        if (client.readyState === client.OPEN) client.send(frame, { binary: typeof frame !== 'string' });
      }
    },
    clientCount: () => server.clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
