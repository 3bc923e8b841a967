/**
 * A faster main loop for ethereumjs 10.1.3's interpreter, for one EVM at a time (the stateless
 * executor's, when not asked for the reference path). The library awaits an async `runStep` for
 * every opcode, so every ADD, PUSH or JUMP costs a promise and a microtask; most opcodes have a
 * fixed gas cost and a synchronous handler. Here those run inline (charge the fixed gas, advance the
 * program counter, call the library's own handler), and so do MLOAD, MSTORE, MSTORE8, KECCAK256,
 * CALLDATACOPY, CODECOPY, RETURNDATACOPY, RETURN and REVERT, whose dynamic gas (memory expansion, hashed or copied words) is computed here with the
 * library's own `subMemUsage` and `divCeil` instead of its async handlers, and the environment
 * reads the library marks async though their handlers are synchronous (CALLDATALOAD, CALLER, ...).
 * The stack-only opcodes (PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST) and the cheap arithmetic
 * (ADD, SUB, comparisons, bitwise, shifts) work on the stack's array without a handler call. Every
 * other opcode goes through the library's `runStep` as before. MLOAD, MSTORE and SLOAD convert
 * between words and bytes without the library's hex-string round trip and array spreads (the same
 * values). fast-interpreter.test.ts holds the loop against the library's on random bytecode.
 *
 * Taken only where nothing else observes single steps: no `step` listeners, no debug, no
 * profiler, none of EOF (EIP-3540), Verkle code chunks (6800/7864) or EIP-7928; otherwise the
 * library's own loop runs. The interpreter is not exported, so its prototype is reached through
 * the package's own module file, as in jump-analysis-cache.ts.
 */
import { EVMError, type EVM } from '@ethereumjs/evm';
import { stackOp, type RunState } from './fast-opcodes.ts';

type OpInfo = { code: number; feeBigInt: bigint; dynamicGas: boolean; isAsync: boolean; isInvalid: boolean };
type OpEntry = { opcodeInfo: OpInfo; opHandler: (runState: RunState, common: unknown) => unknown };
type Analysis = { jumps: Uint8Array; pushes: Record<number, bigint>; opcodesCached: OpEntry[] };
type InterpreterLike = {
  _runState: RunState;
  _evm: EVM & { DEBUG: boolean; events: { listenerCount(name: string): number } };
  _env: unknown;
  common: { isActivatedEIP(eip: number): boolean };
  profilerOpts?: { enabled?: boolean };
  run(code: Uint8Array, opts?: { pc?: number }): Promise<{ runState: RunState; exceptionError?: EVMError }>;
  runStep(entry?: OpEntry): Promise<void>;
  lookupOpInfo(op: number): OpEntry;
  useGas(amount: bigint, context?: unknown): void;
  _getValidJumpDestinations(code: Uint8Array): Analysis;
};

type GasUtil = {
  subMemUsage(state: RunState, offset: bigint, length: bigint, common: unknown): bigint;
  divCeil(a: bigint, b: bigint): bigint;
};
type Common = { param(name: string): bigint };
/** Synchronous twins of the library's memory-only dynamic gas handlers (opcodes/gas.js), by opcode. */
const syncGas: ((state: RunState, gas: bigint, common: Common) => bigint)[] = [];
/**
 * Opcodes the library marks async whose handlers (opcodes/functions.js) are synchronous functions
 * (they read the call's environment, not the state): ADDRESS, ORIGIN, CALLER, CALLVALUE,
 * CALLDATALOAD, CALLDATASIZE, CALLDATACOPY, RETURNDATASIZE, RETURNDATACOPY, COINBASE, TIMESTAMP,
 * NUMBER, PREVRANDAO, GASLIMIT. Awaiting their `undefined` result is all the async step adds.
 */
const syncHandlers = new Uint8Array(256);
for (const code of [0x30, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x3d, 0x3e, 0x41, 0x42, 0x43, 0x44, 0x45]) syncHandlers[code] = 1;

/** opcodes/EIP2929.js `accessStorageEIP2929`: warms the slot, returns its cold or warm read cost. */
type AccessStorage = (state: RunState, key: Uint8Array, isSstore: boolean, common: unknown) => bigint;
let accessStorage: AccessStorage | undefined;

const fastEvms = new WeakSet<object>();
let installed: Promise<void> | undefined;

/**
 * Runs this EVM's calls on the faster loop and word conversions (see the file's comment).
 *
 * @example await useFastInterpreter(vm.evm)
 */
export async function useFastInterpreter(evm: object): Promise<void> {
  installed ??= install();
  await installed;
  const map = (evm as unknown as { _opcodeMap: OpEntry[] })._opcodeMap;
  for (const [code, handler] of fastHandlers) if (map[code]) map[code] = { ...map[code], opHandler: handler };
  fastEvms.add(evm);
}

async function install(): Promise<void> {
  const url = new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm'));
  const { Interpreter } = (await import(url.href)) as { Interpreter: { prototype: InterpreterLike } };
  const { subMemUsage, divCeil } = (await import(new URL('./opcodes/util.js', url).href)) as GasUtil;
  ({ accessStorageEIP2929: accessStorage } = (await import(new URL('./opcodes/EIP2929.js', url).href)) as {
    accessStorageEIP2929: AccessStorage;
  });
  const memory = (size: bigint) => (state: RunState, gas: bigint, common: Common) =>
    gas + subMemUsage(state, state.stack.peek(1)[0]!, size, common);
  syncGas[0x51] = memory(32n); // MLOAD
  syncGas[0x52] = memory(32n); // MSTORE
  syncGas[0x53] = memory(1n); // MSTORE8
  const copy = (state: RunState, gas: bigint, common: Common) => {
    // CALLDATACOPY, CODECOPY, RETURNDATACOPY: memory expansion and copied words
    const [memOffset, , length] = state.stack.peek(3) as [bigint, bigint, bigint];
    gas += subMemUsage(state, memOffset, length, common);
    return length === 0n ? gas : gas + common.param('copyGas') * divCeil(length, 32n);
  };
  syncGas[0x37] = copy;
  syncGas[0x39] = copy;
  syncGas[0x3e] = (state, gas, common) => {
    // RETURNDATACOPY: reading past the return data is out of gas (legacy code; EOF never runs here)
    const [, offset, length] = state.stack.peek(3) as [bigint, bigint, bigint];
    if (offset + length > state.interpreter.getReturnDataSize()) throw new EVMError(EVMError.errorMessages.OUT_OF_GAS);
    return copy(state, gas, common);
  };
  const returned = (state: RunState, gas: bigint, common: Common) => {
    // RETURN, REVERT: memory expansion
    const [offset, length] = state.stack.peek(2) as [bigint, bigint];
    return gas + subMemUsage(state, offset, length, common);
  };
  syncGas[0xf3] = returned;
  syncGas[0xfd] = returned;
  syncGas[0x20] = (state, gas, common) => {
    // KECCAK256
    const [offset, length] = state.stack.peek(2) as [bigint, bigint];
    return gas + subMemUsage(state, offset, length, common) + common.param('keccak256WordGas') * divCeil(length, 32n);
  };
  const original = Interpreter.prototype.run;
  Interpreter.prototype.run = function (this: InterpreterLike, code, opts = {}) {
    const common = this.common;
    const plain =
      fastEvms.has(this._evm) &&
      this.profilerOpts?.enabled !== true &&
      !this._evm.DEBUG &&
      this._evm.events.listenerCount('step') === 0 &&
      ![3540, 6800, 7864, 7928].some((eip) => common.isActivatedEIP(eip));
    return plain ? runLegacy(this, code, opts.pc) : original.call(this, code, opts);
  };
}

const stopMessage = EVMError.errorMessages.STOP;

/** The library's loop for legacy bytecode (interpreter.js `run`), with static-gas synchronous opcodes inline. */
async function runLegacy(self: InterpreterLike, code: Uint8Array, pc: number | undefined) {
  const state = self._runState;
  state.code = code;
  state.programCounter = pc ?? state.programCounter;
  if (state.programCounter !== 0 && (state.programCounter < 0 || state.programCounter >= code.length))
    throw new Error('Internal error: program counter not in range');
  let err: EVMError | undefined;
  let cached: OpEntry[] | undefined;
  const common = self.common;
  while (state.programCounter < code.length) {
    const counter = state.programCounter;
    let entry: OpEntry | undefined;
    let opCode: number;
    if (cached === undefined) {
      opCode = code[counter]!;
      if (opCode === 0x56 || opCode === 0x57 || opCode === 0x5e) {
        const { jumps, pushes, opcodesCached } = self._getValidJumpDestinations(code);
        state.validJumps = jumps;
        state.cachedPushes = pushes;
        state.shouldDoJumpAnalysis = false;
        cached = opcodesCached;
      }
    } else {
      entry = cached[counter]!;
      opCode = entry.opcodeInfo.code;
    }
    state.opCode = opCode;
    try {
      const info = (entry ??= self.lookupOpInfo(opCode)).opcodeInfo;
      const gas = info.dynamicGas ? syncGas[opCode] : undefined;
      if (opCode === 0x54 && accessStorage !== undefined && state.stack._len > 0 && state.eip7928PostTargetCallOog === undefined) {
        await sload(self, state, info.feeBigInt, accessStorage);
      } else if (
        (info.dynamicGas && !gas) ||
        (info.isAsync && syncHandlers[opCode] !== 1) ||
        info.isInvalid ||
        state.eip7928PostTargetCallOog !== undefined
      ) {
        await self.runStep(entry);
      } else {
        self.useGas(gas ? gas(state, info.feeBigInt, common as unknown as Common) : info.feeBigInt, info);
        state.programCounter++;
        if (!stackOp(state, opCode, code.length)) entry.opHandler(state, common);
      }
    } catch (error) {
      const e = error as { errorType?: string; error?: string };
      if (e?.errorType !== 'EVMError') throw error;
      if (e.error !== stopMessage) err = error as EVMError;
      break;
    }
  }
  if (err === undefined && state.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && state.gasLeft > 0n) {
    state.gasLeft = 0n;
    err = new EVMError(EVMError.errorMessages.OUT_OF_GAS);
  }
  return { runState: state, exceptionError: err };
}

/**
 * SLOAD without the library's step: its gas handler (opcodes/gas.js: the EIP-2929 access cost,
 * which warms the slot; no Verkle here) with the key converted once, then the handler's load.
 */
async function sload(self: InterpreterLike, state: RunState, fee: bigint, access: AccessStorage) {
  const stack = state.stack;
  const key = wordToBytes(stack._store[stack._len - 1]!);
  self.useGas(fee + access(state, key, false, self.common), undefined);
  state.programCounter++;
  stack._len--;
  const value = await state.interpreter.storageLoad(key);
  stack.push(value.length ? bytesToWordLoose(value) : 0n);
}

/** A 256-bit word as 32 big-endian bytes (stack values are in [0, 2^256)). */
export function wordToBytes(word: bigint): Uint8Array {
  const out = new Uint8Array(32);
  if (word <= 0xffffffffn) {
    // Offsets, small counters and booleans: most words the EVM stores.
    const small = Number(word);
    out[28] = small >>> 24;
    out[29] = (small >>> 16) & 0xff;
    out[30] = (small >>> 8) & 0xff;
    out[31] = small & 0xff;
    return out;
  }
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt.asUintN(64, word >> 192n));
  view.setBigUint64(8, BigInt.asUintN(64, word >> 128n));
  view.setBigUint64(16, BigInt.asUintN(64, word >> 64n));
  view.setBigUint64(24, BigInt.asUintN(64, word));
  return out;
}

const scratch = new Uint8Array(32);
const scratchView = new DataView(scratch.buffer);
/** A word as 32 big-endian bytes in one shared array, valid until the next call (copy it out at once). */
function wordInto(word: bigint): Uint8Array {
  if (word <= 0xffffffffn) {
    scratch.fill(0, 0, 28);
    scratchView.setUint32(28, Number(word));
    return scratch;
  }
  scratchView.setBigUint64(0, BigInt.asUintN(64, word >> 192n));
  scratchView.setBigUint64(8, BigInt.asUintN(64, word >> 128n));
  scratchView.setBigUint64(16, BigInt.asUintN(64, word >> 64n));
  scratchView.setBigUint64(24, BigInt.asUintN(64, word));
  return scratch;
}

/** 32 big-endian bytes as a word. */
export function bytesToWord(bytes: Uint8Array): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, 32);
  return (view.getBigUint64(0) << 192n) | (view.getBigUint64(8) << 128n) | (view.getBigUint64(16) << 64n) | view.getBigUint64(24);
}

/** The library's MLOAD, MSTORE and SLOAD handlers (opcodes/functions.js) with the conversions above. */
const fastHandlers = new Map<number, OpEntry['opHandler']>([
  [
    0x51,
    (state) => {
      const position = state.stack.pop();
      state.stack.push(bytesToWord(state.memory.read(Number(position), 32, true)));
    },
  ],
  [
    0x52,
    (state) => {
      const [offset, word] = state.stack.popN(2) as [bigint, bigint];
      // The library's memory.write(offset, 32, bytes), the word put straight into the store.
      const at = Number(offset);
      state.memory.extend(at, 32);
      state.memory._store.set(wordInto(word), at);
    },
  ],
  [
    0x54,
    async (state) => {
      const value = await state.interpreter.storageLoad(wordToBytes(state.stack.pop()));
      state.stack.push(value.length ? bytesToWordLoose(value) : 0n);
    },
  ],
]);

/** A storage value (up to 32 bytes, big-endian, as the trie keeps it: no leading zeros) as a word. */
export function bytesToWordLoose(bytes: Uint8Array): bigint {
  if (bytes.length === 32) return bytesToWord(bytes);
  if (bytes.length <= 6) {
    let small = 0;
    for (const byte of bytes) small = small * 256 + byte;
    return BigInt(small);
  }
  let word = 0n;
  for (const byte of bytes) word = (word << 8n) | BigInt(byte);
  return word;
}
