import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP forwarder to `host:port` that can be cut: while cut, every connection (open or new) is
 * destroyed without a close frame, as when a network path drops. For a node's WebSocket.
 */
export async function startTcpProxy(target: {
  host: string;
  port: number;
}): Promise<{ port: number; cut(on: boolean): void; close(): Promise<void> }> {
  let down = false;
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    cut(on) {
      down = on;
      if (on)
        for (const [client, upstream] of pairs) {
          client.destroy();
          upstream.destroy();
        }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [client, upstream] of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
