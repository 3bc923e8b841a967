import { Common, Mainnet } from '@ethereumjs/common';
import { createEVM, type EVM } from '@ethereumjs/evm';
import { Account, createAddressFromString } from '@ethereumjs/util';
import fc from 'fast-check';
import { bytesToHex, numberToBytes } from 'viem';
import { describe, expect, it } from 'vitest';
import { useFastInterpreter } from './fast-interpreter.ts';

/**
 * The faster loop against the library's own, on random legacy bytecode: the same return data,
 * gas, error and final stack for programs made of the opcodes the loop runs without the
 * library's step (PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST, the inlined arithmetic, the
 * environment reads the library marks async, the copies and RETURN/REVERT with their memory gas,
 * SLOAD with its warm and cold access costs),
 * jumps to valid and invalid destinations, stack underflows and running out of gas included.
 */
const common = () => new Common({ chain: Mainnet, hardfork: 'prague' });
const reference = await createEVM({ common: common() });
const fast = await createEVM({ common: common() });
await useFastInterpreter(fast);

const edgeWords = [0n, 1n, 2n, 31n, 32n, 255n, 256n, 257n, 2n ** 255n, 2n ** 256n - 1n, 2n ** 256n - 2n];
const word = fc.oneof(fc.constantFrom(...edgeWords), fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), fc.bigInt({ min: 0n, max: 96n }));
const push = (value: bigint) => {
  const bytes = value === 0n ? new Uint8Array([0]) : numberToBytes(value);
  return [0x5f + bytes.length, ...bytes];
};
/** Opcodes without immediates the programs draw from. */
const plain = [
  0x01,
  0x03,
  0x10,
  0x11,
  0x14,
  0x15,
  0x16,
  0x17,
  0x18,
  0x19,
  0x1b,
  0x1c,
  0x02,
  0x04,
  0x1d,
  0x50,
  0x5b,
  0x56,
  0x57,
  0x30,
  0x32,
  0x33,
  0x34,
  0x35,
  0x36,
  0x37,
  0x39,
  0x3d,
  0x3e,
  0x41,
  0x42,
  0x43,
  0x44,
  0x45,
  0x5a,
  0x51,
  0x52,
  0x59,
  0x58,
  ...Array.from({ length: 16 }, (_, i) => 0x80 + i),
  ...Array.from({ length: 16 }, (_, i) => 0x90 + i),
];
const step = fc.oneof(
  { weight: 3, arbitrary: word.map(push) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 120 }).map((destination) => [...push(BigInt(destination)), 0x56]) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 120 }).map((destination) => [...push(BigInt(destination)), 0x57]) },
  { weight: 6, arbitrary: fc.constantFrom(...plain).map((op) => [op]) },
);
const ending = fc.constantFrom(
  [0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3], // MSTORE the top at 0, RETURN 32 bytes
  [0x5f, 0x52, 0x60, 0x20, 0x5f, 0xfd], // the same with REVERT
  [0xf3], // RETURN with whatever the stack holds
  [0xfd],
  [0x00],
);
const program = fc
  .tuple(fc.array(word, { minLength: 4, maxLength: 12 }), fc.array(step, { minLength: 1, maxLength: 60 }), ending)
  .map(([pushes, steps, end]) => new Uint8Array([...pushes.flatMap(push), ...steps.flat(), ...end]));

let runs = 0;
/** Runs `code` as a fresh account's code (its storage empty, nothing warm), the same account in both EVMs. */
const run = async (evm: EVM, code: Uint8Array, data: Uint8Array, gasLimit: bigint) => {
  const to = createAddressFromString(`0x${(runs++ >> 1).toString(16).padStart(40, '0')}`);
  await evm.stateManager.putAccount(to, new Account());
  const result = await evm.runCode({
    to,
    code: code.slice(), // one array per EVM: the jump analysis is cached per code array
    data,
    gasLimit,
    caller: createAddressFromString('0x00000000000000000000000000000000000000c0'),
    value: 7n,
  });
  const stack = (result.runState as unknown as { stack: { getStack(): bigint[] } } | undefined)?.stack.getStack();
  return {
    error: result.exceptionError?.error,
    gasLeft: result.gas,
    returned: bytesToHex(result.returnValue),
    stack: stack?.map(String),
  };
};

describe('the faster interpreter loop gives the library loop results', () => {
  it('on random programs of the inlined opcodes (return data, gas, error, stack)', async () => {
    await fc.assert(
      fc.asyncProperty(program, fc.uint8Array({ maxLength: 80 }), fc.constantFrom(30n, 300n, 100_000n), async (code, data, gasLimit) => {
        expect(await run(fast, code, data, gasLimit)).toEqual(await run(reference, code, data, gasLimit));
      }),
      { numRuns: 1500 },
    );
  });

  it('a hand-written loop: arithmetic, jumps and the environment reads', async () => {
    // counter = 5; do { counter -= 1; acc = acc + CALLDATASIZE } while (counter != 0); return acc
    const code = new Uint8Array([
      0x5f, 0x60, 0x05, 0x5b, 0x60, 0x01, 0x90, 0x03, 0x90, 0x36, 0x01, 0x90, 0x80, 0x15, 0x15, 0x60, 0x03, 0x57, 0x50, 0x5f, 0x52, 0x60,
      0x20, 0x5f, 0xf3,
    ]);
    const data = new Uint8Array(9);
    const got = await run(fast, code, data, 100_000n);
    expect(got).toEqual(await run(reference, code, data, 100_000n));
    expect(BigInt(got.returned)).toBe(45n);
  });

  it('SLOAD: the stored value, a cold then a warm read', async () => {
    // SSTORE(1, 7); return SLOAD(1) + SLOAD(2)
    const code = new Uint8Array([
      0x60, 0x07, 0x60, 0x01, 0x55, 0x60, 0x01, 0x54, 0x60, 0x02, 0x54, 0x01, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3,
    ]);
    const got = await run(fast, code, new Uint8Array(0), 100_000n);
    expect(got).toEqual(await run(reference, code, new Uint8Array(0), 100_000n));
    expect(BigInt(got.returned)).toBe(7n);
    // 22,100 (cold SSTORE) + 100 (warm SLOAD) + 2,100 (cold SLOAD) + 5 PUSH1 + 2 PUSH0 + ADD + MSTORE with its memory
    expect(100_000n - got.gasLeft!).toBe(22_100n + 100n + 2_100n + 5n * 3n + 2n * 2n + 3n + 6n);
  });
});
