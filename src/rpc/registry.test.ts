import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callable, defineMethod } from './method.ts';
import { methodSpecs, registry } from './registry.ts';

/** The registry is the one place a method is listed: every file under methods/ is in it, once, under its own name. */
describe('the method registry', () => {
  it('lists every file under methods/ exactly once, named as its file', () => {
    const files = readdirSync(new URL('./methods/', import.meta.url))
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
      .map((name) => name.slice(0, -3))
      .sort();
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
  it('gets the parsed params, and bad ones are -32602 naming the field', async () => {
    const spec = defineMethod({
      name: 'test_echo',
      params: z.tuple([z.string().transform((s) => s.toUpperCase())]),
      handler: (params) => params[0],
    });
    const method = callable(spec);
    const ctx = {} as Parameters<typeof method>[1];
    expect(await method(['abc'], ctx)).toBe('ABC');
    expect(() => method([5], ctx)).toThrow(/^params\[0\]: .+, got 5$/);
  });
});
