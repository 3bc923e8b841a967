import { decodeFunctionResult, encodeFunctionData, keccak256, type Hex } from 'viem';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_TIME_PREDEPLOY, baseTimeAbi, baseTimeDeposit, baseTimeMillisPart } from '../../src/op/basetime.ts';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { rpc, until } from '../helpers/devnet-feed.ts';

/**
 * `flashlog devnet --denim` as a client of a Base node sees it: 200 ms complete blocks with the
 * BaseTime deposit as tx[1], millisecond fields in answers, safe/finalized trailing, and newHeads
 * and logs subscriptions over the WebSocket on the HTTP port, with the replaced head's logs sent
 * back `removed: true`.
 */
interface Tx {
  hash: Hex;
  type: Hex;
  from: Hex;
  to: Hex | null;
  input: Hex;
  blockTimestampMs?: Hex;
}
interface Block {
  number: Hex;
  hash: Hex;
  timestamp: Hex;
  timestampMs?: Hex;
  transactions: Tx[];
}
interface Log {
  blockHash: Hex;
  blockNumber: Hex;
  logIndex: Hex;
  removed: boolean;
  blockTimestampMs?: Hex;
}

let devnet: Devnet;
const notes: { subscription: string; result: Record<string, unknown> }[] = [];
const subscriptionIds: Record<string, string> = {};
let socket: WebSocket;

beforeAll(async () => {
  devnet = await createDevnet({ denim: true, reorgEvery: 4, load: 20, safeLagBlocks: 5, finalizedLagBlocks: 10 });
  socket = new WebSocket(devnet.wsUrl);
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as {
      id?: number;
      result?: string;
      params?: { subscription: string; result: Record<string, unknown> };
    };
    if (message.id !== undefined) subscriptionIds[message.id === 1 ? 'newHeads' : 'logs'] = message.result!;
    else if (message.params) notes.push(message.params);
  });
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['logs', {}] }));
  await until(() => notes.filter((note) => note.subscription === subscriptionIds.newHeads).length >= 20, 20_000);
  socket.close();
}, 30_000);
afterAll(async () => devnet?.close());

describe('devnet --denim', () => {
  it('mines 200 ms blocks whose tx[1] is the BaseTime deposit, with timestampMs = 1000 × timestamp + its millis part', async () => {
    const latest = await rpc<Block>(devnet.rpcUrl, 'eth_getBlockByNumber', ['latest', true]);
    const head = BigInt(latest.number);
    let previousMs: bigint | null = null;
    for (let n = head - 6n; n <= head; n++) {
      const block = await rpc<Block>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
      const baseTime = block.transactions[1]!;
      expect(baseTime.type).toBe('0x7e');
      expect(baseTime.to).toBe(BASE_TIME_PREDEPLOY);
      expect(baseTime.input.slice(0, 10)).toBe('0x86bdf394');
      const millis = baseTimeMillisPart(baseTime)!;
      expect([0, 200, 400, 600, 800]).toContain(millis);
      // Byte for byte the deposit the stateless engine's Denim chain carries, but for its sender
      // (EDR takes a deposit only from an account whose nonce is 0).
      expect(baseTime.from).not.toBe('0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001');
      expect(baseTime.hash).toBe(keccak256(baseTimeDeposit({ blockNumber: n, millisPart: millis, from: baseTime.from })));
      const ms = BigInt(block.timestampMs!);
      expect(ms).toBe(BigInt(block.timestamp) * 1000n + BigInt(millis));
      expect(block.transactions.every((tx) => tx.blockTimestampMs === block.timestampMs)).toBe(true);
      if (previousMs !== null) expect(ms - previousMs).toBe(200n);
      previousMs = ms;
    }
    const call = encodeFunctionData({ abi: baseTimeAbi, functionName: 'timestampMs' });
    const onChain = await rpc<Hex>(devnet.rpcUrl, 'eth_call', [{ to: BASE_TIME_PREDEPLOY, data: call }, latest.number]);
    expect(decodeFunctionResult({ abi: baseTimeAbi, functionName: 'timestampMs', data: onChain })).toBe(BigInt(latest.timestampMs!));
  });

  it('puts blockTimestampMs on logs and receipts, and keeps safe and finalized behind the head', async () => {
    const head = BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_blockNumber', []));
    const logs = await rpc<Log[]>(devnet.rpcUrl, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.every((log) => log.blockTimestampMs !== undefined)).toBe(true);
    const safe = await rpc<Block>(devnet.rpcUrl, 'eth_getBlockByNumber', ['safe', false]);
    const finalized = await rpc<Block>(devnet.rpcUrl, 'eth_getBlockByNumber', ['finalized', false]);
    expect(BigInt(safe.number)).toBeLessThan(head);
    expect(BigInt(finalized.number)).toBeLessThan(BigInt(safe.number));
    const status = await rpc<{ unsafe_l2: { number: number }; safe_l2: { number: number } }>(devnet.rpcUrl, 'optimism_syncStatus', []);
    expect(status.safe_l2.number).toBeLessThan(status.unsafe_l2.number);
  });

  it("sends newHeads and logs over the WebSocket; a replaced head's logs come back removed: true, exactly", () => {
    const heads = notes.filter((note) => note.subscription === subscriptionIds.newHeads).map((note) => note.result as unknown as Block);
    const logs = notes.filter((note) => note.subscription === subscriptionIds.logs).map((note) => note.result as unknown as Log);
    expect(heads.every((head) => head.timestampMs !== undefined)).toBe(true);
    const replacements = heads.filter((head, i) => i > 0 && head.number === heads[i - 1]!.number);
    expect(replacements.length).toBeGreaterThan(0);
    for (const replacement of replacements) {
      const replaced = heads[heads.indexOf(replacement) - 1]!;
      const announced = logs.filter((log) => log.blockHash === replaced.hash && !log.removed);
      const removed = logs.filter((log) => log.blockHash === replaced.hash && log.removed);
      expect(removed.map((log) => ({ ...log, removed: false }))).toEqual(announced);
    }
    expect(logs.some((log) => log.removed)).toBe(true);
    expect(logs.every((log) => log.blockTimestampMs !== undefined)).toBe(true);
  });
});
