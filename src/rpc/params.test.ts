import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { InvalidParamsError } from '../errors.ts';
import { parseParam } from '../schemas/issue.ts';
import { blockParam, logFilterObject, matchesFilter, slotParam, stateBlockParam, toLogFilter } from './params.ts';
import { createRateLimiter } from './rate-limit.ts';
import { handleText } from '../jsonrpc/protocol.ts';

const a = `0x${'a'.repeat(40)}`;
const b = `0x${'b'.repeat(40)}`;
const t1 = `0x${'1'.repeat(64)}`;
const t2 = `0x${'2'.repeat(64)}`;

/** Parses like the gateway: `where` names the value (`params[0]`), an issue is -32602 naming the field. */
const parser =
  <T>(schema: z.ZodType<T>) =>
  (value: unknown, where = 'p'): T =>
    parseParam(schema, value, where);
const block = parser(blockParam);
const stateBlock = parser(stateBlockParam);
const slot = parser(slotParam);
const logFilter = parser(logFilterObject('a filter').transform(toLogFilter));

describe('block parameters', () => {
  it('takes hex numbers and the five tags', () => {
    expect(block('0x1a')).toEqual({ kind: 'number', number: 26n });
    for (const tag of ['latest', 'pending', 'safe', 'finalized', 'earliest']) expect(block(tag)).toEqual({ kind: 'tag', tag });
  });
  it('names the parameter, what came and what was expected', () => {
    expect(() => block('0x01', 'params[0].toBlock')).toThrow(InvalidParamsError);
    expect(() => block(12, 'params[0].toBlock')).toThrow(
      'params[0].toBlock: expected hex block number or tag (latest, pending, safe, finalized, earliest), got 12',
    );
    expect(() => block(undefined, 'params[1]')).toThrow('got nothing');
  });
  it('takes EIP-1898 block objects for state methods, naming the bad field', () => {
    const hash = `0x${'ab'.repeat(32)}`;
    expect(stateBlock({ blockHash: hash }, 'params[1]')).toEqual({ kind: 'hash', hash, requireCanonical: false });
    expect(stateBlock({ blockHash: hash, requireCanonical: true }, 'params[1]')).toEqual({
      kind: 'hash',
      hash,
      requireCanonical: true,
    });
    expect(stateBlock({ blockNumber: '0x10' }, 'params[1]')).toEqual({ kind: 'number', number: 16n });
    expect(stateBlock('pending', 'params[1]')).toEqual({ kind: 'tag', tag: 'pending' });
    expect(() => stateBlock({ blockHash: '0x12' }, 'params[1]')).toThrow('params[1].blockHash: expected a 32-byte 0x-hex hash, got "0x12"');
    expect(() => stateBlock({ blockHash: hash, requireCanonical: 'yes' }, 'params[1]')).toThrow(
      'params[1].requireCanonical: expected true or false, got "yes"',
    );
    expect(() => stateBlock({ blockHash: hash, blockNumber: '0x1' }, 'params[1]')).toThrow(
      /^params\[1\]: give blockHash or blockNumber, not both$/,
    );
    expect(stateBlock({ blockNumber: 'pending', requireCanonical: false }, 'params[1]')).toEqual({ kind: 'tag', tag: 'pending' });
    expect(() => stateBlock({ blockNumber: 5 }, 'params[2]')).toThrow('params[2].blockNumber: expected hex block number or tag');
    expect(() => stateBlock({ block: 'latest' }, 'params[1]')).toThrow(
      'params[1]: expected hex block number, tag, { blockNumber } or { blockHash, requireCanonical? } (EIP-1898), got {"block":"latest"}',
    );
    expect(() => stateBlock({ requireCanonical: true }, 'params[1]')).toThrow('(EIP-1898)');
    expect(() => block({ blockHash: hash }, 'params[0]'), 'block methods take no object').toThrow(InvalidParamsError);
  });
  it('pads storage slots to 32 bytes', () => {
    expect(slot('0x1')).toBe(`0x${'0'.repeat(63)}1`);
    expect(() => slot(`0x${'1'.repeat(65)}`, 'params[1]')).toThrow('params[1]: expected a storage slot');
  });
});

describe('log filters', () => {
  const log = { address: a.toUpperCase().replace('0X', '0x'), topics: [t1, t2] };
  it('matches addresses any-of and topics per position (null = any, array = any-of)', () => {
    expect(matchesFilter(log, logFilter({ address: [b, a] }))).toBe(true);
    expect(matchesFilter(log, logFilter({ address: b }))).toBe(false);
    expect(matchesFilter(log, logFilter({ topics: [null, [t1, t2]] }))).toBe(true);
    expect(matchesFilter(log, logFilter({ topics: [t2] }))).toBe(false);
    expect(matchesFilter(log, logFilter({ topics: [t1, t2, t1] }))).toBe(false);
    expect(matchesFilter(log, logFilter({ topics: [[]] }))).toBe(true);
    expect(matchesFilter(log, logFilter({ address: [] })), 'an empty address list matches nothing').toBe(false);
  });
  it('rejects malformed filters naming the field', () => {
    expect(() => logFilter({ address: [a, '0x12'] }, 'params[0]')).toThrow(
      'params[0].address[1]: expected a 20-byte 0x-hex address, got "0x12"',
    );
    expect(() => logFilter({ topics: 'x' }, 'params[0]')).toThrow('params[0].topics: expected an array of topics, got "x"');
    expect(() => logFilter({ topics: [null, null, null, null, null] }, 'params[0]')).toThrow(
      /^params\[0\]\.topics: expected at most 4 positions, got 5$/,
    );
    expect(() => logFilter({ address: Array.from({ length: 1001 }, () => '0x12') }, 'params[0]')).toThrow(
      /^params\[0\]\.address: expected at most 1000 addresses, got 1001$/,
    );
    expect(() => logFilter(5, 'params[1]')).toThrow('params[1]: expected a filter, got 5');
  });
});

describe('rate limiter', () => {
  it('allows a second of burst, then refills with time, per client', () => {
    const limiter = createRateLimiter(3);
    expect([1, 2, 3, 4].map(() => limiter.take('x', 1, 1000))).toEqual([true, true, true, false]);
    expect(limiter.take('y', 1, 1000)).toBe(true);
    expect(limiter.take('x', 1, 1400)).toBe(true);
    expect(limiter.take('x', 2, 1400)).toBe(false);
  });
});

describe('JSON-RPC framing', () => {
  const dispatch = async (call: { method: string; params: unknown }) => {
    if (call.method === 'boom') throw new Error('kaput');
    return call.params;
  };
  it('answers calls, batches and errors', async () => {
    expect(JSON.parse((await handleText('{"jsonrpc":"2.0","id":null,"method":"echo","params":[1]}', dispatch, { maxBatch: 2 }))!)).toEqual({
      jsonrpc: '2.0',
      id: null,
      result: [1],
    });
    expect(JSON.parse((await handleText('{"jsonrpc":"2.0","id":2,"method":"boom"}', dispatch, { maxBatch: 2 }))!).error).toEqual({
      code: -32603,
      message: 'internal error: kaput',
    });
    expect(JSON.parse((await handleText('{"jsonrpc":"2.0","id":{},"method":"echo"}', dispatch, { maxBatch: 2 }))!).error.code).toBe(-32600);
    expect(
      JSON.parse((await handleText('{"jsonrpc":"2.0","id":3,"method":"echo","params":7}', dispatch, { maxBatch: 2 }))!).error.message,
    ).toContain('params: expected an array or object');
    expect(JSON.parse((await handleText('[1,2,3]', dispatch, { maxBatch: 2 }))!).error.message).toContain(
      'batch of 3 calls exceeds the limit of 2',
    );
    expect(await handleText('[{"jsonrpc":"2.0","method":"echo"}]', dispatch, { maxBatch: 2 })).toBeNull();
  });

  it('refuses JSON nested deeper than 64 levels as an invalid request, keeping the id', async () => {
    const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
    const refused = JSON.parse(
      (await handleText(`{"jsonrpc":"2.0","id":9,"method":"echo","params":[${deep(5000)}]}`, dispatch, { maxBatch: 2 }))!,
    );
    expect(refused).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32600, message: 'invalid request: JSON nested deeper than 64 levels' },
    });
    const fine = JSON.parse(
      (await handleText(`{"jsonrpc":"2.0","id":9,"method":"echo","params":[${deep(60)}]}`, dispatch, { maxBatch: 2 }))!,
    );
    expect(fine.result).toBeDefined();
  });

  it('echoes the id of an invalid request when the id itself is valid', async () => {
    expect(JSON.parse((await handleText('{"jsonrpc":"1.0","id":"a","method":"echo"}', dispatch, { maxBatch: 2 }))!)).toMatchObject({
      id: 'a',
      error: { code: -32600 },
    });
    const batch = JSON.parse(
      (await handleText('[{"jsonrpc":"2.0","id":4,"method":7},{"jsonrpc":"2.0","id":5,"method":"echo","params":[]}]', dispatch, {
        maxBatch: 2,
      }))!,
    );
    expect(batch).toEqual([
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'invalid request[0]: method: expected a method name, got 7' } },
      { jsonrpc: '2.0', id: 5, result: [] },
    ]);
    expect(JSON.parse((await handleText('{"jsonrpc":"2.0","id":[1],"method":"echo"}', dispatch, { maxBatch: 2 }))!).id).toBeNull();
  });
});
