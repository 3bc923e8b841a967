import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { RpcLog } from '../../records/logs.ts';
import { createLogFanout } from './log-fanout.ts';
import { createSocketWriter } from './socket-writer.ts';

/** A connection that records the frames written to it, with as many unsent bytes as the test says. */
function fakeSocket(bufferedAmount = 0) {
  const writes: Buffer[] = [];
  const closed: [number, string][] = [];
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount,
    _socket: { write: (data: Buffer) => writes.push(data) > 0, cork() {}, uncork() {} },
    send() {},
    close: (code: number, reason: string) => closed.push([code, reason]),
    terminate() {},
  };
  return { socket: socket as unknown as WebSocket, writes, closed };
}

const log = (i: number) =>
  ({ address: `0x${'11'.repeat(20)}`, topics: [], data: '0x', logIndex: `0x${i.toString(16)}` }) as unknown as RpcLog;

describe('log fan-out', () => {
  it('closes a subscriber whose unsent bytes pass the limit (1008, with the reason) and still writes the others', async () => {
    const metrics = new Registry();
    const writer = createSocketWriter({ maxBufferedBytes: 1000, logger: pino({ level: 'silent' }), metrics });
    const fanout = createLogFanout(writer, pino({ level: 'silent' }), metrics);
    const slow = fakeSocket(1001);
    const fine = fakeSocket(0);
    fanout.add({ id: `0x${'a'.repeat(32)}`, kind: 'pendingLogs', socket: slow.socket, filter: null });
    fanout.add({ id: `0x${'b'.repeat(32)}`, kind: 'pendingLogs', socket: fine.socket, filter: null });
    fanout.queue([log(0), log(1)]);
    fanout.queue([log(2)]);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(slow.closed).toEqual([[1008, 'subscriber too slow: 1001 bytes unsent exceeds 1000']]);
    expect(slow.writes).toHaveLength(0);
    const frames = Buffer.concat(fine.writes).toString('utf8');
    expect(frames.match(/"logIndex":"0x[0-9a-f]+"/g)).toEqual(['"logIndex":"0x0"', '"logIndex":"0x1"', '"logIndex":"0x2"']);
    expect((await metrics.getSingleMetricAsString('flashlog_ws_slow_disconnects_total')).trim().split('\n').pop()).toBe(
      'flashlog_ws_slow_disconnects_total 1',
    );
    const fanoutCount = (await metrics.getSingleMetric('flashlog_ws_log_fanout_seconds')!.get()).values.find(
      (value) => (value as { metricName?: string }).metricName === 'flashlog_ws_log_fanout_seconds_count',
    );
    expect(fanoutCount?.value).toBeGreaterThanOrEqual(1);
  });

  it("judges a corked connection by what it leaves unsent after uncorking, not by this turn's corked bytes", () => {
    const writer = createSocketWriter({ maxBufferedBytes: 1000, logger: pino({ level: 'silent' }), metrics: new Registry() });
    /** 1,500 bytes corked; uncorked, the kernel takes them all (`drains`) or leaves 1,200 unsent. */
    const corkedSocket = (drains: boolean) => {
      const { socket, closed } = fakeSocket();
      let corked = false;
      const raw = { write: () => true, cork: () => (corked = true), uncork: () => (corked = false) };
      Object.assign(socket, { _socket: raw });
      Object.defineProperty(socket, 'bufferedAmount', { get: () => (corked ? 1500 : drains ? 0 : 1200) });
      return { socket, closed, isCorked: () => corked };
    };
    const draining = corkedSocket(true);
    writer.cork(draining.socket);
    expect(writer.writable(draining.socket)).toBe(true);
    expect(draining.isCorked()).toBe(false);
    expect(draining.closed).toEqual([]);
    const stuck = corkedSocket(false);
    writer.cork(stuck.socket);
    expect(writer.writable(stuck.socket)).toBe(false);
    expect(stuck.closed).toEqual([[1008, 'subscriber too slow: 1200 bytes unsent exceeds 1000']]);
  });
});
