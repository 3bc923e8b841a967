import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import type { Context } from '../../src/context.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log, LogRecord } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import type { Executor } from '../../src/execute/port.ts';
import { createIngest, createIngestExecutor, type Ingest } from '../../streams/ingest.ts';

/**
 * flashlog's ingest of a flashblocks chain (executed, reconciled with canonical heads), in-process, over an in-memory embedded
 * log: the composition `flashlog ingest --ws URL --rpc URL` runs, with the pieces exposed.
 */
export interface FlashlogUnderTest {
  readonly log: Log;
  readonly executor: Executor;
  readonly ingest: Ingest;
  /** Shuts down and waits for everything accepted to be appended. */
  stop(): Promise<void>;
}

export async function startFlashlog(ctx: Context, options: { wsUrl: string; rpcUrl: string }): Promise<FlashlogUnderTest> {
  const log = createEmbeddedLog({ path: ':memory:' });
  await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
  const executor = await createIngestExecutor(ctx, options.rpcUrl);
  const ingest = createIngest(ctx, {
    log,
    endpoints: { source: 'flashblocks', feedUrls: [options.wsUrl], rpcUrl: options.rpcUrl },
    executor,
  });
  const done = ingest.run();
  // As `flashlog ingest` does: closed first, so the executor closes once the work in flight is done.
  ctx.shutdown.register('ingest', () => done.catch(() => {}));
  return {
    log,
    executor,
    ingest,
    async stop() {
      await ctx.shutdown.run('test over'); // closes the executor (registered with shutdown)
      await done;
      await ingest.publisher.flush();
    },
  };
}

/** Every record of a topic, from the first. */
export async function readTopic(log: Log, topic: string): Promise<LogRecord[]> {
  const [end] = await log.endOffsets(topic);
  const count = Number(end?.offset ?? 0n);
  if (count === 0) return [];
  const consumer = log.consumer({ topics: [topic], from: 'earliest' });
  try {
    return await firstValueFrom(
      consumer.records$.pipe(
        filter((record) => record.topic === topic),
        take(count),
        toArray(),
      ),
    );
  } finally {
    await consumer.close();
  }
}

/** An HTTP forwarder to `target` that can be taken down: while down it drops every connection. */
export async function startRpcProxy(target: string): Promise<{ url: string; setDown(down: boolean): void; close(): Promise<void> }> {
  let down = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    if (down) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (response) =>
          res.writeHead(response.status, { 'content-type': 'application/json' }).end(Buffer.from(await response.arrayBuffer())),
        )
        .catch(() => req.socket.destroy());
    });
  });
  server.on('connection', (socket) => {
    if (down) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setDown(value) {
      down = value;
      if (value) for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const allFlashlogTopics = allTopics;
