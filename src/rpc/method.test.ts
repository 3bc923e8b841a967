import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineMethod, type MethodContext } from './method.ts';

/** defineMethod's params: primitives parsed once and kept, anything else parsed every call, refusals never kept. */
describe('defineMethod params', () => {
  const ctx = {} as MethodContext;
  const counting = () => {
    let parses = 0;
    const spec = defineMethod({
      name: 'test_echo',
      params: z
        .tuple([
          z.string().transform((value) => {
            parses += 1;
            if (value === 'bad') throw new Error('unreachable');
            return { tag: value };
          }),
        ])
        .rest(z.unknown()),
      handler: ([first]) => first,
    });
    return { spec, parses: () => parses };
  };

  it('the same primitive params are parsed once; other values and objects each call', async () => {
    const { spec, parses } = counting();
    const first = await spec.call(['pending'], ctx);
    expect(await spec.call(['pending'], ctx)).toBe(first);
    expect(parses()).toBe(1);
    expect(await spec.call(['latest'], ctx)).toEqual({ tag: 'latest' });
    expect(parses()).toBe(2);
    // An object among the params: parsed every call.
    await spec.call(['pending', { a: 1 }], ctx);
    await spec.call(['pending', { a: 1 }], ctx);
    expect(parses()).toBe(4);
    // A string holding the key's separator is never kept (no two lists share a key).
    await spec.call(['a\u0000sb'], ctx);
    await spec.call(['a\u0000sb'], ctx);
    expect(parses()).toBe(6);
  });

  it('a refused params list is refused every time, naming the field', async () => {
    const { spec } = counting();
    for (let i = 0; i < 2; i++) await expect(spec.call([7], ctx)).rejects.toThrow(/params\[0\]/);
  });
});
