import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { keccak256, numberToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { batchBlockOf, createBatcher, type BatcherL2Block } from './batcher.ts';
import { l1AttributesDeposit } from './deposit.ts';
import { l1AttributesFor } from './edr/producer.ts';

/**
 * The batcher when the L1 is not there: blocks it cannot post wait, at most `maxPendingBlocks` of
 * them, and nothing throws; a block it cannot read is left out with a log, never thrown.
 */
const genesis = 1_700_000_000n;
const blockOf = (number: bigint): BatcherL2Block => ({
  number,
  parentHash: keccak256(numberToHex(number)),
  timestamp: genesis + number,
  transactions: [l1AttributesDeposit(l1AttributesFor(number, genesis + number), number)],
});

function options(l1RpcUrl: string, logs: string[]) {
  return {
    l1RpcUrl,
    key: `0x${'11'.repeat(32)}` as Hex,
    inbox: '0xff00000000000000000000000000000000001337' as Hex,
    everyBlocks: 2,
    target: 'calldata' as const,
    kind: 'span' as const,
    compression: 'zlib' as const,
    chain: { chainId: 1337n, l2GenesisTime: genesis, blockTime: 1n },
    logger: pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) }),
    maxPendingBlocks: 5,
    retryMs: 20,
  };
}

describe('the devnet batcher without its L1', () => {
  it('keeps at most maxPendingBlocks blocks, drops the oldest with an error, and retries', async () => {
    // An L1 that answers every request with 503.
    const server = createServer((_req, res) => res.writeHead(503).end('down'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const logs: string[] = [];
    const batcher = createBatcher(options(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs));
    for (let n = 1n; n <= 12n; n++) batcher.add(blockOf(n));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(batcher.pending()).toBe(5);
    expect(batcher.posted()).toEqual([]);
    const messages = logs.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toContain('batcher: too many blocks not posted; the oldest are dropped and will never reach the L1');
    expect(messages.filter((msg) => msg.startsWith('batcher: posting to L1 failed')).length).toBeGreaterThan(1);
    await batcher.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('leaves out a block without an L1-info deposit, with a log naming it', () => {
    const logs: string[] = [];
    const batcher = createBatcher(options('http://127.0.0.1:9', logs));
    batcher.add({ ...blockOf(3n), transactions: [] });
    expect(batcher.pending()).toBe(0);
    expect(logs.join('')).toMatch(/"block":"3".*batcher: block not batched|batcher: block not batched.*"block":"3"/);
    expect(() => batchBlockOf({ ...blockOf(3n), transactions: [] })).toThrow(/L1-info deposit is missing/);
    void batcher.stop();
  });

  it('reads the L1 origin and sequence number from the L1-info deposit', () => {
    const block = batchBlockOf(blockOf(13n));
    const attributes = l1AttributesFor(13n, genesis + 13n);
    expect([block.epochNumber, block.epochHash, block.sequenceNumber, block.transactions]).toEqual([
      attributes.l1Number,
      attributes.l1Hash,
      attributes.sequenceNumber,
      [],
    ]);
  });
});
