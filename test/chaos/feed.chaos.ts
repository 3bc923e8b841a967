import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { take } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { topics } from '../../src/records/topics.ts';
import { flashblockRecordSchema } from '../../src/records/flashblocks.ts';
import { brotli, loadFixture } from '../helpers/feed-server.ts';
import { tempDir } from '../helpers/context.ts';
import { fbKey, managed, rssMiB, sampleRss, sleep, stopAll, report } from './harness.ts';

/**
 * Scenario 5, a hostile feed: for CHAOS_FEED_SECONDS (default 60) the feed drops the connection
 * every second (no close frame). On every connection, between the five valid flashblocks of one
 * block, it sends truncated frames (half a brotli frame, half a JSON text), a brotli bomb (64 MiB
 * of zeros in ~60 bytes), schema-invalid JSON, and 10,000 garbage frames per second. `flashlog
 * ingest` (a child process, embedded log) must not crash, must keep its memory bounded, and must
 * accept every valid flashblock.
 */
const seconds = Number(process.env.CHAOS_FEED_SECONDS ?? 60);
const garbagePerSecond = 10_000;
const unichain = loadFixture('unichain-sepolia-35535698.json');
const firstBlock = 1_000_000;
/** The real Unichain block renumbered: five flashblocks, indices 0-4. */
const blockFrames = (number: number) =>
  unichain.map((message) =>
    brotli(
      JSON.stringify({
        ...message,
        payload_id: `0x${number.toString(16).padStart(16, '0')}`,
        base: message.base ? { ...(message.base as object), block_number: `0x${number.toString(16)}` } : message.base,
        metadata: { ...(message.metadata as object), block_number: number },
      }),
    ),
  );
const bomb = brotliCompressSync(Buffer.alloc(64 * 1024 * 1024), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
const garbage: (Buffer | string)[] = [
  randomBytes(64),
  randomBytes(700),
  'not json at all',
  '{"payload_id":',
  '{"payload_id":"0x01","index":"zero"}',
  '[]',
  'null',
  Buffer.from([0x1b, 0x00, 0x00]),
  '\u0000\uffff'.repeat(50),
  JSON.stringify({ index: 0, diff: {}, metadata: { block_number: -1 } }),
];

afterAll(stopAll);

describe('scenario 5: feed abuse', () => {
  it(
    `${seconds} disconnects (one a second), truncated frames, brotli bombs, ${garbagePerSecond} garbage frames/s: no crash, bounded RSS, every valid flashblock accepted`,
    async () => {
      const dir = tempDir('flashlog-chaos-feed-');
      const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      await new Promise<void>((resolve) => server.once('listening', () => resolve()));
      const url = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
      const sent: string[] = [];
      let connections = 0;
      let garbageSent = 0;
      let bombsSent = 0;
      let truncatedSent = 0;
      let done = false;
      const sockets = new Set<WebSocket>();
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
        const connection = connections++;
        if (done || connection >= seconds) return; // later connections get nothing; the run is over
        const number = firstBlock + connection;
        const frames = blockFrames(number);
        void (async () => {
          const started = Date.now();
          // 100 slices of 10 ms: garbage every slice, a valid flashblock every 150 ms from slice 10.
          for (let slice = 0; slice < 100 && socket.readyState === socket.OPEN; slice++) {
            for (let i = 0; i < garbagePerSecond / 100; i++) socket.send(garbage[(slice + i) % garbage.length]!);
            garbageSent += garbagePerSecond / 100;
            if (slice >= 10 && slice % 15 === 10) {
              const index = (slice - 10) / 15;
              if (index < frames.length) {
                socket.send(frames[index]!);
                sent.push(fbKey(number, index));
                // A truncated copy of the same frame, and of its JSON text, right after it.
                socket.send(frames[index]!.subarray(0, frames[index]!.length >> 1));
                socket.send(JSON.stringify(unichain[index]).slice(0, 200));
                truncatedSent += 2;
              }
            }
            if (slice === 50) {
              socket.send(bomb);
              bombsSent++;
            }
            const due = started + (slice + 1) * 10;
            await sleep(Math.max(0, due - Date.now()));
          }
          // Cut only once the reader has read every frame sent (bounded): a ping after the last
          // frame comes back as a pong only after the reader's ws has emitted everything before it.
          // A loaded reader (the first connection, at its start) leaves frames in ws's buffer and
          // in the kernel's queues, and a cut can discard those: destroying a socket whose own
          // receive queue holds an unread ping (the reader pings every 500 ms) sends a reset, and
          // the kernel drops what it had not yet sent. Such a frame was never delivered; the
          // scenario is about what the ingest does with the frames it gets.
          if (socket.readyState === socket.OPEN) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 5000);
              socket.once('pong', () => {
                clearTimeout(timer);
                resolve();
              });
              socket.ping();
            });
          }
          socket.terminate(); // no close frame: the client sees the connection die
        })();
      });

      const ingest = managed([
        'ingest',
        '--ws',
        url,
        '--data-dir',
        dir.path,
        '--metrics-port',
        '0',
        '--executor',
        'metadata',
        '--reconnect-min-ms',
        '50',
        '--reconnect-max-ms',
        '200',
        '--log-level',
        'warn',
      ]);
      const pid = () => ingest.pid;
      await sleep(3000);
      const rssBefore = rssMiB(pid());
      const sampler = sampleRss(pid, 500);
      const deadline = Date.now() + seconds * 1000 + 60_000;
      while (sent.length < seconds * 5 && Date.now() < deadline) {
        await sleep(250);
        expect(ingest.current.child.exitCode, 'ingest exited during the abuse').toBeNull();
      }
      done = true;
      await sleep(1500);
      const samples = sampler.stop();
      const rssAfter = rssMiB(pid());
      expect(ingest.current.child.exitCode, 'ingest exited during the abuse').toBeNull();
      expect(ingest.current.child.signalCode).toBeNull();
      await ingest.stop();
      expect(await ingest.current.exited, 'ingest exit code on SIGTERM').toBe(0);
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));

      const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
      const logged: string[] = [];
      const consumer = log.consumer({ topics: [topics.flashblocks] });
      const end = Number((await log.endOffsets(topics.flashblocks))[0]?.offset ?? 0n);
      await new Promise<void>((resolve, reject) => {
        if (end === 0) {
          resolve();
          return;
        }
        // records$ may emit synchronously inside subscribe: stop with take(), not the subscription.
        consumer.records$.pipe(take(end)).subscribe({
          next(record) {
            const value = flashblockRecordSchema.parse(JSON.parse(record.value));
            logged.push(fbKey(BigInt(value.blockNumber), value.index));
          },
          complete: resolve,
          error: reject,
        });
      });
      await consumer.close();
      await log.close();
      dir.remove();

      const loggedSet = new Set(logged);
      const lost = sent.filter((key) => !loggedSet.has(key));
      const growth = Math.max(...samples) - rssBefore;
      report({
        scenario: '5 feed abuse',
        load: `${seconds} s; ${sent.length} valid flashblocks, ${garbageSent} garbage frames (${garbagePerSecond}/s), ${bombsSent} brotli bombs (64 MiB), ${truncatedSent} truncated`,
        faults: `${Math.min(connections, seconds)} disconnects (1/s)`,
        lost: lost.length,
        duplicates: logged.length - loggedSet.size,
        recoveryMs: 'n/a (reconnect 50-200 ms)',
        rssBeforeMiB: rssBefore,
        rssAfterMiB: `${rssAfter} (peak ${Math.max(...samples)})`,
        notes: `ingest exit 0 on SIGTERM; peak RSS growth ${growth.toFixed(1)} MiB`,
      });
      expect(sent.length).toBe(seconds * 5);
      expect(lost, 'valid flashblocks the log does not hold').toEqual([]);
      expect(logged.length - loggedSet.size, 'duplicates in the log').toBe(0);
      // Bounded: a bomb may inflate up to --max-frame-bytes (16 MiB) at a time; nothing accumulates.
      expect(growth, 'peak RSS growth over the run (MiB)').toBeLessThan(150);
      expect(rssAfter - rssBefore, 'RSS growth at the end (MiB)').toBeLessThan(150);
    },
    (seconds + 120) * 1000,
  );
});
