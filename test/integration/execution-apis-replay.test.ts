import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { startGethNode, type GethNode } from '../helpers/geth-node.ts';
import { sharedPath } from '../helpers/shared.ts';
import { asGethHashes } from '../helpers/simulate-fixtures.ts';
import { goPrograms } from '../helpers/strict-clients.ts';

/**
 * The execution-apis conformance tests (ethereum/execution-apis `tests/`, CC0), replayed through
 * the gateway: go-ethereum's geth imports the tests' chain (genesis.json + chain.rlp), `flashlog
 * serve` stands in front of it with an empty log (no pre-confirmed block: `pending` is the node's
 * latest), and every `.io` file's requests go to the gateway. Its answer must equal the one
 * go-ethereum gave when the tests were recorded, compared the way hive's rpc-compat simulator
 * compares: the whole response as JSON, except that an error response is compared by its presence
 * and code (messages are each client's own), and a `speconly` test only by having a result.
 *
 * The files run in hive's order (by path): some send transactions that later ones read.
 */
const testsDir = sharedPath('fixtures/execution-apis/tests');

/**
 * Methods the gateway answers differently on purpose, with the reason: the fields that differ
 * (left out of the comparison, wherever they appear in the result) and whether simulated blocks'
 * hashes are mapped to the recorded ones first. A file of such a method that matches only
 * without them counts as deliberately different; one that differs anywhere else fails.
 */
const deliberatelyDifferent: Record<
  string,
  { readonly fields: readonly string[]; readonly simulatedHashes: boolean; readonly reason: string }
> = {
  eth_simulateV1: {
    fields: ['stateRoot'],
    simulatedHashes: true,
    reason:
      "flashlog simulates on its own engine (src/simulate) and commits nothing: stateRoot is 32 zero bytes, so each simulated block's hash, and every parentHash, blockHash and BLOCKHASH result naming it, differs from geth's (docs/gateway.md, eth_simulateV1)",
  },
};

interface IoTest {
  readonly name: string;
  readonly speconly: boolean;
  readonly exchanges: readonly { readonly request: string; readonly response: string }[];
}

function loadTests(): IoTest[] {
  const tests: IoTest[] = [];
  for (const method of readdirSync(testsDir).sort()) {
    if (!statSync(join(testsDir, method)).isDirectory()) continue;
    for (const file of readdirSync(join(testsDir, method)).sort()) {
      if (!file.endsWith('.io')) continue;
      const lines = readFileSync(join(testsDir, method, file), 'utf8')
        .split('\n')
        .map((line) => line.trim());
      const exchanges: { request: string; response: string }[] = [];
      let request: string | undefined;
      for (const line of lines) {
        if (line.startsWith('>>')) request = line.slice(2).trim();
        else if (line.startsWith('<<')) {
          if (request === undefined) throw new Error(`${method}/${file}: a response before its request`);
          exchanges.push({ request, response: line.slice(2).trim() });
          request = undefined;
        }
      }
      tests.push({ name: `${method}/${file.slice(0, -3)}`, speconly: lines.some((line) => /^\/\/\s*speconly:/.test(line)), exchanges });
    }
  }
  return tests;
}

type Response = { jsonrpc?: string; id?: unknown; result?: unknown; error?: { code?: number; message?: string } };

/** `result` without the table's fields, simulated block hashes mapped to `want`'s. */
function masked(method: string, result: unknown, want: unknown): unknown {
  const rule = deliberatelyDifferent[method];
  if (!rule) return result;
  const mapped = rule.simulatedHashes ? asGethHashes(want, result) : result;
  return JSON.parse(JSON.stringify(mapped), (key, value: unknown) => (rule.fields.includes(key) ? undefined : value));
}

/** Why `got` does not match `want`, or undefined when it does. */
function mismatch(got: Response, want: Response, speconly: boolean): string | undefined {
  if (want.error) {
    if (!got.error) return `expected an error (code ${want.error.code}), got a result`;
    if (got.error.code !== want.error.code) return `error code ${got.error.code} ("${got.error.message}"), expected ${want.error.code}`;
    return undefined;
  }
  if (got.error) return `error ${got.error.code} "${got.error.message}", expected a result`;
  if (!('result' in got)) return 'no result';
  if (speconly) return undefined;
  if (got.id !== want.id || got.jsonrpc !== want.jsonrpc) return `envelope ${JSON.stringify({ jsonrpc: got.jsonrpc, id: got.id })}`;
  if (isDeepStrictEqual(got.result, want.result)) return undefined;
  return `result differs at ${differences(got.result, want.result, 'result').join('; ')}`;
}

/** The first few paths where two JSON values differ, with both values. */
function differences(got: unknown, want: unknown, path: string, out: string[] = []): string[] {
  if (out.length >= 4 || isDeepStrictEqual(got, want)) return out;
  if (got && want && typeof got === 'object' && typeof want === 'object' && Array.isArray(got) === Array.isArray(want)) {
    const keys = new Set([...Object.keys(got), ...Object.keys(want)]);
    for (const key of keys)
      differences((got as Record<string, unknown>)[key], (want as Record<string, unknown>)[key], `${path}.${key}`, out);
    return out;
  }
  out.push(`${path}: ${JSON.stringify(got)?.slice(0, 200)}, recorded ${JSON.stringify(want)?.slice(0, 200)}`);
  return out;
}

/** Methods whose requests change the node's state: never sent twice. */
const changesState = new Set(['eth_sendRawTransaction', 'testing_buildBlockV1']);

const tests = loadTests();
let geth: GethNode;
let gateway: FlashlogProcess;
let url: string;
let gethVersion: string;
const dir = tempDir();
const outcome = { passed: [] as string[], deliberate: [] as string[], failed: [] as string[] };

beforeAll(async () => {
  geth = await startGethNode(goPrograms().geth, join(testsDir, 'genesis.json'), join(testsDir, 'chain.rlp'));
  // The head the tests were recorded at, made safe and final (tests/headfcu.json).
  const fcu = JSON.parse(readFileSync(join(testsDir, 'headfcu.json'), 'utf8')) as { method: string; params: unknown[] };
  await geth.engine(fcu.method, fcu.params);
  // eth_simulateV1 runs on flashlog's engine: with the chain's fork schedule (Osaka and its BPOs).
  gateway = spawnFlashlog([
    'serve',
    '--rpc',
    geth.url,
    '--simulate-genesis',
    join(testsDir, 'genesis.json'),
    '--data-dir',
    dir.path,
    '--port',
    '0',
    '--metrics-port',
    '0',
  ]);
  gethVersion = String(
    await (
      await fetch(geth.url, {
        method: 'POST',
        body: '{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion","params":[]}',
        headers: { 'content-type': 'application/json' },
      })
    )
      .json()
      .then((body) => (body as Response).result),
  );
  url = (await gateway.waitFor((line) => line.msg === 'gateway listening', 60_000)).url as string;
}, 1_500_000);

afterAll(async () => {
  await gateway?.stop('SIGTERM');
  await geth?.close();
  dir.remove();
  console.log(
    `execution-apis replay through the gateway: ${outcome.passed.length} passed, ${outcome.deliberate.length} deliberately different, ${outcome.failed.length} failed (of ${tests.length} files)`,
  );
});

describe('the execution-apis tests, through the gateway in front of geth', () => {
  it('loads every .io file', () => {
    expect(tests.length).toBeGreaterThan(200);
    expect(tests.every((test) => test.exchanges.length > 0)).toBe(true);
  });

  for (const test of tests) {
    it(test.name, async () => {
      const problems: string[] = [];
      let deliberate = false;
      for (const [index, exchange] of test.exchanges.entries()) {
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: exchange.request });
        const text = await response.text();
        let got: Response;
        try {
          got = JSON.parse(text) as Response;
        } catch {
          problems.push(`[${index}] HTTP ${response.status}, not JSON: ${text.slice(0, 300)}`);
          continue;
        }
        const want = JSON.parse(exchange.response) as Response;
        const why = mismatch(got, want, test.speconly);
        if (!why) continue;
        const method = test.name.split('/')[0]!;
        if (deliberatelyDifferent[method] && !got.error && !want.error) {
          const maskedWhy = mismatch(
            { ...got, result: masked(method, got.result, want.result) },
            { ...want, result: masked(method, want.result, want.result) },
            test.speconly,
          );
          if (!maskedWhy) {
            deliberate = true;
            continue;
          }
        }
        // Whether the node itself still gives the recorded answer (it is a later go-ethereum than
        // the one that recorded the tests): tells the gateway's difference from the node's.
        let node = 'not asked (the request changes state)';
        if (!changesState.has(test.name.split('/')[0]!)) {
          const direct = (await (
            await fetch(geth.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: exchange.request })
          ).json()) as Response;
          node = mismatch(direct, want, test.speconly) ?? 'matches the recording';
        }
        problems.push(`[${index}] gateway: ${why}\n  geth ${gethVersion} directly: ${node}`);
      }
      (problems.length > 0 ? outcome.failed : deliberate ? outcome.deliberate : outcome.passed).push(test.name);
      expect(problems, problems.join('\n')).toEqual([]);
    });
  }

  it('lists only methods that still answer differently', () => {
    for (const method of Object.keys(deliberatelyDifferent)) {
      expect(
        outcome.deliberate.filter((name) => name.startsWith(`${method}/`)).length,
        `${method} is listed as deliberately different but every file of it matches exactly`,
      ).toBeGreaterThan(0);
    }
    expect(outcome.passed.length + outcome.deliberate.length + outcome.failed.length).toBe(tests.length);
  });
});
