import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keccak256, type Hex } from 'viem';
import { createDevnet } from '../devnet/edr/devnet.ts';
import { createEnclaveCore, zeroHash } from '../src/prover/enclave/core.ts';
import { createReexecPool, type ReexecPool } from '../src/prover/enclave/reexec-pool.ts';
import type { BlockJob } from '../src/prover/enclave/reexec-jobs.ts';
import { outputRootV0 } from '../src/prover/output-root.ts';
import { collectWitness } from '../src/prover/host/witness.ts';
import { executeBlock, type BlockToExecute } from '../src/evm/op/execute-block.ts';
import { parseBlockFixture, type BlockFixture } from '../src/prover/host/fixture.ts';
import { encodeHeader, headerFromRpc } from '../src/op/header.ts';
import { rpcCall } from '../test/helpers/prover-fixture.ts';
import { sharedPath } from '../test/helpers/shared.ts';
import { konaBinary, runKona } from './peers/kona-reexec.ts';

/**
 * Stateless re-execution, side by side in one run:
 *   - the 8 real OP Sepolia blocks (shared/fixtures/op-blocks): flashlog's executor on its fast path
 *     (crypto.ts, fast-interpreter.ts) and on the reference path (ethereumjs's pure-JS crypto and
 *     interpreter loop, what re-execution ran on before), interleaved block by block so both see the
 *     same machine; kona's executor (Rust, bench/peers/kona-reexec) on the same files; and hashing
 *     the given header (what the header-only check does per block);
 *   - a devnet range: the enclave's Prove with --enclave-check reexecute vs. headers.
 *
 * What the figures mean (also in docs/performance.md):
 *   - warm Mgas/s: the 8 blocks' gas ÷ the time spent in executeBlock over them, after one warm-up
 *     pass of each path in the same process (modules loaded, JIT warm), averaged over ROUNDS passes;
 *     each execution gets a fresh copy of the witness, so no cache keyed by it carries over. `cpu`
 *     columns divide by the process's CPU time in the same windows (this machine is shared: wall
 *     time includes waiting for a core), the others by wall time. The headline ratio is on CPU time.
 *   - cold Mgas/s: a fresh process (bench/children/reexec-cold.ts) importing the executor and
 *     running each block once: module loading, WebAssembly compilation and an unwarmed JIT
 *     included; process start and fixture parsing excluded.
 *   - kona: the same definitions in its own process (round 1 cold, rounds 2-3 warm).
 *   - range: the 8 blocks as one range of independent blocks through the enclave's re-execution
 *     threads (src/prover/enclave/reexec-pool.ts) with 1, 2 and available-parallelism threads, each
 *     running executeBlock as above (bench/children/reexec-range-worker.ts: these pre-Isthmus
 *     witnesses cannot give the message passer's storage root); the 8 witnesses as one proof's witness, packed and sent to each thread once per pass; wall
 *     Mgas/s = the 8 blocks' gas ÷ the pass's wall time (packing and sending the witness included),
 *     after one warm-up pass per variant, averaged over ROUNDS passes interleaved with the same 8
 *     blocks in this thread (fast and reference); `cpu` over the whole process's CPU time (every
 *     thread). Ratios against those in-thread passes, on wall time.
 */
const fixtures = sharedPath('fixtures/op-blocks');
const ROUNDS = 2;
const here = fileURLToPath(new URL('.', import.meta.url));

type Mode = 'reference' | 'fast';
const round2 = (value: number) => Number(value.toFixed(2));

/** A fixture's block with its own copy of the witness (nothing keyed by the arrays is shared between runs). */
const freshCopy = (block: BlockToExecute): BlockToExecute => ({
  ...block,
  witness: new Map([...block.witness].map(([key, value]) => [key, value.slice()])),
});

function coldRun(mode: Mode, files: string[]): { gas: number; ms: number; cpuMs: number } {
  const child = spawnSync(process.execPath, [join(here, 'children', 'reexec-cold.ts'), mode, ...files], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`reexec-cold ${mode}: ${child.stderr.trim()}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { gas: number; ms: number; cpuMs: number };
}

async function fixtureRows(): Promise<Record<string, unknown>[]> {
  const files = readdirSync(fixtures)
    .filter((name) => name.startsWith('op-sepolia-') && name.endsWith('.json'))
    .sort()
    .map((name) => join(fixtures, name));
  const parsed = files.map((file) => parseBlockFixture(JSON.parse(readFileSync(file, 'utf8')), basename(file)));
  const modes: Mode[] = ['reference', 'fast'];
  const execute = async (mode: Mode, fixture: BlockFixture) => {
    const block = freshCopy(fixture.block);
    const [t0, cpu0] = [performance.now(), process.cpuUsage()];
    const executed = await executeBlock(block, { reference: mode === 'reference' });
    const cpu = process.cpuUsage(cpu0);
    const timing = { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
    if (executed.hash !== fixture.expectedHash) throw new Error(`${mode}: block ${executed.header.number}: hash differs`);
    return { executed, ...timing };
  };
  for (const mode of modes) for (const fixture of parsed) await execute(mode, fixture); // warm-up
  const totals = { reference: { ms: 0, cpuMs: 0 }, fast: { ms: 0, cpuMs: 0 } };
  let gas = 0n;
  let headerMs = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const fixture of parsed) {
      for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
        const { executed, ms, cpuMs } = await execute(mode, fixture);
        totals[mode].ms += ms;
        totals[mode].cpuMs += cpuMs;
        if (mode !== 'fast') continue;
        if (round === 0) gas += executed.header.gasUsed;
        const t1 = performance.now();
        if (keccak256(encodeHeader(executed.header)) !== fixture.expectedHash) throw new Error('header hash');
        headerMs += performance.now() - t1;
      }
    }
  }
  const mgas = Number(gas) / 1e6;
  const perS = (ms: number) => round2(mgas / (ms / 1000));
  const rows: Record<string, unknown>[] = [];
  const figures: Record<Mode, { warmMgasPerS: number; warmCpuMgasPerS: number; coldMgasPerS: number; coldCpuMgasPerS: number }> =
    {} as never;
  for (const mode of modes) {
    const cold = coldRun(mode, files);
    figures[mode] = {
      warmMgasPerS: perS(totals[mode].ms / ROUNDS),
      warmCpuMgasPerS: perS(totals[mode].cpuMs / ROUNDS),
      coldMgasPerS: perS(cold.ms),
      coldCpuMgasPerS: perS(cold.cpuMs),
    };
    rows.push({
      case: `flashlog ${mode === 'fast' ? 'fast path' : 'reference path (pure-JS crypto, library loop)'}, ${parsed.length} op-sepolia blocks, ${mgas.toFixed(2)} Mgas`,
      ...figures[mode],
      ...(mode === 'fast' ? { headerOnlyOverReexec: Math.round(totals.fast.ms / headerMs) } : {}),
    });
  }
  const ratio = (a: typeof figures.fast, b: typeof figures.fast) => ({
    warmMgasPerS: round2(a.warmMgasPerS / b.warmMgasPerS),
    warmCpuMgasPerS: round2(a.warmCpuMgasPerS / b.warmCpuMgasPerS),
    coldMgasPerS: round2(a.coldMgasPerS / b.coldMgasPerS),
    coldCpuMgasPerS: round2(a.coldCpuMgasPerS / b.coldCpuMgasPerS),
  });
  rows.push({ case: 'ratio: fast / reference', ...ratio(figures.fast, figures.reference) });
  rows.push(...(await rangeRows(parsed)));
  const kona = konaBinary();
  if ('skipped' in kona) {
    process.stderr.write(`reexec: kona peer skipped: ${kona.skipped}\n`);
    rows.push({ case: `kona-executor peer skipped: ${kona.skipped}` });
  } else {
    const peer = runKona(kona.binary, files);
    const { warmMgasPerS, warmCpuMgasPerS, coldMgasPerS, coldCpuMgasPerS } = peer;
    rows.push({
      case: `kona-executor 0.4 (Rust, revm), the same ${peer.blocks} blocks`,
      warmMgasPerS,
      warmCpuMgasPerS,
      coldMgasPerS,
      coldCpuMgasPerS,
    });
    rows.push({
      case: 'ratio: flashlog fast / kona',
      ...ratio(figures.fast, { warmMgasPerS, warmCpuMgasPerS, coldMgasPerS, coldCpuMgasPerS }),
    });
  }
  return rows;
}

/**
 * The fixtures as one range through the pool, with 1, 2 and available-parallelism threads (see the
 * header), interleaved round by round with the same blocks run one after the other in this thread
 * on the fast and the reference path, so every variant sees the same machine.
 */
async function rangeRows(parsed: BlockFixture[]): Promise<Record<string, unknown>[]> {
  const config = parsed[0]!.block.config;
  const witness = new Map<Hex, Uint8Array>();
  const jobs: BlockJob[] = [];
  let gas = 0n;
  for (const fixture of parsed) {
    if (JSON.stringify(fixture.block.config) !== JSON.stringify(config)) throw new Error('range: the fixtures are of different chains');
    const executed = await executeBlock(freshCopy(fixture.block));
    const rlp = encodeHeader(executed.header);
    if (keccak256(rlp) !== fixture.expectedHash) throw new Error(`range: block ${executed.header.number}: hash differs`);
    for (const [key, value] of fixture.block.witness) witness.set(key, value);
    jobs.push({
      number: Number(executed.header.number),
      parentRlp: encodeHeader(fixture.block.parent),
      rlp,
      derived: fixture.block.attributes,
    });
    gas += executed.header.gasUsed;
  }
  const mgas = Number(gas) / 1e6;
  const timed = async (body: () => Promise<void>) => {
    const [t0, cpu0] = [performance.now(), process.cpuUsage()];
    await body();
    const cpu = process.cpuUsage(cpu0);
    return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
  };
  const inThread = (mode: Mode) => async () => {
    for (const fixture of parsed) await execute(mode, fixture);
  };
  const execute = async (mode: Mode, fixture: BlockFixture) => {
    if ((await executeBlock(freshCopy(fixture.block), { reference: mode === 'reference' })).hash !== fixture.expectedHash)
      throw new Error(`range: ${mode}: hash differs`);
  };
  const packs = { packMs: 0, postMs: 0, bytes: 0 };
  const onPool = (pool: ReexecPool) => async () => {
    const session = pool.session(config, witness);
    const done = await Promise.all(jobs.map((job) => session.run(job)));
    session.end();
    done.forEach((block, i) => {
      if (block.hash !== parsed[i]!.expectedHash) throw new Error(`range: block ${block.number}: hash differs`);
    });
    [packs.packMs, packs.postMs, packs.bytes] = [session.stats.packMs, session.stats.postMs, session.stats.bytes];
  };
  const workerUrl = new URL('./children/reexec-range-worker.ts', import.meta.url);
  const counts = [...new Set([1, 2, availableParallelism()])];
  const pools = counts.map((workers) => createReexecPool({ workers, workerUrl }));
  const variants: { name: string; run: () => Promise<void>; ms: number; cpuMs: number; pack?: typeof packs }[] = [
    { name: 'reference', run: inThread('reference'), ms: 0, cpuMs: 0 },
    { name: 'fast', run: inThread('fast'), ms: 0, cpuMs: 0 },
    ...pools.map((pool, i) => ({ name: `pool${counts[i]}`, run: onPool(pool), ms: 0, cpuMs: 0 })),
  ];
  try {
    for (const variant of variants) await variant.run(); // warm-up: threads started, JIT warm
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        const { ms, cpuMs } = await timed(variant.run);
        variant.ms += ms;
        variant.cpuMs += cpuMs;
        if (variant.name.startsWith('pool')) variant.pack = { ...packs };
      }
    }
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
  const wall = (variant: (typeof variants)[number]) => round2(mgas / (variant.ms / ROUNDS / 1000));
  const [reference, fast] = [variants[0]!, variants[1]!];
  return variants.map((variant, i) => ({
    case:
      i === 0
        ? `range, in this thread, reference path (interleaved with the rows below)`
        : i === 1
          ? `range, in this thread, fast path`
          : `range on ${counts[i - 2]} worker thread${counts[i - 2] === 1 ? '' : 's'}, fast path (witness packed and sent each pass)`,
    warmMgasPerS: wall(variant),
    warmCpuMgasPerS: round2(mgas / (variant.cpuMs / ROUNDS / 1000)),
    overReference: round2(wall(variant) / wall(reference)),
    overFastInThread: round2(wall(variant) / wall(fast)),
    ...(variant.pack
      ? {
          witnessMiB: round2(variant.pack.bytes / 2 ** 20),
          witnessPackMs: round2(variant.pack.packMs),
          witnessPostMs: round2(variant.pack.postMs),
        }
      : {}),
  }));
}

export async function run(): Promise<Record<string, unknown>[]> {
  const rows = await fixtureRows();
  const devnet = await createDevnet({ blockTimeMs: 250, load: 60 });
  try {
    const call = rpcCall(devnet.rpcUrl);
    const blocks = 20;
    const deadline = Date.now() + 60_000;
    while (Number(BigInt((await call('eth_blockNumber', [])) as Hex)) < blocks + 1) {
      if (Date.now() > deadline) throw new Error('devnet too slow');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const headers = await Promise.all(
      Array.from(
        { length: blocks + 1 },
        (_, i) => call('eth_getBlockByNumber', [`0x${(i + 1).toString(16)}`, false]) as Promise<Record<string, string>>,
      ),
    );
    const root = (h: Record<string, string>) => outputRootV0(h.stateRoot as Hex, h.withdrawalsRoot as Hex, h.hash as Hex);
    for (const h of headers) if (keccak256(encodeHeader(headerFromRpc(h))) !== h.hash) throw new Error('devnet header');
    const request = {
      l1Head: headers[0]!.hash as Hex,
      agreedL2HeadHash: headers[0]!.hash as Hex,
      agreedL2OutputRoot: root(headers[0]!),
      claimedL2OutputRoot: root(headers[blocks]!),
      claimedL2BlockNumber: blocks + 1,
      proposer: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65' as Hex,
      intermediateBlockInterval: 1,
      l1HeadNumber: 1,
      imageHash: zeroHash,
    };
    const t0 = performance.now();
    const preimages = await collectWitness(request, { l1: call, l2: call, l2ChainId: 1337 });
    const witnessMs = performance.now() - t0;
    const devnetGas = headers.slice(1).reduce((sum, h) => sum + Number(BigInt(h.gasUsed!)), 0);
    const txs = (
      await Promise.all(headers.slice(1).map((h) => call('eth_getBlockTransactionCountByHash', [h.hash]) as Promise<Hex>))
    ).reduce((sum, n) => sum + Number(BigInt(n)), 0);
    const key = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
    const pool = createReexecPool({ workers: 2 });
    const timed = async (check: 'reexecute' | 'headers', threads?: ReexecPool) => {
      const core = createEnclaveCore({ privateKey: key, check, ...(threads ? { pool: threads } : {}) });
      const t = performance.now();
      const response = await core.handle({ type: 'prove', preimages });
      if (response.type !== 'prove') throw new Error(JSON.stringify(response));
      return performance.now() - t;
    };
    await timed('reexecute');
    const reexec = await timed('reexecute');
    const headerOnly = await timed('headers');
    await timed('reexecute', pool);
    const reexecTwoThreads = await timed('reexecute', pool);
    await pool.close();
    rows.push({
      case: `devnet range (${blocks} blocks, ${txs} txs, ${(devnetGas / 1e6).toFixed(2)} Mgas), enclave Prove`,
      reexecBlocksPerS: Number((blocks / (reexec / 1000)).toFixed(2)),
      reexecMgasPerS: Number((devnetGas / 1e6 / (reexec / 1000)).toFixed(2)),
      reexec2ThreadsMgasPerS: Number((devnetGas / 1e6 / (reexecTwoThreads / 1000)).toFixed(2)),
      headerOnlyBlocksPerS: Math.round(blocks / (headerOnly / 1000)),
      headerOnlyOverReexec: Math.round(reexec / headerOnly),
      hostWitnessMs: Math.round(witnessMs),
      preimages: preimages.length,
    });
  } finally {
    await devnet.close();
  }
  return rows;
}
