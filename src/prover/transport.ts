import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { unlinkSync } from 'node:fs';
import { FlashlogError, errorMessage } from '../errors.ts';
import { defaultMaxFrameBytes, encodeFrame, frameAccumulator } from '../wire/bincode.ts';
import type { Logger } from '../obs/logger.ts';

/**
 * The host <-> enclave transport: one request per connection, then close. A frame is a u32 BE
 * length and a bincode payload. Writes go out in chunks of at most 28 KiB, as Base's enclave and
 * host do to stay clear of a virtio-vsock corruption bug with large nonlinear buffers.
 * Transports here are TCP (`tcp://host:port`) and Unix sockets (`unix:/path`); vsock is Nitro-only.
 */
export const maxWriteBytes = 28 * 1024;

export type EnclaveEndpoint =
  { readonly kind: 'tcp'; readonly host: string; readonly port: number } | { readonly kind: 'unix'; readonly path: string };

/** @example parseEndpoint('tcp://127.0.0.1:8000'); parseEndpoint('unix:/run/enclave.sock') */
export function parseEndpoint(text: string): EnclaveEndpoint {
  const tcp = /^tcp:\/\/([^/:]+|\[[^\]]+\]):(\d{1,5})\/?$/.exec(text);
  if (tcp) {
    const port = Number(tcp[2]);
    if (port > 65535) throw new FlashlogError('ENDPOINT_INVALID', `enclave endpoint ${text}: port out of range`);
    return { kind: 'tcp', host: tcp[1]!.replace(/^\[|\]$/g, ''), port };
  }
  const unix = /^unix:(?:\/\/)?(\/.+)$/.exec(text);
  if (unix) return { kind: 'unix', path: unix[1]! };
  throw new FlashlogError('ENDPOINT_INVALID', `enclave endpoint: got "${text}", expected tcp://host:port or unix:/path`);
}

export const formatEndpoint = (endpoint: EnclaveEndpoint): string =>
  endpoint.kind === 'tcp' ? `tcp://${endpoint.host}:${endpoint.port}` : `unix:${endpoint.path}`;

/** Writes a whole frame in ≤28 KiB chunks, waiting for drain when the socket buffers fill. */
export async function writeFrame(socket: Socket, payload: Uint8Array): Promise<void> {
  const frame = encodeFrame(payload);
  for (let at = 0; at < frame.length; at += maxWriteBytes) {
    const chunk = frame.subarray(at, at + maxWriteBytes);
    if (!socket.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        const onDrain = () => {
          socket.off('close', onClose);
          resolve();
        };
        const onClose = () => {
          socket.off('drain', onDrain);
          reject(new FlashlogError('ENCLAVE_CLOSED', 'connection closed while writing a frame', { retryable: true }));
        };
        socket.once('drain', onDrain);
        socket.once('close', onClose);
      });
    }
  }
}

/** Reads one frame; rejects on close before a whole frame, on timeout, or on an oversized length. */
export function readFrame(
  socket: Socket,
  timeoutMs: number | undefined,
  what: string,
  maxFrameBytes = defaultMaxFrameBytes,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const accumulator = frameAccumulator(maxFrameBytes);
    let timer: NodeJS.Timeout | undefined;
    const done = (error: Error | undefined, payload?: Uint8Array) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onError);
      if (error) reject(error);
      else resolve(payload!);
    };
    const onData = (chunk: Buffer) => {
      try {
        const payload = accumulator.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if (payload) done(undefined, payload);
      } catch (error) {
        done(error as Error);
      }
    };
    const onClose = () =>
      done(
        new FlashlogError('ENCLAVE_CLOSED', `${what}: connection closed after ${accumulator.buffered()} bytes, before a whole frame`, {
          retryable: true,
        }),
      );
    const onError = (error: Error) => done(new FlashlogError('ENCLAVE_IO', `${what}: ${error.message}`, { retryable: true, cause: error }));
    if (timeoutMs !== undefined) {
      timer = setTimeout(
        () => done(new FlashlogError('ENCLAVE_TIMEOUT', `${what}: no complete frame within ${timeoutMs} ms`, { retryable: true })),
        timeoutMs,
      );
    }
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onError);
  });
}

export interface FrameServer {
  readonly endpoint: EnclaveEndpoint;
  close(): Promise<void>;
}

/**
 * Serves one request frame per connection: reads it (within `requestTimeoutMs`), answers with
 * `handle(payload)`, writes the reply frame, closes.
 */
export async function serveFrames(options: {
  endpoint: EnclaveEndpoint;
  handle: (payload: Uint8Array) => Promise<Uint8Array>;
  /** Payload sent back when the request frame cannot be read (bad length, timeout). */
  onBadFrame?: (error: Error) => Uint8Array | undefined;
  requestTimeoutMs?: number;
  maxFrameBytes?: number;
  logger?: Logger;
}): Promise<FrameServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    (async () => {
      let reply: Uint8Array | undefined;
      try {
        const payload = await readFrame(socket, options.requestTimeoutMs ?? 5 * 60_000, 'enclave request', options.maxFrameBytes);
        reply = await options.handle(payload);
      } catch (error) {
        options.logger?.warn({ err: errorMessage(error) }, 'enclave request frame refused');
        reply = options.onBadFrame?.(error as Error);
      }
      if (reply && !socket.destroyed) await writeFrame(socket, reply);
      socket.end();
    })().catch((error: unknown) => {
      options.logger?.warn({ err: errorMessage(error) }, 'enclave connection failed');
      socket.destroy();
    });
  });
  const endpoint = options.endpoint;
  if (endpoint.kind === 'unix') {
    try {
      unlinkSync(endpoint.path);
    } catch {
      /* not there */
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (endpoint.kind === 'tcp') server.listen(endpoint.port, endpoint.host, () => resolve());
    else server.listen(endpoint.path, () => resolve());
  });
  const address = server.address();
  const bound: EnclaveEndpoint =
    endpoint.kind === 'tcp' && address && typeof address === 'object' ? { kind: 'tcp', host: endpoint.host, port: address.port } : endpoint;
  return {
    endpoint: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** One request/reply exchange with a frame server. */
export async function exchangeFrame(
  endpoint: EnclaveEndpoint,
  payload: Uint8Array,
  options: { connectTimeoutMs?: number; responseTimeoutMs?: number; signal?: AbortSignal; maxFrameBytes?: number } = {},
): Promise<Uint8Array> {
  const where = formatEndpoint(endpoint);
  const socket =
    endpoint.kind === 'tcp' ? createConnection({ host: endpoint.host, port: endpoint.port }) : createConnection({ path: endpoint.path });
  const abort = () => socket.destroy(new FlashlogError('ENCLAVE_ABORTED', `enclave ${where}: request aborted`));
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new FlashlogError('ENCLAVE_UNREACHABLE', `enclave ${where}: connect timed out after ${options.connectTimeoutMs ?? 5000} ms`, {
            retryable: true,
          }),
        );
      }, options.connectTimeoutMs ?? 5000);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(new FlashlogError('ENCLAVE_UNREACHABLE', `enclave ${where}: ${error.message}`, { retryable: true, cause: error }));
      });
    });
    const reading = readFrame(socket, options.responseTimeoutMs, `enclave ${where} response`, options.maxFrameBytes);
    reading.catch(() => undefined);
    await writeFrame(socket, payload);
    return await reading;
  } finally {
    options.signal?.removeEventListener('abort', abort);
    socket.destroy();
  }
}
