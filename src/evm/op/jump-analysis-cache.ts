/**
 * ethereumjs 10.1.3 analyses a contract's jump destinations (and caches its opcodes) again for
 * every call frame; on real blocks that is about a quarter of execution time. This keeps the
 * analysis per code array and hardfork: the state manager hands out one array per contract code,
 * and the analysis is only read afterwards. The analysis itself is the library's, with push
 * values read from the bytes instead of through a hex string (jump-analysis-cache.test.ts holds
 * the two equal). The interpreter is not exported, so its prototype is reached through the
 * package's own module file (the same module instance the EVM uses).
 */
type Analysis = { jumps: Uint8Array; pushes: Record<number, bigint>; opcodesCached: unknown[] };
export type InterpreterLike = {
  common: { hardfork(): string; isActivatedEIP(eip: number): boolean };
  lookupOpInfo(op: number): unknown;
  _getValidJumpDestinations(code: Uint8Array): Analysis;
};

let installed: Promise<void> | undefined;

export function installJumpAnalysisCache(): Promise<void> {
  installed ??= (async () => {
    const url = new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm'));
    const { Interpreter } = (await import(url.href)) as { Interpreter: { prototype: InterpreterLike } };
    const analyse = Interpreter.prototype._getValidJumpDestinations;
    const cache = new WeakMap<Uint8Array, Map<string, Analysis>>();
    Interpreter.prototype._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array) {
      let byFork = cache.get(code);
      if (!byFork) cache.set(code, (byFork = new Map()));
      const fork = this.common.hardfork();
      let analysis = byFork.get(fork);
      // EIP-8024 (DUPN/SWAPN/EXCHANGE immediates) changes the walk: the library's own analysis then.
      if (!analysis) byFork.set(fork, (analysis = this.common.isActivatedEIP(8024) ? analyse.call(this, code) : analyseLegacy(this, code)));
      return analysis;
    };
  })();
  return installed;
}

/**
 * The library's `_getValidJumpDestinations` (interpreter.js) without EIP-8024: the JUMPDEST map,
 * each PUSH's value keyed by the position after its opcode (zero-padded on the right past the
 * end of the code), and the opcode entry of every byte. Push values are read byte by byte instead
 * of through the library's hex string.
 */
export function analyseLegacy(interpreter: InterpreterLike, code: Uint8Array): Analysis {
  const jumps = new Uint8Array(code.length);
  const pushes: Record<number, bigint> = {};
  const opcodesCached = Array<unknown>(code.length);
  for (let i = 0; i < code.length; i++) {
    const opcode = code[i]!;
    opcodesCached[i] = interpreter.lookupOpInfo(opcode);
    if (opcode >= 0x60 && opcode <= 0x7f) {
      const size = opcode - 0x5f;
      pushes[i + 1] = pushValue(code, i + 1, size);
      i += size;
    } else if (opcode === 0x5b) {
      jumps[i] = 1;
    }
  }
  return { jumps, pushes, opcodesCached };
}

/** `size` big-endian bytes of `code` from `start`, the bytes past its end read as zeros. */
function pushValue(code: Uint8Array, start: number, size: number): bigint {
  if (size <= 6) {
    let small = 0;
    for (let j = 0; j < size; j++) small = small * 256 + (code[start + j] ?? 0);
    return BigInt(small);
  }
  let value = 0n;
  for (let j = 0; j < size; j += 6) {
    const width = Math.min(6, size - j);
    let chunk = 0;
    for (let k = 0; k < width; k++) chunk = chunk * 256 + (code[start + j + k] ?? 0);
    value = (value << BigInt(8 * width)) | BigInt(chunk);
  }
  return value;
}
