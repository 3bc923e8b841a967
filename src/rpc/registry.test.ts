import { describe, expect, it } from 'vitest';
import { moduleNamesIn } from '../../test/helpers/module-names.ts';
import { z } from 'zod';
import { InvalidParamsError } from '../errors.ts';
import { defineMethod, type MethodContext } from './method.ts';
import { methodSpecs, registry } from './registry.ts';

/** The registry is the one place a method is listed: every file under methods/ is in it, once, under its own name. */
describe('the method registry', () => {
  it('lists every file under methods/ exactly once, named as its file', () => {
    const files = moduleNamesIn(new URL('./methods/', import.meta.url));
    expect(registry.map((spec) => spec.name).sort()).toEqual(files);
    expect(methodSpecs.size).toBe(registry.length);
  });

  it('declares transports and the public policy for each method', () => {
    expect(methodSpecs.get('eth_subscribe')?.transports).toEqual(['ws']);
    expect(methodSpecs.get('eth_getBlockReceipts')?.public).toBe('forbidden');
    expect(
      registry
        .filter((spec) => spec.executes)
        .map((spec) => spec.name)
        .sort(),
    ).toEqual(['eth_call', 'eth_estimateGas', 'eth_simulateV1']);
  });
});

describe('a method with a params schema', () => {
  it('gets the parsed params and the params as received, and bad ones are -32602 naming the field', async () => {
    const spec = defineMethod({
      name: 'test_echo',
      params: z.tuple([z.string().transform((s) => s.toUpperCase())]),
      handler: (params, _ctx, given) => [params[0], given[0]],
    });
    const ctx = {} as MethodContext;
    expect(await spec.call(['abc'], ctx)).toEqual(['ABC', 'abc']);
    await expect(spec.call([5], ctx)).rejects.toThrow(/^params\[0\]: .+, got 5$/);
  });
});

describe("every method's params", () => {
  it('are declared as a zod schema in its definition', () => {
    for (const spec of registry) expect(spec.params, spec.name).toBeInstanceOf(z.ZodType);
  });

  /** A context any use of which fails the test: a refused call never reaches its handler. */
  const untouchable = new Proxy({} as MethodContext, {
    get: (_, key) => {
      throw new Error(`the handler ran (ctx.${String(key)})`);
    },
  });
  const hash = `0x${'ab'.repeat(32)}`;
  const tagMessage = 'expected hex block number or tag (latest, pending, safe, finalized, earliest)';
  const refused: Record<string, readonly [readonly unknown[], string]> = {
    eth_call: [[{ to: '0x12' }], 'params[0].to: expected a 20-byte 0x-hex address, got "0x12"'],
    eth_estimateGas: [[], 'params[0]: expected a transaction call object, got nothing'],
    eth_getBalance: [['0x12', 'pending'], 'params[0]: expected a 20-byte 0x-hex address, got "0x12"'],
    eth_getBlockByNumber: [['yesterday', false], `params[0]: ${tagMessage}, got "yesterday"`],
    eth_getBlockReceipts: [[{ blockNumber: 'yesterday' }], `params[0].blockNumber: ${tagMessage}, got "yesterday"`],
    eth_getBlockTransactionCountByNumber: [[], 'params[0]: expected a block number or tag, got nothing'],
    eth_getCode: [[`0x${'1'.repeat(40)}`, { blockHash: hash, blockNumber: '0x1' }], 'params[1]: give blockHash or blockNumber, not both'],
    eth_getLogs: [[{ blockHash: hash, fromBlock: '0x1' }], 'params[0]: expected either blockHash or fromBlock/toBlock, got both'],
    eth_getStorageAt: [[`0x${'1'.repeat(40)}`], 'params[1]: expected a storage slot, got nothing'],
    eth_getTransactionByHash: [['0x1'], 'params[0]: expected a 32-byte 0x-hex hash, got "0x1"'],
    eth_getTransactionCount: [[`0x${'1'.repeat(40)}`, 7], `params[1]: ${tagMessage}, got 7`],
    eth_getTransactionReceipt: [[], 'params[0]: expected a transaction hash, got nothing'],
    eth_sendRawTransactionSync: [['0x1'], 'params[0]: expected a signed transaction as 0x-hex bytes, got "0x1"'],
    eth_simulateV1: [[], 'missing value for required argument 0 (params[0]): expected a simulation payload {blockStateCalls, ...}'],
    eth_unsubscribe: [[5], 'params[0]: expected a subscription id, got 5'],
  };

  it.each(Object.entries(refused))(
    '%s: a bad one is refused by its schema with the message naming the field',
    async (name, [params, message]) => {
      const spec = methodSpecs.get(name)!;
      await expect(spec.call(params, untouchable)).rejects.toThrow(new InvalidParamsError(message));
      expect(spec.params.safeParse(params).success).toBe(false);
    },
  );

  it('parse to what the handlers use, absent ends and blocks as `latest`', () => {
    const parse = (name: string, params: readonly unknown[]) => methodSpecs.get(name)!.params.parse(params);
    expect(parse('eth_getLogs', [{ address: `0x${'AB'.repeat(20)}` }])).toEqual([
      {
        filter: { addresses: new Set([`0x${'ab'.repeat(20)}`]), topics: [] },
        blockHash: undefined,
        from: { kind: 'tag', tag: 'latest' },
        to: { kind: 'tag', tag: 'latest' },
      },
    ]);
    expect(parse('eth_getLogs', [{ blockHash: hash.toUpperCase().replace('0X', '0x'), address: null }])).toMatchObject([
      { blockHash: hash },
    ]);
    expect(parse('eth_getStorageAt', [`0x${'1'.repeat(40)}`, '0x1'])).toEqual([
      `0x${'1'.repeat(40)}`,
      `0x${'0'.repeat(63)}1`,
      { kind: 'tag', tag: 'latest' },
    ]);
    expect(parse('eth_getBlockByNumber', ['0x10'])).toEqual([{ kind: 'number', number: 16n }, false]);
    expect(parse('eth_getBlockReceipts', [hash])).toEqual([{ kind: 'hash', hash, requireCanonical: false }]);
  });

  it('covers every method but eth_subscribe, whose kinds parse the rest (subscriptions/kinds/)', () => {
    expect([...Object.keys(refused), 'eth_subscribe'].sort()).toEqual(registry.map((spec) => spec.name).sort());
  });
});
