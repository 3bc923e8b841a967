/**
 * ethereumjs 10.1.3 analyses a contract's jump destinations (and caches its opcodes) again for
 * every call frame; on real blocks that is about a quarter of execution time. This keeps the
 * analysis per code array and hardfork: the state manager hands out one array per contract code,
 * and the analysis is only read afterwards. The interpreter is not exported, so its prototype is
 * reached through the package's own module file (the same module instance the EVM uses).
 */
type Analysis = { jumps: Uint8Array; pushes: Record<number, bigint>; opcodesCached: unknown[] };
type InterpreterLike = { common: { hardfork(): string }; _getValidJumpDestinations(code: Uint8Array): Analysis };

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
      if (!analysis) byFork.set(fork, (analysis = analyse.call(this, code)));
      return analysis;
    };
  })();
  return installed;
}
