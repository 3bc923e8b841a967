import { Common, Mainnet } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyseLegacy, type InterpreterLike } from './jump-analysis-cache.ts';

/** The analysis the cache keeps against the library's own (not installed in this file). */
const url = new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm'));
const { Interpreter } = (await import(url.href)) as { Interpreter: { prototype: InterpreterLike } };
const common = new Common({ chain: Mainnet, hardfork: 'prague' });
const evm = (await createEVM({ common })) as unknown as { _opcodeMap: unknown[] };
const interpreter = { common, lookupOpInfo: (op: number) => evm._opcodeMap[op] } as unknown as InterpreterLike;

describe('the jump analysis the cache keeps', () => {
  it('equals the library analysis on random code: JUMPDESTs, push values (truncated pushes too), opcode entries', () => {
    const code = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      // PUSH-heavy code, ending inside a push
      fc
        .array(fc.oneof(fc.integer({ min: 0x5b, max: 0x7f }), fc.integer({ min: 0, max: 255 })), { maxLength: 300 })
        .map((b) => new Uint8Array(b)),
    );
    fc.assert(
      fc.property(code, (bytes) => {
        const library = Interpreter.prototype._getValidJumpDestinations.call(interpreter, bytes);
        const ours = analyseLegacy(interpreter, bytes);
        expect(ours.jumps).toEqual(library.jumps);
        expect(ours.pushes).toEqual(library.pushes);
        expect(ours.opcodesCached.length).toBe(library.opcodesCached.length);
        ours.opcodesCached.forEach((entry, i) => expect(entry).toBe(library.opcodesCached[i]));
      }),
      { numRuns: 2000 },
    );
  });
});
