import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** The Go programs of test/go, built once per version by test/go/build.sh (cached under .ci/work/bin). */
export interface GoPrograms {
  /** go-ethereum's node, `go install`ed from the Go module proxy. */
  readonly geth: string;
  /** test/go/strictclient: ethclient reading a gateway. */
  readonly strictclient: string;
  /** op-geth, Optimism's geth (test/go/op-geth): the OP Stack oracle. */
  readonly opGeth: string;
  /** test/go/compose-config: compose-go rendering a compose project (test/helpers/compose-config.ts). */
  readonly composeConfig: string;
}

/** Builds (or finds) the Go programs; a cold build takes minutes, a warm one a second. */
export function goPrograms(): GoPrograms {
  const out = execFileSync('bash', [`${root}test/go/build.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const paths = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => line.split(' ') as [string, string]),
  );
  if (!paths.geth || !paths.strictclient || !paths['op-geth'] || !paths['compose-config'])
    throw new Error(`test/go/build.sh printed no paths: ${out}`);
  return { geth: paths.geth, strictclient: paths.strictclient, opGeth: paths['op-geth'], composeConfig: paths['compose-config'] };
}

/** The venv's Python with web3.py (test/python/setup.sh). */
export function pythonWithWeb3(): string {
  return execFileSync('bash', [`${root}test/python/setup.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** What the strict clients (strictclient, strict_client.py) are given. */
export interface StrictClientConfig {
  readonly http: string;
  readonly ws: string;
  /** A funded account: balance, nonce, the sender of estimateGas and simulate. */
  readonly account: string;
  /** A view call for eth_call and eth_simulateV1. */
  readonly call: { readonly to: string; readonly data: string };
  /** How many of the pending block's transactions to read by hash, with their receipts. */
  readonly transactions: number;
  /** How many notifications to read from each subscription (newHeads, logs). */
  readonly notifications: number;
  readonly timeoutMs: number;
}

export interface StrictCheck {
  readonly method: string;
  readonly ok: boolean;
  readonly count: number;
  readonly errors: readonly { readonly what: string; readonly error: string }[];
}

export interface StrictSummary {
  readonly client: string;
  readonly checks: readonly StrictCheck[];
}

/** Runs one strict client (`command` with `args` before the config) and parses its summary. */
export async function runStrictClient(command: string, args: readonly string[], config: StrictClientConfig): Promise<StrictSummary> {
  const { stdout } = await run(command, [...args, JSON.stringify(config)], {
    timeout: config.timeoutMs * 3,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as StrictSummary;
}
