import { readdirSync, readFileSync } from 'node:fs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { NEVER } from 'rxjs';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';
import { createExecutionMethods } from '../../src/rpc/execution.ts';
import { createGateway } from '../../src/rpc/server.ts';
import { initialViewState } from '../../src/view/state.ts';
import { sharedPath } from './shared.ts';

/**
 * The execution-apis eth_simulateV1 fixtures (`tests/eth_simulateV1/*.io`, recorded from geth):
 * each a `// comment` line, a `>> request` line and a `<< response` line.
 */
export interface SimulateFixture {
  readonly name: string;
  readonly comment: string;
  readonly request: { id: unknown; method: string; params: unknown[] };
  readonly response: { result?: unknown; error?: { code: number; message: string } };
}

export const FIXTURE_GENESIS = sharedPath('fixtures/execution-apis/tests/genesis.json');

export function loadSimulateFixtures(): SimulateFixture[] {
  const dir = sharedPath('fixtures/execution-apis/tests/eth_simulateV1');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.io'))
    .sort()
    .map((file) => {
      const lines = readFileSync(`${dir}/${file}`, 'utf8').split('\n');
      const line = (prefix: string) =>
        lines
          .find((l) => l.startsWith(prefix))
          ?.slice(prefix.length)
          .trim() ?? '';
      return { name: file.replace(/\.io$/, ''), comment: line('//'), request: JSON.parse(line('>>')), response: JSON.parse(line('<<')) };
    });
}

/**
 * Fields a simulation over a lazily read state cannot reproduce, left out of the comparison:
 * - `stateRoot`: simulation commits nothing and holds no state trie (flashlog answers 32 zero bytes);
 * - `hash`, `parentHash`, and `blockHash` of logs and transactions: a block's hash covers its
 *   stateRoot, so it differs whenever the stateRoot does.
 * For the same reason a simulated block's hash read by a call (BLOCKHASH, in return data or log
 * data) is geth's hash in the fixture: `asGethHashes` translates it before the comparison.
 */
export const EXCLUDED_FIELDS = new Set(['stateRoot', 'hash', 'parentHash', 'blockHash']);

/**
 * Where `actual` differs from `expected`, as paths (`result.0.calls.1.gasUsed: 0x5208 != 0x5209`),
 * skipping EXCLUDED_FIELDS. Error `message`s are compared only for call-level reverts (code 3),
 * whose text the specification fixes; request-level messages are geth's own wording.
 */
export function differences(expected: unknown, actual: unknown, path = ''): string[] {
  if (expected === actual) return [];
  if (typeof expected !== 'object' || expected === null || typeof actual !== 'object' || actual === null) {
    return [`${path}: ${short(actual)} != expected ${short(expected)}`];
  }
  if (Array.isArray(expected) !== Array.isArray(actual)) return [`${path}: ${short(actual)} != expected ${short(expected)}`];
  const out: string[] = [];
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  const isError = path.endsWith('error');
  for (const key of keys) {
    // a transaction's own hash covers only the transaction, so it is compared
    const transactionHash = key === 'hash' && /\.transactions\.\d+$/.test(path);
    if (EXCLUDED_FIELDS.has(key) && !transactionHash) continue;
    if (isError && key === 'message' && (expected as { code?: number }).code !== 3) continue;
    out.push(
      ...differences((expected as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], path ? `${path}.${key}` : key),
    );
  }
  return out;
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The answer with each simulated block's hash replaced by geth's hash of the same block (by
 * position), wherever it appears (BLOCKHASH read back as return data or log data). A hash that
 * names no simulated block, or the wrong one, stays different.
 */
export function asGethHashes(expected: unknown, actual: unknown): unknown {
  if (!Array.isArray(expected) || !Array.isArray(actual) || expected.length !== actual.length) return actual;
  let text = JSON.stringify(actual);
  for (const [i, block] of actual.entries()) {
    const ours = (block as { hash?: unknown }).hash;
    const geths = (expected[i] as { hash?: unknown }).hash;
    if (typeof ours !== 'string' || typeof geths !== 'string' || ours.length !== 66) continue;
    text = text.replaceAll(ours.slice(2).toLowerCase(), geths.slice(2).toLowerCase());
  }
  return JSON.parse(text);
}

/**
 * A gateway whose `eth_simulateV1` runs flashlog's simulator over `upstreamUrl`'s state, with the
 * chain rules of the geth genesis file `simulateGenesis` (an empty view: `pending` is `latest`).
 */
export async function startSimulateGateway(upstreamUrl: string, simulateGenesis: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = createUpstream(upstreamUrl, { timeoutMs: 30_000 });
  const execution = createExecutionMethods({ gasCap: 50_000_000n, timeoutMs: 60_000, simulateGenesis });
  const gateway = await createGateway({
    host: '127.0.0.1',
    port: 0,
    view: initialViewState,
    states$: NEVER,
    upstream,
    logger: pino({ level: 'silent' }),
    metrics: new Registry(),
    public: false,
    rateLimit: 1000,
    maxBodyBytes: 4 << 20,
    maxBatch: 100,
    maxConnections: 10,
    maxSubscriptions: 10,
    maxBufferedBytes: 1 << 20,
    maxLogsRange: 2000,
    methods: execution.methods,
  });
  return {
    url: gateway.url,
    async close() {
      await gateway.close();
      await execution.close();
    },
  };
}
