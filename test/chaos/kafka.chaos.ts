import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blockOf,
  compareKeys,
  managed,
  readFlashblockKeys,
  recordFeed,
  report,
  rpcCall,
  rssMiB,
  sleep,
  startDevnet,
  startPrivateKafka,
  stopAll,
  wholeBlocks,
  type PrivateKafka,
} from './harness.ts';

/**
 * Scenarios 1 and 2, on a private Kafka broker (its own port and data directory, so it can be
 * SIGKILLed without touching anything else) and `flashlog devnet --load` as the feed, all real
 * child processes. What the devnet's feed sent is recorded by a separate WebSocket client; what
 * reached the log is read back from Kafka and compared by (block_number, index).
 */
let kafka: PrivateKafka;
let devnet: Awaited<ReturnType<typeof startDevnet>>;

beforeAll(async () => {
  kafka = await startPrivateKafka();
  devnet = await startDevnet(['--load', '20', '--metadata-receipts']);
}, 120_000);

afterAll(async () => {
  await stopAll();
  await kafka?.remove();
}, 60_000);

const ingestArgs = () => [
  'ingest',
  '--ws',
  devnet.ws,
  '--kafka-brokers',
  kafka.brokers,
  '--metrics-port',
  '0',
  '--executor',
  'metadata',
  '--reconnect-min-ms',
  '100',
  '--reconnect-max-ms',
  '1000',
  '--log-level',
  'info',
];
const newestBlock = (keys: readonly string[]) => (keys.length ? blockOf(keys[keys.length - 1]!) : 0n);
const random = (min: number, max: number) => min + Math.random() * (max - min);

describe('scenario 1: two ingest replicas on one Kafka log, one SIGKILLed and restarted', () => {
  it('the log holds every flashblock the feed sent (0 lost after dedup by block and index)', async () => {
    const feed = await recordFeed(devnet.ws);
    const a = managed(ingestArgs());
    const b = managed(ingestArgs());
    await Promise.all([a, b].map((proc) => proc.current.waitFor((line) => line.msg === 'upstream connected', 60_000)));
    await sleep(2500);
    const windowAfter = newestBlock(feed.keys); // whole blocks from the next one on
    const rssBefore = rssMiB(a.pid);

    await sleep(random(1000, 5000));
    await a.kill('SIGKILL');
    const killedAt = Date.now();
    await sleep(2000);
    const restarted = a.restart();
    await restarted.waitFor((line) => line.msg === 'upstream connected', 60_000);
    const recoveryMs = Date.now() - killedAt;
    await sleep(6000);
    const windowUpTo = newestBlock(feed.keys) - 1n; // the newest block may still be growing
    await sleep(1500); // ingest appends within milliseconds; leave it time to flush
    const rssAfter = rssMiB(a.pid);
    feed.close();

    const expected = wholeBlocks(feed.keys, windowAfter, windowUpTo);
    const logged = wholeBlocks(await readFlashblockKeys(kafka.brokers), windowAfter, windowUpTo);
    const { lost, rawDuplicates, unexpected } = compareKeys(expected, logged);
    report({
      scenario: '1 ingest replica SIGKILL',
      load: `devnet --load 20; 2 ingest replicas; ${expected.length} flashblocks in blocks ${windowAfter + 1n}-${windowUpTo}`,
      faults: '1 SIGKILL of a replica, restart after 2 s',
      lost: lost.length,
      duplicates: `0 after dedup (${rawDuplicates} raw: both replicas append)`,
      recoveryMs: `${recoveryMs} (kill to reconnected)`,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssAfter,
      notes: `feed decode failures ${feed.failures.length}`,
    });
    expect(expected.length, 'flashblocks in the window').toBeGreaterThan(30);
    expect(lost, 'flashblocks the log lacks').toEqual([]);
    expect(unexpected, 'flashblocks in the log the feed never sent').toEqual([]);
    expect(b.current.child.exitCode, 'the other replica kept running').toBeNull();
    await a.stop();
    await b.stop();
  }, 150_000);
});

describe('scenario 2: the Kafka broker SIGKILLed during ingest and restarted 5 s later', () => {
  it('ingest buffers and resumes (0 lost, 0 duplicates after dedup); the gateway reconnects and catches up', async () => {
    const feed = await recordFeed(devnet.ws);
    const ingest = managed([...ingestArgs(), '--produce-buffer-records', '50000']);
    await ingest.current.waitFor((line) => line.msg === 'upstream connected', 60_000);
    const serve = managed([
      'serve',
      '--source',
      'flashblocks',
      '--kafka-brokers',
      kafka.brokers,
      '--rpc',
      devnet.rpc,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--log-level',
      'info',
    ]);
    const gatewayUrl = String((await serve.current.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    await sleep(3000);
    const windowAfter = newestBlock(feed.keys);
    const rssBefore = rssMiB(ingest.pid);
    // The pre-confirmed block the view holds (hash 0x00..00); without one the gateway would answer
    // with the node's own block, which says nothing about the view.
    const pendingNumber = async () => {
      const block = await rpcCall<{ number: string; hash: string }>(gatewayUrl, 'eth_getBlockByNumber', ['pending', false], 3000);
      return block.hash === `0x${'0'.repeat(64)}` ? BigInt(block.number) : 0n;
    };
    expect(await pendingNumber()).toBeGreaterThan(windowAfter - 2n);

    await kafka.kill();
    const killedAt = Date.now();
    await sleep(5000);
    await kafka.start();
    const brokerBackMs = Date.now() - killedAt;
    // The gateway's pending block catches up with the feed by itself.
    let caughtUpMs = Number.NaN;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const target = newestBlock(feed.keys);
      const seen = await pendingNumber().catch(() => 0n);
      if (seen >= target) {
        caughtUpMs = Date.now() - killedAt;
        break;
      }
      await sleep(250);
    }
    await sleep(4000);
    const windowUpTo = newestBlock(feed.keys) - 1n;
    await sleep(1500);
    const rssAfter = rssMiB(ingest.pid);
    feed.close();

    const expected = wholeBlocks(feed.keys, windowAfter, windowUpTo);
    const logged = wholeBlocks(await readFlashblockKeys(kafka.brokers), windowAfter, windowUpTo);
    const { lost, rawDuplicates, unexpected } = compareKeys(expected, logged);
    const producerResets = ingest.current.lines.filter(
      (line) => line.msg === 'kafka producer state lost at the broker; starting a new producer',
    ).length;
    report({
      scenario: '2 broker SIGKILL',
      load: `devnet --load 20; 1 ingest (buffer 50,000 records), 1 gateway; ${expected.length} flashblocks in blocks ${windowAfter + 1n}-${windowUpTo}`,
      faults: 'broker SIGKILL, restarted after 5 s',
      lost: lost.length,
      duplicates: `${rawDuplicates} raw (0 after dedup)`,
      recoveryMs: `broker back ${brokerBackMs}; gateway caught up ${caughtUpMs}`,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssAfter,
      notes: `${producerResets} producer restarts (broker lost the idempotent producer's state)`,
    });
    expect(Number.isFinite(caughtUpMs), 'the gateway caught up with the feed after the broker came back').toBe(true);
    expect(expected.length, 'flashblocks in the window').toBeGreaterThan(30);
    expect(lost, 'flashblocks the log lacks').toEqual([]);
    expect(unexpected, 'flashblocks in the log the feed never sent').toEqual([]);
    expect(ingest.current.child.exitCode, 'ingest kept running').toBeNull();
    expect(serve.current.child.exitCode, 'the gateway kept running').toBeNull();
    await serve.stop();
    await ingest.stop();
  }, 180_000);
});

describe('scenario 3: a gateway SIGKILLed under query load and restarted', () => {
  it('after its replay it answers exactly as a gateway that never stopped', async () => {
    const ingest = managed(ingestArgs());
    await ingest.current.waitFor((line) => line.msg === 'upstream connected', 60_000);
    const serveArgs = [
      'serve',
      '--source',
      'flashblocks',
      '--kafka-brokers',
      kafka.brokers,
      '--rpc',
      devnet.rpc,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--head-poll-ms',
      '200',
      '--log-level',
      'info',
    ];
    const steady = managed(serveArgs);
    const victim = managed(serveArgs);
    const urlOf = async (proc: typeof steady) =>
      String((await proc.current.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    const steadyUrl = await urlOf(steady);
    let victimUrl = await urlOf(victim);
    const rssBefore = rssMiB(victim.pid);

    // Query load on the victim: 4 clients in a loop, until told to stop.
    const queries: [string, unknown[]][] = [
      ['eth_getBlockByNumber', ['pending', true]],
      ['eth_getBlockReceipts', ['pending']],
      ['eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]],
      ['eth_blockNumber', []],
    ];
    let loading = true;
    let answered = 0;
    let refused = 0;
    const clients = Array.from({ length: 4 }, async (_, client) => {
      for (let i = client; loading; i++) {
        const [method, params] = queries[i % queries.length]!;
        try {
          await rpcCall(victimUrl, method, params, 5000);
          answered++;
        } catch {
          refused++; // the gateway is down (connection refused) while killed
          await sleep(50);
        }
      }
    });
    await sleep(random(2000, 5000));
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    await sleep(1000);
    victim.restart();
    victimUrl = await urlOf(victim);
    const recoveryMs = Date.now() - killedAt;
    await sleep(3000);
    loading = false;
    await Promise.all(clients);

    // Freeze the picture: no more records (ingest stopped) and no canonical head moves (the devnet
    // node SIGSTOPped, so neither gateway drops a block the other still holds). Compare what both
    // serve from their views.
    // Freeze late in a block (after its flashblock 7, ~1.4 s after the last seal): both gateways
    // poll the node's head every 200 ms, so both have dropped the sealed block by then and hold
    // the same pre-confirmed ones (eth_getLogs with pending reads all of them).
    const feed = await recordFeed(devnet.ws);
    const startedWatching = feed.keys.length;
    while (!feed.keys.slice(startedWatching).some((key) => key.endsWith('/7'))) await sleep(20);
    devnet.proc.freeze();
    feed.close();
    let mismatches: string[] = [];
    const compared: string[] = [];
    try {
      await ingest.stop();
      await sleep(1500);
      const pending = await rpcCall<{ number: string; hash: string }>(steadyUrl, 'eth_getBlockByNumber', ['pending', true], 5000);
      const pendingLogs = await rpcCall<{ address: string }[]>(
        steadyUrl,
        'eth_getLogs',
        [{ fromBlock: 'pending', toBlock: 'pending' }],
        5000,
      );
      const addresses = [...new Set(pendingLogs.map((log) => log.address))];
      const checks: [string, unknown[]][] = [
        ['eth_getBlockByNumber', ['pending', true]],
        ['eth_getBlockByNumber', ['pending', false]],
        ['eth_getBlockReceipts', ['pending']],
        ['eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]],
        ['eth_getBlockTransactionCountByNumber', ['pending']],
        ...addresses
          .slice(0, 10)
          .map((address): [string, unknown[]] => ['eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending', address }]]),
      ];
      mismatches = [];
      for (const [method, params] of checks) {
        const [a, b] = await Promise.all([rpcCall(steadyUrl, method, params, 5000), rpcCall(victimUrl, method, params, 5000)]);
        compared.push(method);
        if (JSON.stringify(a) !== JSON.stringify(b)) mismatches.push(`${method} ${JSON.stringify(params)}`);
      }
      expect(pending.hash, 'a pre-confirmed block is held while the node is frozen').toBe(`0x${'0'.repeat(64)}`);
    } finally {
      devnet.proc.thaw();
    }
    const rssAfter = rssMiB(victim.pid);
    report({
      scenario: '3 gateway SIGKILL',
      load: `4 clients looping pending reads; ${answered} answered, ${refused} refused while down`,
      faults: '1 SIGKILL of a gateway, restart after 1 s',
      lost: 'n/a (reader)',
      duplicates: 'n/a (reader)',
      recoveryMs: `${recoveryMs} (kill to replayed and listening)`,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssAfter,
      notes: `${compared.length} answers compared with a gateway that never stopped: ${mismatches.length} differ`,
    });
    expect(mismatches, 'answers that differ from the gateway that never stopped').toEqual([]);
    expect(answered).toBeGreaterThan(50);
    await steady.stop();
    await victim.stop();
  }, 150_000);
});
