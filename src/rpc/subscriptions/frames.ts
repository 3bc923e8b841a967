import type { WebSocket } from 'ws';
import type { RpcLog } from '../../records/logs.ts';
import { matchesFilter, type LogFilter } from '../params.ts';
import type { RawSocket } from './socket-writer.ts';

/** One batch of logs (a flashblock's new logs, or a reorg's withdrawn ones), each serialized once when first needed. */
export interface LogBatch {
  readonly seq: number;
  readonly logs: readonly RpcLog[];
  /** performance.now() when it was queued. */
  readonly queuedAt: number;
  /** Each log's JSON + `}}` (what follows a subscriber's notification prefix). */
  readonly bodies: (Buffer | undefined)[];
}

/**
 * The header of one unmasked, final WebSocket text frame (RFC 6455 5.2) with `length` payload
 * bytes. Written by hand because `ws` frames only what it sends itself, and the log fan-out writes
 * frames assembled once for many connections.
 */
export function textFrameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x81, length]);
  if (length < 65536) return Buffer.from([0x81, 126, length >> 8, length & 0xff]);
  const header = Buffer.alloc(10);
  header[0] = 0x81;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}

/**
 * Writes the logs of `batches` that pass `filter` (null: all) as one WebSocket text frame each,
 * `prefix` + the log's JSON, in one write to the connection's raw socket (or one `send` per frame
 * without one); the number of notifications written.
 */
export function writeLogFrames(
  socket: WebSocket,
  raw: RawSocket | undefined,
  batches: readonly LogBatch[],
  filter: LogFilter | null,
  prefix: Buffer,
): number {
  const parts: Buffer[] = [];
  for (const batch of batches) {
    for (let i = 0; i < batch.logs.length; i++) {
      if (filter && !matchesFilter(batch.logs[i]!, filter)) continue;
      const body = (batch.bodies[i] ??= Buffer.from(`${JSON.stringify(batch.logs[i])}}}`));
      parts.push(textFrameHeader(prefix.length + body.length), prefix, body);
    }
  }
  if (parts.length === 0) return 0;
  if (raw) raw.write(Buffer.concat(parts));
  else for (let i = 0; i < parts.length; i += 3) socket.send(Buffer.concat([parts[i + 1]!, parts[i + 2]!]).toString('utf8'));
  return parts.length / 3;
}
