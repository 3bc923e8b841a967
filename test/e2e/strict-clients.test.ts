import { fileURLToPath } from 'node:url';
import { encodeFunctionData, parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { l1BlockPredeploy } from '../../src/derive/l1-info-deposit.ts';
import { devnetAccounts, LOAD_ACCOUNTS } from '../../devnet/edr/devnet.ts';
import { tempDir } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { goPrograms, pythonWithWeb3, runStrictClient, type StrictClientConfig, type StrictSummary } from '../helpers/strict-clients.ts';

/**
 * Clients nobody here wrote read every kind of `pending` answer the gateway gives, on both
 * devnets as a user starts them (`flashlog run --devnet`, `flashlog run --devnet --denim`):
 *
 * - go-ethereum's ethclient (test/go/strictclient, op-geth's build so deposits decode), whose
 *   typed structs refuse what is not well-formed: non-minimal quantities (`r`/`s` with leading
 *   zeros), a typed transaction's `v` other than its `yParity`, missing required fields. It also
 *   recomputes what a client can: each transaction's hash and sender, the transactions root, and
 *   the block hash from the header it was given (newHeads too).
 * - web3.py (test/python/strict_client.py), through its result formatters.
 *
 * Each prints one check per method (blocks with and without transactions, transactions and
 * receipts by hash, block receipts, logs, balance, nonce, code, storage, call, estimateGas,
 * simulate, and newHeads/logs over WebSocket); every check must pass, with something read.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const processes: FlashlogProcess[] = [];
let strictclient: string;
let python: string;

beforeAll(() => {
  // A cold build (geth and the strict client from the Go module proxy) takes minutes; CI starts it
  // ahead in .ci/run, and build.sh waits for that one instead of building twice.
  strictclient = goPrograms().strictclient;
  python = pythonWithWeb3();
}, 1_500_000);

afterAll(async () => {
  for (const process of processes) await process.stop('SIGTERM').catch(() => undefined);
});

// Account 9 is the user's (the load signs with 0 to LOAD_ACCOUNTS - 1); L1Block's `number()` is a
// view both devnets have.
const account = devnetAccounts()[LOAD_ACCOUNTS + 1]!.address;
const call = {
  to: l1BlockPredeploy,
  data: encodeFunctionData({ abi: parseAbi(['function number() view returns (uint64)']), functionName: 'number' }),
};

/** Methods whose answer must hold something (a check that read nothing proves nothing). */
const mustRead = [/^eth_getBlockByNumber\(pending, true\)/, /^eth_getTransactionByHash/, /^eth_getTransactionReceipt/, /^eth_subscribe/];

function expectAllRead(summary: StrictSummary): void {
  const failures = summary.checks.filter((check) => !check.ok).map((check) => ({ method: check.method, errors: check.errors }));
  expect(failures, `${summary.client}: ${JSON.stringify(failures, null, 1)}`).toEqual([]);
  for (const pattern of mustRead) {
    const checks = summary.checks.filter((check) => pattern.test(check.method));
    expect(checks.length, `${summary.client}: a check for ${pattern}`).toBeGreaterThan(0);
    for (const check of checks) expect(check.count, `${summary.client}: ${check.method} read nothing`).toBeGreaterThan(0);
  }
}

describe.each([
  { name: 'the flashblocks devnet (run --devnet)', args: ['--devnet'] },
  { name: 'the Denim devnet (run --devnet --denim)', args: ['--devnet', '--denim'] },
])('strict clients on $name', ({ args }) => {
  let config: StrictClientConfig;
  const dir = tempDir();

  beforeAll(async () => {
    const run = spawnFlashlog(['run', ...args, '--data-dir', dir.path, '--port', '0', '--metrics-port', '0']);
    processes.push(run);
    const urls = await run.waitFor((line) => typeof line.text === 'string' && line.text.startsWith('flashlog gateway: '), 60_000);
    const [, http, ws] = /^flashlog gateway: (http:\/\/\S+) \(WebSocket (ws:\/\/\S+)\)/.exec(urls.text as string)!;
    // Load in the pending block: deposits and user transactions of every kind the load sends.
    await run.waitFor(
      (line) => typeof line.text === 'string' && /^pending block \d+(?: fb \d+)?: ([4-9]|\d{2,}) txs/.test(line.text),
      60_000,
    );
    config = { http: http!, ws: ws!, account, call, transactions: 40, notifications: 3, timeoutMs: 30_000 };
  }, 120_000);

  afterAll(() => dir.remove());

  it('go-ethereum ethclient decodes every answer into its typed structs', async () => {
    const summary = await runStrictClient(strictclient, [], config);
    expect(summary.client).toMatch(/go-ethereum/);
    expectAllRead(summary);
  }, 120_000);

  it('web3.py reads every answer', async () => {
    const summary = await runStrictClient(python, [`${root}test/python/strict_client.py`], config);
    expect(summary.client).toMatch(/^web3\.py /);
    expectAllRead(summary);
  }, 120_000);
});
