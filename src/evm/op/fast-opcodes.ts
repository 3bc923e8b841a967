/**
 * The opcodes the fast interpreter loop (fast-interpreter.ts) runs on the stack's own array, without
 * the library's handler call, and the library's run state as that loop sees it (ethereumjs 10.1.3,
 * interpreter.js; private fields read as they are there).
 */
export type RunState = {
  programCounter: number;
  code: Uint8Array;
  opCode: number;
  gasLeft: bigint;
  validJumps: Uint8Array;
  cachedPushes: Record<number, bigint>;
  shouldDoJumpAnalysis: boolean;
  eip7928PostTargetCallOog?: unknown;
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean;
  stack: {
    _store: bigint[];
    _len: number;
    _maxHeight: number;
    pop(): bigint;
    popN(n: number): bigint[];
    peek(n: number): bigint[];
    push(value: bigint): void;
    dup(position: number): void;
    swap(position: number): void;
  };
  memory: {
    read(offset: number, size: number, avoidCopy?: boolean): Uint8Array;
    write(offset: number, size: number, value: Uint8Array): void;
    extend(offset: number, size: number): void;
    _store: Uint8Array;
  };
  interpreter: { storageLoad(key: Uint8Array): Promise<Uint8Array>; getReturnDataSize(): bigint };
};

/**
 * PUSH1-32, DUP, SWAP, POP, JUMPDEST, JUMP and JUMPI (about 72% of the opcodes real blocks run)
 * and ADD, SUB, LT, GT, EQ, ISZERO, AND, OR, XOR, NOT, SHL, SHR without a handler call, after their fixed gas was charged and the program counter advanced: the
 * same effects as the library's handlers (opcodes/functions.js) on the stack's own array. False
 * where the library's handler must run instead: pushes before the jump analysis (the handler reads
 * the code), and every case that ends in an error (stack underflow or overflow, an invalid jump
 * destination), so errors are the library's own.
 */
export function stackOp(state: RunState, opCode: number, codeLength: number): boolean {
  const stack = state.stack;
  const len = stack._len;
  if (opCode >= 0x60 && opCode <= 0x7f) {
    if (state.shouldDoJumpAnalysis || len >= stack._maxHeight) return false;
    stack._store[stack._len++] = state.cachedPushes[state.programCounter]!;
    state.programCounter += opCode - 0x5f;
    return true;
  }
  if (opCode >= 0x80 && opCode <= 0x8f) {
    if (len < opCode - 0x7f || len >= stack._maxHeight) return false;
    stack._store[stack._len++] = stack._store[len - (opCode - 0x7f)]!;
    return true;
  }
  if (opCode >= 0x90 && opCode <= 0x9f) {
    const position = opCode - 0x8f;
    if (len <= position) return false;
    const store = stack._store;
    const top = store[len - 1]!;
    store[len - 1] = store[len - 1 - position]!;
    store[len - 1 - position] = top;
    return true;
  }
  if (opCode <= 0x1c && arithmetic[opCode] === 1) {
    const store = stack._store;
    if (opCode === 0x15 || opCode === 0x19) {
      if (len < 1) return false;
      const a = store[len - 1]!;
      store[len - 1] = opCode === 0x15 ? (a === 0n ? 1n : 0n) : maxWord ^ a;
      return true;
    }
    if (len < 2) return false;
    const a = store[len - 1]!;
    const b = store[len - 2]!;
    store[len - 2] = binary(opCode, a, b);
    stack._len = len - 1;
    return true;
  }
  switch (opCode) {
    case 0x5b: // JUMPDEST
      return true;
    case 0x50: // POP
      if (len < 1) return false;
      stack._len--;
      return true;
    case 0x56: {
      // JUMP
      if (len < 1) return false;
      const target = jumpTarget(state, stack._store[len - 1]!, codeLength);
      if (target < 0) return false;
      stack._len--;
      state.programCounter = target;
      return true;
    }
    case 0x57: {
      // JUMPI
      if (len < 2) return false;
      if (stack._store[len - 2] === 0n) {
        stack._len -= 2;
        return true;
      }
      const target = jumpTarget(state, stack._store[len - 1]!, codeLength);
      if (target < 0) return false;
      stack._len -= 2;
      state.programCounter = target;
      return true;
    }
  }
  return false;
}

const maxWord = (1n << 256n) - 1n;
const twoPow256 = 1n << 256n;
/** ADD, SUB, LT, GT, EQ, ISZERO, AND, OR, XOR, NOT, SHL, SHR: the operations inlined above. */
const arithmetic = new Uint8Array(0x1d);
for (const code of [0x01, 0x03, 0x10, 0x11, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1b, 0x1c]) arithmetic[code] = 1;

/** `a` the top of the stack, `b` the next, words in [0, 2^256), as the library's handlers read them. */
function binary(opCode: number, a: bigint, b: bigint): bigint {
  switch (opCode) {
    case 0x01: {
      const sum = a + b;
      return sum >= twoPow256 ? sum - twoPow256 : sum;
    }
    case 0x03: {
      const difference = a - b;
      return difference < 0n ? difference + twoPow256 : difference;
    }
    case 0x10:
      return a < b ? 1n : 0n;
    case 0x11:
      return a > b ? 1n : 0n;
    case 0x14:
      return a === b ? 1n : 0n;
    case 0x16:
      return a & b;
    case 0x17:
      return a | b;
    case 0x18:
      return a ^ b;
    case 0x1b:
      return a > 256n ? 0n : (b << a) & maxWord;
    default:
      return a > 256n ? 0n : b >> a; // 0x1c
  }
}

/** A valid JUMPDEST's position, or -1 (the library's handler then raises its INVALID_JUMP). */
function jumpTarget(state: RunState, destination: bigint, codeLength: number): number {
  // Past the code (the library's `dest > codeSize` check) or not a JUMPDEST: validJumps holds
  // code.length entries, and no code is 2^32 bytes long.
  if (destination >= 0x100000000n) return -1;
  const target = Number(destination);
  return target < codeLength && state.validJumps[target] === 1 ? target : -1;
}
