import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { formatEndpoint, maxWriteBytes, parseEndpoint, writeFrame } from './transport.ts';

describe('enclave transport', () => {
  it('writes a frame in chunks of at most 28 KiB, length prefix first', async () => {
    const writes: Uint8Array[] = [];
    const socket = {
      write: (chunk: Uint8Array) => {
        writes.push(Uint8Array.from(chunk));
        return true;
      },
    } as unknown as Socket;
    const payload = Uint8Array.from({ length: 100_000 }, (_, i) => i % 251);
    await writeFrame(socket, payload);
    expect(maxWriteBytes).toBe(28 * 1024);
    expect(writes.every((chunk) => chunk.length <= 28 * 1024)).toBe(true);
    expect(writes.length).toBe(Math.ceil((payload.length + 4) / (28 * 1024)));
    const all = Buffer.concat(writes);
    expect(all.readUInt32BE(0)).toBe(100_000);
    expect(Buffer.compare(all.subarray(4), Buffer.from(payload))).toBe(0);
  });

  it('parses tcp:// and unix: endpoints and rejects anything else, naming the input', () => {
    expect(parseEndpoint('tcp://127.0.0.1:8000')).toEqual({ kind: 'tcp', host: '127.0.0.1', port: 8000 });
    expect(parseEndpoint('tcp://[::1]:8000')).toEqual({ kind: 'tcp', host: '::1', port: 8000 });
    expect(parseEndpoint('unix:/run/enclave.sock')).toEqual({ kind: 'unix', path: '/run/enclave.sock' });
    expect(parseEndpoint('unix:///run/enclave.sock')).toEqual({ kind: 'unix', path: '/run/enclave.sock' });
    expect(formatEndpoint(parseEndpoint('tcp://localhost:1'))).toBe('tcp://localhost:1');
    expect(() => parseEndpoint('vsock://3:8000')).toThrow(/got "vsock:\/\/3:8000", expected tcp:\/\/host:port or unix:\/path/);
    expect(() => parseEndpoint('tcp://h:70000')).toThrow(/port out of range/);
  });
});
