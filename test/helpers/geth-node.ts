import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToHex } from 'viem';
import { tempDir } from './context.ts';

/**
 * go-ethereum's geth over a chain of its own: `geth init` with a genesis, `geth import` of an RLP
 * chain, then HTTP JSON-RPC on loopback (a free port) in archive mode, as the execution-apis tests
 * were recorded (their rpctestgen: hash state scheme, `--gcmode=archive`, `--nodiscover`, the
 * head made final by one engine_forkchoiceUpdated). No block is produced after that.
 */
export interface GethNode {
  readonly url: string;
  /** Sends one engine API request (JWT-authenticated) and returns its result. */
  engine(method: string, params: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

export async function startGethNode(geth: string, genesis: string, chain: string): Promise<GethNode> {
  const dir = tempDir('flashlog-geth-');
  const datadir = `--datadir=${dir.path}`;
  execFileSync(geth, [datadir, '--gcmode=archive', '--state.scheme=hash', 'init', genesis], { stdio: 'pipe' });
  execFileSync(geth, [datadir, '--gcmode=archive', 'import', chain], { stdio: 'pipe' });
  const secret = randomBytes(32);
  const jwtPath = join(dir.path, 'jwt.hex');
  writeFileSync(jwtPath, bytesToHex(secret));
  const child: ChildProcess = spawn(
    geth,
    [
      datadir,
      '--gcmode=archive',
      '--nodiscover',
      '--maxpeers=0',
      '--port=0',
      '--ipcdisable',
      '--http',
      '--http.addr=127.0.0.1',
      '--http.port=0',
      '--http.api=admin,eth,debug,net,testing,txpool,web3',
      '--authrpc.addr=127.0.0.1',
      '--authrpc.port=0',
      `--authrpc.jwtsecret=${jwtPath}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  const endpoints = await new Promise<{ http: string; auth: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`geth did not start in 60 s: ${output.slice(-2000)}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`geth exited ${code}: ${output.slice(-2000)}`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const http = /HTTP server started\s+endpoint=(\S+) auth=false/.exec(output)?.[1];
      const auth = /HTTP server started\s+endpoint=(\S+) auth=true/.exec(output)?.[1];
      if (http && auth) {
        clearTimeout(timer);
        resolve({ http: `http://${http}`, auth: `http://${auth}` });
      }
    });
  });
  // The engine API's JWT (HS256 over {"iat": now}), as a consensus client sends it.
  const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
  const token = () => {
    const unsigned = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ iat: Math.floor(Date.now() / 1000) }))}`;
    return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
  };
  return {
    url: endpoints.http,
    async engine(method, params) {
      const response = await fetch(endpoints.auth, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      const body = (await response.json()) as { result?: unknown; error?: { message: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message}`);
      return body.result;
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      dir.remove();
    },
  };
}
