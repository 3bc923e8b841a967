import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToHex, type Hex } from 'viem';
import { FlashlogError } from '../../src/errors.ts';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';

/**
 * op-geth (Optimism's geth; a binary the user gives, never built or shipped by flashlog) as an L2
 * node of its own: a genesis the caller writes, `--syncmode full --gcmode archive` with the hash
 * state scheme (so `debug_executionWitness` and `eth_getProof` answer for every block), no peers,
 * HTTP JSON-RPC on the given host and port and the engine API (JWT, a fresh secret in the data
 * dir) on loopback. Blocks come only through the engine API.
 */
export interface OpGethNode {
  readonly url: string;
  /** One JSON-RPC call on the HTTP port; rejects with the node's error message. */
  rpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** One engine API call (JWT-authenticated) on the auth port. */
  engine<T = unknown>(method: string, params: readonly unknown[]): Promise<T>;
  /** The node's log so far (stderr), for failure messages. */
  log(): string;
  close(): Promise<void>;
}

/**
 * The engine API's JWT: HS256 over `{"iat": now}` with the shared secret (execution-apis
 * `src/engine/authentication.md`). Hand-written because it is three base64url parts and one HMAC
 * from node:crypto; a JWT library would add a dependency for exactly this.
 */
export function engineJwt(secret: Uint8Array, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iat: nowSeconds })}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

/** op-geth answers a call on a local devnet within this (a block's engine calls included). */
const nodeCallTimeoutMs = 120_000;

/** One call on op-geth's HTTP or engine port; its errors name the method (and carry the node's data). */
async function call<T>(url: string, method: string, params: readonly unknown[], headers: Record<string, string> = {}): Promise<T> {
  const node = createUpstream(url, { timeoutMs: nodeCallTimeoutMs, headers, label: `op-geth ${new URL(url).origin}`, namedErrors: true });
  return (await node.call(method, params)) as T;
}

/** Where and how op-geth runs. */
export interface OpGethNodeOptions {
  readonly binary: string;
  /** op-geth's data dir (created if missing; `geth init` writes the chain there). */
  readonly dataDir: string;
  readonly genesis: unknown;
  /** JSON-RPC bind address and port (0 = any); default 127.0.0.1:0. */
  readonly host?: string;
  readonly httpPort?: number;
  /** Called on close, after op-geth exits (a temporary data dir's removal). */
  readonly onClose?: () => void;
}

/**
 * `geth init` with `genesis` (a geth genesis object), then the node. Resolves once both HTTP servers
 * listen.
 *
 * @example const node = await startOpGethNode({ binary, dataDir, genesis })
 */
export async function startOpGethNode(options: OpGethNodeOptions): Promise<OpGethNode> {
  const { binary } = options;
  mkdirSync(options.dataDir, { recursive: true });
  const datadir = `--datadir=${options.dataDir}`;
  const genesisPath = join(options.dataDir, 'genesis.json');
  writeFileSync(genesisPath, JSON.stringify(options.genesis));
  try {
    execFileSync(binary, [datadir, '--state.scheme=hash', 'init', genesisPath], { stdio: 'pipe', encoding: 'utf8' });
  } catch (error) {
    const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message: string };
    options.onClose?.();
    throw new FlashlogError('OP_GETH_FAILED', `op-geth init (${binary}): ${stdout ?? ''}${(stderr ?? message).slice(-2000)}`);
  }
  const secret = randomBytes(32);
  const jwtPath = join(options.dataDir, 'jwt.hex');
  writeFileSync(jwtPath, bytesToHex(secret));
  const child: ChildProcess = spawn(
    binary,
    [
      datadir,
      '--state.scheme=hash',
      '--syncmode=full',
      '--gcmode=archive',
      '--nodiscover',
      '--maxpeers=0',
      '--port=0',
      '--ipcdisable',
      '--http',
      `--http.addr=${options.host ?? '127.0.0.1'}`,
      `--http.port=${options.httpPort ?? 0}`,
      '--http.api=eth,debug,net,txpool,web3',
      '--authrpc.addr=127.0.0.1',
      '--authrpc.port=0',
      `--authrpc.jwtsecret=${jwtPath}`,
      '--verbosity=3',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > 4_000_000) output = output.slice(-2_000_000);
  });
  const started = new Promise<{ http: string; auth: string }>((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new FlashlogError('OP_GETH_FAILED', `op-geth did not start in 60 s: ${output.slice(-2000)}`)),
      60_000,
    );
    child.once('exit', (code) => fail(new FlashlogError('OP_GETH_FAILED', `op-geth exited ${code}: ${output.slice(-2000)}`)));
    const poll = setInterval(() => {
      const http = /HTTP server started\s+endpoint=(\S+) auth=false/.exec(output)?.[1];
      const auth = /HTTP server started\s+endpoint=(\S+) auth=true/.exec(output)?.[1];
      if (http && auth) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve({ http: `http://${http}`, auth: `http://${auth}` });
      }
    }, 50);
  });
  const endpoints = await started.catch((error: unknown) => {
    if (child.exitCode === null) child.kill('SIGKILL');
    options.onClose?.();
    throw error;
  });
  return {
    url: endpoints.http,
    rpc: (method, params = []) => call(endpoints.http, method, params),
    engine: (method, params) => call(endpoints.auth, method, params, { authorization: `Bearer ${engineJwt(secret)}` }),
    log: () => output,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      options.onClose?.();
    },
  };
}

/** OP payload attributes (engine API V3, op-geth's `PayloadAttributes`). */
export interface OpPayloadAttributes {
  readonly timestamp: Hex;
  readonly prevRandao: Hex;
  readonly suggestedFeeRecipient: Hex;
  readonly withdrawals: readonly never[];
  readonly parentBeaconBlockRoot: Hex;
  readonly transactions: readonly Hex[];
  readonly noTxPool: boolean;
  readonly gasLimit: Hex;
  /** Holocene: denominator ‖ elasticity, 8 bytes. */
  readonly eip1559Params: Hex;
  /** Jovian: op-geth v1.101702.3 takes a JSON number here (a plain uint64); absent before. */
  readonly minBaseFee?: number | undefined;
}

export interface PayloadStatus {
  readonly status: 'VALID' | 'INVALID' | 'SYNCING' | 'ACCEPTED' | 'INVALID_BLOCK_HASH';
  readonly latestValidHash: Hex | null;
  readonly validationError: string | null;
}

/** The engine API calls an OP sequencer (op-node) makes, over one node. */
export function engineClient(node: OpGethNode) {
  const state = (head: Hex) => ({ headBlockHash: head, safeBlockHash: head, finalizedBlockHash: head });
  return {
    /** engine_forkchoiceUpdatedV3 with attributes: starts building on `head`, resolves with the payload id. */
    async startBuilding(head: Hex, attributes: OpPayloadAttributes): Promise<Hex> {
      const result = await node.engine<{ payloadStatus: PayloadStatus; payloadId: Hex | null }>('engine_forkchoiceUpdatedV3', [
        state(head),
        attributes,
      ]);
      if (result.payloadStatus.status !== 'VALID' || !result.payloadId)
        throw new FlashlogError('OP_GETH_FAILED', `engine_forkchoiceUpdatedV3: ${JSON.stringify(result.payloadStatus)}`);
      return result.payloadId;
    },
    /** engine_getPayloadV4: the built block (execution payload fields, hex). */
    async getPayload(id: Hex): Promise<Record<string, unknown> & { blockHash: Hex; transactions: Hex[] }> {
      const envelope = await node.engine<{ executionPayload: Record<string, unknown> & { blockHash: Hex; transactions: Hex[] } }>(
        'engine_getPayloadV4',
        [id],
      );
      return envelope.executionPayload;
    },
    /** engine_newPayloadV4 (no blobs, no execution requests). */
    newPayload: (payload: Record<string, unknown>, parentBeaconBlockRoot: Hex) =>
      node.engine<PayloadStatus>('engine_newPayloadV4', [payload, [], parentBeaconBlockRoot, []]),
    /** engine_forkchoiceUpdatedV3 without attributes: makes `head` the canonical head (and safe, final). */
    async setHead(head: Hex): Promise<PayloadStatus> {
      const result = await node.engine<{ payloadStatus: PayloadStatus }>('engine_forkchoiceUpdatedV3', [state(head), null]);
      return result.payloadStatus;
    },
  };
}
export type EngineClient = ReturnType<typeof engineClient>;
