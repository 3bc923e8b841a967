import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { managed, report, rssMiB, sampleRss, sleep, startDevnet, stopAll } from './harness.ts';

/**
 * Scenario 6: JSON-RPC fuzzing. `flashlog serve` (the gateway) with the devnet under load as its
 * upstream, as a child process, receives at least 10,000 malformed or adversarial HTTP requests generated
 * by fast-check (seeded, so a failure can be replayed): invalid JSON, non-request values, wrong
 * versions, bad methods and params, invalid block tags and hex, deep nesting, batches over the
 * limit, bodies over the limit, unknown methods, and mixed batches. Every answer must be
 * well-formed JSON-RPC 2.0 with the code the class of input calls for and the request's id.
 */
const SEED = Number(process.env.CHAOS_FUZZ_SEED ?? 20261122);
const PER_CLASS = Number(process.env.CHAOS_FUZZ_PER_CLASS ?? 1000);
const ROUNDS = Number(process.env.CHAOS_FUZZ_ROUNDS ?? 3);
/**
 * The gateway's V8 heap is capped: a leak would end the process (out of memory) instead of only
 * growing its RSS, which on its own can't tell a leak from V8 sizing its heap.
 */
const HEAP_MIB = 128;
const MAX_BATCH = 100;
const MAX_BODY = 1024 * 1024;

afterAll(stopAll);

interface Case {
  readonly kind: string;
  readonly body: string;
  /** The code expected, with the id it must carry; `batch` expects an array of per-call answers. */
  readonly expect:
    | { readonly code: number; readonly id: string | number | null; readonly status?: number }
    | { readonly batch: readonly { code: number | 'result'; id: number }[] };
}

const id = fc.oneof(fc.integer({ min: 0, max: 1e9 }), fc.string({ minLength: 1, maxLength: 20 }));
const junk = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 40 }),
  fc.array(fc.integer(), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);
const notTag = fc
  .string({ maxLength: 30 })
  .filter((s) => !/^(latest|pending|safe|finalized|earliest|0x(0|[1-9a-fA-F][0-9a-fA-F]{0,63}))$/.test(s));
const notAddress = fc
  .oneof(fc.string({ maxLength: 50 }), fc.integer(), fc.constant('0x1234'))
  .filter((s) => typeof s !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(s));
const call = (value: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', ...value });
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

const classes: Record<string, fc.Arbitrary<Case>> = {
  'invalid JSON': fc
    .oneof(
      fc.string({ minLength: 1, maxLength: 200 }).filter((s) => {
        try {
          JSON.parse(s);
          return false;
        } catch {
          return true;
        }
      }),
      fc.tuple(id, fc.nat({ max: 30 })).map(([i, cut]) => call({ id: i, method: 'eth_blockNumber', params: [] }).slice(0, 5 + cut)),
    )
    .map((body) => ({ kind: 'invalid JSON', body, expect: { code: -32700, id: null } })),
  'not a request': junk
    .filter((v) => !Array.isArray(v) && !(typeof v === 'object' && v !== null))
    .map((v) => ({ kind: 'not a request', body: JSON.stringify(v), expect: { code: -32600, id: null } })),
  'wrong version': fc
    .tuple(
      id,
      fc.oneof(
        fc.constant('1.0'),
        fc.constant(2),
        fc.constant(null),
        fc.string({ maxLength: 5 }).filter((s) => s !== '2.0'),
      ),
    )
    .map(([i, version]) => ({
      kind: 'wrong version',
      body: JSON.stringify({ jsonrpc: version, id: i, method: 'eth_blockNumber', params: [] }),
      expect: { code: -32600, id: i },
    })),
  'bad method': fc
    .tuple(id, fc.oneof(fc.integer(), fc.constant(''), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })))
    .map(([i, method]) => ({
      kind: 'bad method',
      body: call({ id: i, method, params: [] }),
      expect: { code: -32600, id: i },
    })),
  'bad params type': fc.tuple(id, fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.boolean())).map(([i, params]) => ({
    kind: 'bad params type',
    body: call({ id: i, method: 'eth_getBalance', params }),
    expect: { code: -32600, id: i },
  })),
  'unknown method': fc.tuple(id, fc.stringMatching(/^[a-z]{1,12}_[A-Za-z0-9]{1,20}$/)).map(([i, name]) => ({
    kind: 'unknown method',
    body: call({ id: i, method: `fuzz${name}`, params: [] }),
    expect: { code: -32601, id: i },
  })),
  'invalid block tag': fc
    .tuple(id, notTag, fc.constantFrom('eth_getBlockByNumber', 'eth_getBlockReceipts', 'eth_getBlockTransactionCountByNumber'))
    .map(([i, tag, method]) => ({
      kind: 'invalid block tag',
      body: call({ id: i, method, params: method === 'eth_getBlockByNumber' ? [tag, false] : [tag] }),
      expect: { code: -32602, id: i },
    })),
  'bad address or hex': fc
    .tuple(
      id,
      notAddress,
      fc.constantFrom('eth_getBalance', 'eth_getCode', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_getLogs'),
    )
    .map(([i, bad, method]) => {
      const params =
        method === 'eth_call' || method === 'eth_estimateGas'
          ? [{ to: bad }, 'pending']
          : method === 'eth_getLogs'
            ? [{ fromBlock: 'pending', toBlock: 'pending', address: bad }]
            : [bad, 'pending'];
      return { kind: 'bad address or hex', body: call({ id: i, method, params }), expect: { code: -32602, id: i } };
    }),
  // Deeper than the gateway's 64 levels: refused as an invalid request before any method sees it.
  'deep nesting': fc
    .tuple(id, fc.integer({ min: 70, max: 20_000 }), fc.constantFrom('eth_getBlockByNumber', 'eth_call', 'fuzz_unknown'))
    .map(([i, depth, method]) => ({
      kind: 'deep nesting',
      body: `{"jsonrpc":"2.0","id":${JSON.stringify(i)},"method":"${method}","params":[${nested(depth)},false]}`,
      expect: { code: -32600, id: i },
    })),
  'batch over the limit': fc.integer({ min: MAX_BATCH + 1, max: MAX_BATCH * 5 }).map((size) => ({
    kind: 'batch over the limit',
    body: JSON.stringify(Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' }))),
    expect: { code: -32600, id: null },
  })),
  'mixed batch': fc.array(fc.constantFrom('good', 'unknown', 'badtag', 'version'), { minLength: 1, maxLength: 20 }).map((kinds) => {
    const items = kinds.map((k, i) =>
      k === 'good'
        ? { jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: ['pending', false] }
        : k === 'unknown'
          ? { jsonrpc: '2.0', id: i, method: 'fuzz_nothing', params: [] }
          : k === 'badtag'
            ? { jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: ['soon', false] }
            : { jsonrpc: '1.0', id: i, method: 'eth_chainId' },
    );
    const codes = { good: 'result', unknown: -32601, badtag: -32602, version: -32600 } as const;
    return {
      kind: 'mixed batch',
      body: JSON.stringify(items),
      expect: { batch: kinds.map((k, i) => ({ code: codes[k as keyof typeof codes], id: i })) },
    };
  }),
};
/** Bodies over the limit: few (each is over 1 MiB). */
const oversized = (i: number): Case => ({
  kind: 'body over the limit',
  body: call({ id: i, method: 'eth_call', params: [{ data: `0x${'00'.repeat(MAX_BODY / 2 + 10 + i)}` }, 'pending'] }),
  expect: { code: -32600, id: null, status: 413 },
});

function checkOne(answer: unknown, expected: { code: number | 'result'; id: string | number | null }): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return `not a response object: ${JSON.stringify(answer)?.slice(0, 100)}`;
  const response = answer as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
  if (response.jsonrpc !== '2.0') return `jsonrpc ${JSON.stringify(response.jsonrpc)}`;
  if (response.id !== expected.id) return `id ${JSON.stringify(response.id)}, expected ${JSON.stringify(expected.id)}`;
  if ('result' in response === 'error' in response) return 'not exactly one of result and error';
  if (expected.code === 'result') return 'result' in response ? undefined : `error ${JSON.stringify(response.error)}`;
  if (!response.error || typeof response.error.message !== 'string') return `no error object: ${JSON.stringify(answer).slice(0, 120)}`;
  return response.error.code === expected.code
    ? undefined
    : `code ${String(response.error.code)} (${String(response.error.message).slice(0, 80)}), expected ${expected.code}`;
}

describe('scenario 6: JSON-RPC fuzzing', () => {
  it(`${Object.keys(classes).length * PER_CLASS}+ malformed or adversarial requests: well-formed answers with the right code and id; the process stays up with bounded memory`, async () => {
    const dir = tempDir('flashlog-chaos-fuzz-');
    const devnet = await startDevnet(['--load', '10', '--metadata-receipts']);
    // The gateway alone (`serve`, the devnet as its upstream), so its memory is the gateway's.
    const gatewayProc = managed(
      [
        'serve',
        '--source',
        'flashblocks',
        '--rpc',
        devnet.rpc,
        '--data-dir',
        dir.path,
        '--port',
        '0',
        '--metrics-port',
        '0',
        '--max-batch',
        String(MAX_BATCH),
        '--max-body-bytes',
        String(MAX_BODY),
        '--log-level',
        'info',
      ],
      { NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` },
    );
    const url = String((await gatewayProc.current.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    await sleep(2000);

    const cases: Case[] = [];
    Object.values(classes).forEach((arbitrary, n) => cases.push(...fc.sample(arbitrary, { numRuns: PER_CLASS, seed: SEED + n })));
    for (let i = 0; i < 20; i++) cases.push(oversized(i));
    // Interleave the classes, deterministically.
    const order = fc.sample(
      fc.shuffledSubarray(
        cases.map((_, i) => i),
        { minLength: cases.length, maxLength: cases.length },
      ),
      { numRuns: 1, seed: SEED },
    )[0]!;

    const rssBefore = rssMiB(gatewayProc.pid);
    const sampler = sampleRss(() => gatewayProc.pid, 500);
    const failures: string[] = [];
    const byKind: Record<string, number> = {};
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < order.length) {
        const item = cases[order[next++]!]!;
        byKind[item.kind] = (byKind[item.kind] ?? 0) + 1;
        let status = 0;
        let text = '';
        try {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: item.body,
            signal: AbortSignal.timeout(15_000),
          });
          status = response.status;
          text = await response.text();
        } catch (error) {
          failures.push(`${item.kind}: no answer (${String(error)}) to ${item.body.slice(0, 80)}`);
          continue;
        }
        let answer: unknown;
        try {
          answer = JSON.parse(text);
        } catch {
          failures.push(`${item.kind}: HTTP ${status} body is not JSON: ${text.slice(0, 80)}`);
          continue;
        }
        if ('batch' in item.expect) {
          const batch = item.expect.batch;
          if (!Array.isArray(answer) || answer.length !== batch.length) {
            failures.push(`${item.kind}: expected ${batch.length} answers, got ${JSON.stringify(answer).slice(0, 100)}`);
            continue;
          }
          for (const expected of batch) {
            const got = answer.find((one: { id?: unknown }) => one?.id === expected.id);
            const problem = checkOne(got, expected);
            if (problem) failures.push(`${item.kind}[${expected.id}]: ${problem}`);
          }
        } else {
          const expectedStatus = item.expect.status ?? 200;
          if (status !== expectedStatus) failures.push(`${item.kind}: HTTP ${status}, expected ${expectedStatus}`);
          const problem = checkOne(answer, item.expect);
          if (problem) failures.push(`${item.kind}: ${problem} for ${item.body.slice(0, 80)}`);
        }
      }
    };
    // Rounds of the same requests: memory grows in the first ones while V8 sizes its heap; growth
    // that goes on round after round is a leak.
    const rssAfterRound: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      next = 0;
      await Promise.all(Array.from({ length: 8 }, worker));
      await sleep(1000);
      rssAfterRound.push(rssMiB(gatewayProc.pid));
    }
    const seconds = (Date.now() - started) / 1000;
    await sleep(1500);
    const samples = sampler.stop();
    const rssAfter = rssMiB(gatewayProc.pid);
    const alive = gatewayProc.current.child.exitCode === null && gatewayProc.current.child.signalCode === null;
    // Still serving a normal request after all of it.
    const health = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) })
      .then((r) => r.json())
      .catch((error: unknown) => String(error));
    await gatewayProc.stop();
    dir.remove();

    report({
      scenario: '6 JSON-RPC fuzzing',
      load: `${cases.length} requests x ${ROUNDS} rounds in ${seconds.toFixed(1)} s (8 in flight), seed ${SEED}: ${Object.entries(byKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      faults: `${cases.length * ROUNDS} malformed or adversarial requests`,
      lost: 'n/a',
      duplicates: 'n/a',
      recoveryMs: 'n/a (never down)',
      rssBeforeMiB: rssBefore,
      rssAfterMiB: `after each round ${rssAfterRound.join(', ')} (peak ${Math.max(...samples)})`,
      notes: `heap capped at ${HEAP_MIB} MiB; ${failures.length} wrong answers${failures.length ? ` (${failures.slice(0, 3).join(' | ').slice(0, 400)})` : ''}; process alive: ${alive}`,
    });
    const perClass = new Map<string, string[]>();
    for (const failure of failures)
      perClass.set(failure.split(':')[0]!, [...(perClass.get(failure.split(':')[0]!) ?? []), failure].slice(0, 3));
    const sample = [...perClass.values()].flat();
    expect(sample, `${failures.length} wrong answers (up to 3 per class shown)`).toEqual([]);
    expect(alive, 'the gateway process stayed up').toBe(true);
    expect(health).toMatchObject({ jsonrpc: '2.0', id: 1, result: expect.stringMatching(/^0x/) });
    expect(Math.max(...samples) - rssBefore, 'peak RSS growth (MiB)').toBeLessThan(250);
    const lastGrowth = rssAfterRound[ROUNDS - 1]! - rssAfterRound[ROUNDS - 2]!;
    expect(lastGrowth, 'RSS growth in the last round of the same requests (MiB)').toBeLessThan(40);
    expect(cases.length).toBeGreaterThanOrEqual(PER_CLASS * 10);
  }, 300_000);
});
