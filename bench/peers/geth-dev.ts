import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeDeployData, encodeFunctionData, numberToHex, parseGwei, type Hex } from 'viem';
import { DevnetToken, DevnetWorkload } from '../../devnet/contracts/bytecode.ts';

/**
 * go-ethereum's geth as a bench peer: `geth --dev` (its own one-account chain, a block every
 * `periodS` seconds) on loopback, HTTP and WebSocket JSON-RPC on one free port, and a load that
 * makes each block carry about `logsPerBlock` logs (DevnetWorkload.emitMany from the dev account,
 * which geth signs), with an ERC-20 (DevnetToken) for `eth_call` of a view function.
 *
 * The binary is the one test/go/build.sh builds (geth v1.17.10), or FLASHLOG_BENCH_GETH.
 */
export interface GethDev {
  readonly url: string;
  /** geth's process id (its CPU time is read from /proc by the bench). */
  readonly pid: number;
  readonly wsUrl: string;
  /** The dev account (funded, unlocked): sends the load and holds the token supply. */
  readonly account: Hex;
  readonly token: Hex;
  readonly workload: Hex;
  /** Transactions the load sent, the failed sends and the first failure's message. */
  sent(): { transactions: number; failed: number; firstFailure?: string };
  close(): Promise<void>;
}

export const gethVersion = 'v1.17.10';
const defaultGeth = fileURLToPath(new URL(`../../.ci/work/bin/geth-${gethVersion}/geth`, import.meta.url));

/** The geth binary to run: FLASHLOG_BENCH_GETH, else the one test/go/build.sh builds; an error saying how to get one when neither exists. */
export function gethBinary(env: NodeJS.ProcessEnv = process.env): { path: string } | { skip: string } {
  const path = env.FLASHLOG_BENCH_GETH || defaultGeth;
  if (existsSync(path)) return { path };
  return {
    skip: env.FLASHLOG_BENCH_GETH
      ? `geth peer skipped: FLASHLOG_BENCH_GETH=${path} does not exist`
      : `geth peer skipped: no ${path} (run \`bash test/go/build.sh\`, or set FLASHLOG_BENCH_GETH to a geth ${gethVersion} binary)`,
  };
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`geth ${method}: ${body.error.message}`);
  return body.result as T;
}

async function receiptOf(url: string, hash: Hex, timeoutMs = 30_000): Promise<{ contractAddress: Hex | null; status: Hex }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const receipt = await rpc<{ contractAddress: Hex | null; status: Hex } | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (receipt) return receipt;
    if (Date.now() > deadline) throw new Error(`geth: no receipt for ${hash} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startGethDev(
  binary: string,
  options: { periodS?: number; logsPerBlock?: number; logsPerTransaction?: number } = {},
): Promise<GethDev> {
  const periodS = options.periodS ?? 1;
  const logsPerTransaction = options.logsPerTransaction ?? 31; // emitMany(30): 30 Ping logs and one Note
  const transactionsPerBlock = Math.max(1, Math.round((options.logsPerBlock ?? 93) / logsPerTransaction));
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-geth-'));
  const child: ChildProcess = spawn(
    binary,
    [
      '--dev',
      `--dev.period=${periodS}`,
      // emitMany(30) takes about 3.6 Mgas (a storage write per log): under half of this, so the base fee does not climb.
      '--dev.gaslimit=60000000',
      `--datadir=${dir}`,
      '--nodiscover',
      '--maxpeers=0',
      '--port=0',
      '--ipcdisable',
      '--authrpc.port=0',
      '--http',
      '--http.addr=127.0.0.1',
      '--http.port=0',
      '--http.api=eth,net,web3',
      '--ws',
      '--ws.addr=127.0.0.1',
      '--ws.port=0',
      '--ws.api=eth,net,web3',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const endpoints = await new Promise<{ url: string; wsUrl: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`geth --dev did not start in 60 s: ${output.slice(-2000)}`)), 60_000);
      child.once('exit', (code) => reject(new Error(`geth --dev exited ${code}: ${output.slice(-2000)}`)));
      child.stderr!.on('data', (chunk: Buffer) => {
        output = (output + chunk.toString('utf8')).slice(-20_000);
        const http = /HTTP server started\s+endpoint=(\S+) auth=false/.exec(output)?.[1];
        const ws = /WebSocket enabled\s+url=(\S+)/.exec(output)?.[1];
        if (http && ws) {
          clearTimeout(timer);
          resolve({ url: `http://${http}`, wsUrl: ws });
        }
      });
    });
    const { url } = endpoints;
    const [account] = await rpc<Hex[]>(url, 'eth_accounts', []);
    if (!account) throw new Error('geth --dev has no dev account');
    // Gas and fees set here: geth's own choice can pass its 1 ether fee cap (`--rpc.txfeecap`) on the dev chain.
    const fees = {
      gas: numberToHex(4_000_000),
      maxFeePerGas: numberToHex(parseGwei('100')),
      maxPriorityFeePerGas: numberToHex(parseGwei('1')),
    };
    const send = (data: Hex, to?: Hex) => rpc<Hex>(url, 'eth_sendTransaction', [{ from: account, ...(to ? { to } : {}), data, ...fees }]);
    const deployed = async (data: Hex) => {
      const receipt = await receiptOf(url, await send(data));
      if (receipt.status !== '0x1' || !receipt.contractAddress) throw new Error('geth --dev: a bench contract failed to deploy');
      return receipt.contractAddress;
    };
    const [token, workload] = await Promise.all([
      deployed(encodeDeployData({ abi: DevnetToken.abi, bytecode: DevnetToken.bytecode as Hex, args: [10n ** 27n] })),
      deployed(DevnetWorkload.bytecode as Hex),
    ]);
    // The load: `transactionsPerBlock` emitMany calls a period, spread over it.
    const emit = encodeFunctionData({
      abi: DevnetWorkload.abi,
      functionName: 'emitMany',
      args: [BigInt(logsPerTransaction - 1), '0x6265'],
    });
    let transactions = 0;
    let failed = 0;
    let firstFailure: string | undefined;
    const interval = setInterval(
      () =>
        void send(emit, workload).then(
          () => transactions++,
          (error: unknown) => {
            failed++;
            firstFailure ??= error instanceof Error ? error.message : String(error);
          },
        ),
      (periodS * 1000) / transactionsPerBlock,
    );
    return {
      ...endpoints,
      pid: child.pid!,
      account,
      token,
      workload,
      sent: () => ({ transactions, failed, ...(firstFailure === undefined ? {} : { firstFailure }) }),
      async close() {
        clearInterval(interval);
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
