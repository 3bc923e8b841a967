import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidParamsError } from '../errors.ts';
import { parseParam } from './issue.ts';

describe('zod issues as -32602', () => {
  it('names the field (indices bracketed), what was expected, and what came', () => {
    const schema = z.tuple([z.object({ calls: z.array(z.object({ gas: z.string() })) })]);
    const error = (() => {
      try {
        parseParam(schema, [{ calls: [{ gas: '0x1' }, { gas: 7 }] }], 'params');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).rpcCode).toBe(-32602);
    expect((error as Error).message).toMatch(/^params\[0\]\.calls\[1\]\.gas: .+, got 7$/);
  });

  it('returns the parsed value when it fits', () => {
    expect(parseParam(z.string(), 'x', 'params[0]')).toBe('x');
  });
});
