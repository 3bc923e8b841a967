import pino from 'pino';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { blockBuilder, signedTransfers } from '../../../test/helpers/view-records.ts';
import { apply, initialViewState, type ViewState } from '../../view/state.ts';
import { createTransactionFormatter } from '../format.ts';
import { createSubscriptionHub } from './hub.ts';

/**
 * The subscription hub's pendingLogs writer with recording sockets: many subscribers (more than
 * one write slice), flashblocks arriving while a fan-out is under way, an unsubscribe mid-way, and
 * a connection with logs and blocks subscriptions.
 */

/** The payloads of the WebSocket text frames in `data` (unmasked, as a server writes them). */
function framesOf(data: Buffer): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < data.length) {
    let length = data[at + 1]! & 0x7f;
    let header = 2;
    if (length === 126) {
      length = data.readUInt16BE(at + 2);
      header = 4;
    } else if (length === 127) {
      length = Number(data.readBigUInt64BE(at + 2));
      header = 10;
    }
    out.push(data.subarray(at + header, at + header + length).toString('utf8'));
    at += header + length;
  }
  return out;
}

function recordingSocket() {
  const messages: { subscription: string; result: { logIndex?: string; number?: string } }[] = [];
  /** write(2)s the connection would make: raw writes outside a cork, and each uncork of a corked run. */
  const calls = { writes: 0, corks: 0, uncorks: 0 };
  const record = (text: string) => messages.push((JSON.parse(text) as { params: (typeof messages)[number] }).params);
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    _socket: {
      write: (data: Buffer) => {
        calls.writes++;
        framesOf(data).forEach(record);
        return true;
      },
      cork: () => calls.corks++,
      uncork: () => calls.uncorks++,
    },
    send: (text: string) => record(text),
    close() {},
    terminate() {},
  };
  return { socket: socket as unknown as WebSocket, messages, calls };
}

async function setup(subscribers: number) {
  const states = new Subject<ViewState>();
  const hub = createSubscriptionHub({
    states$: states,
    formatter: createTransactionFormatter(),
    limits: { maxSubscriptions: 10, maxBufferedBytes: 1 << 20 },
    logger: pino({ level: 'silent' }),
    metrics: new Registry(),
  });
  const sockets = Array.from({ length: subscribers }, () => recordingSocket());
  const ids = sockets.map(({ socket }) => hub.subscribe(socket, ['pendingLogs']));
  let state = apply(initialViewState(), { type: 'head', blockNumber: 100n });
  let offset = 0n;
  const block = blockBuilder(101n);
  const txs = await signedTransfers(20);
  /** Appends the next flashblock (5 transactions, 2 logs each) and hands the new view states to the hub. */
  const flashblock = (fb: number) => {
    for (const record of block.flashblock(txs.slice(fb * 5, fb * 5 + 5), { logsPerTx: 2 })) {
      state = apply(state, {
        type: 'record',
        record: { ...record, key: record.key ?? null, partition: 0, offset: offset++, timestamp: 0 },
      });
      states.next(state);
    }
  };
  const logIndexes = (messages: { subscription: string; result: { logIndex?: string } }[], id: string) =>
    messages.filter((m) => m.subscription === id).map((m) => m.result.logIndex);
  const settle = async () => {
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { hub, sockets, ids, flashblock, block, logIndexes, settle };
}

describe('pendingLogs writer', () => {
  it('flashblocks arriving during a fan-out to 250 subscribers reach each one once, in order', async () => {
    const { sockets, ids, flashblock, block, logIndexes, settle } = await setup(250);
    for (let fb = 0; fb < 4; fb++) {
      flashblock(fb);
      await new Promise((resolve) => setImmediate(resolve)); // one slice of the fan-out, then the next flashblock
    }
    await settle();
    const expected = block.logs().map((log) => log.logIndex);
    expect(expected).toHaveLength(40);
    sockets.forEach(({ messages }, i) => expect(logIndexes(messages, ids[i]!), `subscriber ${i}`).toEqual(expected));
  });

  it('an unsubscribe during a fan-out still gets the logs the gateway had before it; a new subscription gets only later ones', async () => {
    const { hub, sockets, ids, flashblock, block, logIndexes, settle } = await setup(250);
    const late = sockets[240]!;
    flashblock(0);
    expect(hub.unsubscribe(late.socket, ids[240]!)).toBe(true);
    const again = hub.subscribe(late.socket, ['pendingLogs']);
    flashblock(1);
    await settle();
    const logs = block.logs().map((log) => log.logIndex);
    expect(logIndexes(late.messages, ids[240]!)).toEqual(logs.slice(0, 10));
    expect(logIndexes(late.messages, again)).toEqual(logs.slice(10, 20));
  });

  it("a connection behind many others gets a flashblock's logs before its newFlashblocks notification", async () => {
    const { hub, sockets, ids, flashblock, settle } = await setup(250);
    const late = sockets[249]!;
    const blocks = hub.subscribe(late.socket, ['newFlashblocks']);
    flashblock(0);
    await settle();
    const order = late.messages.map((m) => (m.subscription === blocks ? 'block' : m.subscription === ids[249] ? 'log' : 'other'));
    expect(order.indexOf('block')).toBeGreaterThan(order.lastIndexOf('log'));
    expect(order.filter((kind) => kind === 'log')).toHaveLength(10);
  });

  it('two flashblocks handled in one turn go to each connection in one write (one cork and uncork with newFlashblocks), in order', async () => {
    const { hub, sockets, ids, flashblock, block, logIndexes, settle } = await setup(3);
    const both = sockets[2]!;
    const blocks = hub.subscribe(both.socket, ['newFlashblocks']);
    flashblock(0);
    flashblock(1);
    await settle();
    const expected = block.logs().map((log) => log.logIndex);
    expect(expected).toHaveLength(20);
    sockets.forEach(({ messages }, i) => expect(logIndexes(messages, ids[i]!), `subscriber ${i}`).toEqual(expected));
    for (const { calls } of sockets.slice(0, 2)) expect(calls).toEqual({ writes: 1, corks: 0, uncorks: 0 });
    // the connection with both kinds: every notification of both view changes inside one cork
    expect(both.calls).toMatchObject({ corks: 1, uncorks: 1 });
    const order = both.messages.map((m) => (m.subscription === blocks ? 'block' : m.result.logIndex));
    expect(order).toEqual([...expected.slice(0, 10), 'block', ...expected.slice(10), 'block']);
  });
});
