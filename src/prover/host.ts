import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readBody } from '../jsonrpc/edge.ts';
import type { AddressInfo } from 'node:net';
import { toHex, type Address } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { errorMessage, InvalidParamsError, JsonRpcError, MethodNotFoundError, ResourceUnavailableError, ServerError } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { answerMetrics, counter, gauge, histogram, type Registry } from '../obs/metrics.ts';
import type { EnclaveClient } from './enclave-client.ts';
import type { Preimage } from './protocol.ts';
import type { SignerRegistry } from './registry.ts';
import { parseProofRequest, proofResultToWire, type ProofRequest } from './request.ts';

/**
 * The prover host: JSON-RPC 2.0 over HTTP POST, as Base's nitro host speaks it (jsonrpsee):
 *   prover_prove [ProofRequest]             -> {"Tee":{"aggregate_proposal":…,"proposals":[…]}}
 *   enclave_signerPublicKey []              -> [[4,…65 bytes], …] one per enclave, in configured order
 *   enclave_signerAttestation [user_data?, nonce?] -> [[…document bytes], …] one per enclave
 *   healthz []                              -> {"version":"x.y.z"}
 *   GET /healthz                            -> 200 {"version":…} | 500 when unhealthy
 * Errors: -32000 proof failed or timed out; -32001 no valid signer / enclave unavailable;
 * -32602 bad params (user_data or nonce over 512 bytes is checked before any enclave is called).
 */
export interface ProverHostOptions {
  readonly enclaves: readonly EnclaveClient[];
  readonly registry?: SignerRegistry | undefined;
  /** Collects the preimages of a request (from the L1/L2 RPCs). */
  readonly witness: (request: ProofRequest, signal: AbortSignal) => Promise<Preimage[]>;
  readonly timeoutMs: number;
  readonly version: string;
  readonly logger?: Logger;
  readonly metrics?: Registry;
  /** Serve `GET /metrics` from `metrics` on the host's own port. */
  readonly exposeMetrics?: boolean;
  /** Largest request body; jsonrpsee's default is 10 MB. */
  readonly maxBodyBytes?: number;
}

export interface ProverHost {
  /** Answers one parsed JSON-RPC body (object or batch); undefined for notifications only. */
  handle(body: unknown): Promise<unknown>;
  /** Healthy: without a registry while serving; with one, once any enclave signer was valid (latched). */
  health(): Promise<{ ok: true } | { ok: false; message: string }>;
  listen(host: string, port: number): Promise<{ url: string }>;
  /** Stops accepting, waits for in-flight requests, then closes. */
  close(): Promise<void>;
}

export const maxAttestationFieldBytes = 512;

interface RpcFailure {
  code: number;
  message: string;
}
const failure = (code: number, message: string): RpcFailure => ({ code, message });
/** -32001, the host's code for "no valid signer" and for enclave failures in enclave_* calls. */
const enclaveUnavailable = (message: string) => new ResourceUnavailableError(message);

/** A byte vector param: JSON array of integers (serde Vec<u8>), or 0x-hex, or null/absent. */
function byteParam(value: unknown, name: string): Uint8Array | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return Uint8Array.from(value as number[]);
  if (typeof value === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(value)) return Uint8Array.from(Buffer.from(value.slice(2), 'hex'));
  throw new InvalidParamsError(`invalid type for ${name}: expected an array of bytes (0-255) or null`);
}

export function createProverHost(options: ProverHostOptions): ProverHost {
  const { enclaves, registry, logger } = options;
  const requests =
    options.metrics &&
    counter(options.metrics, 'flashlog_prover_host_requests_total', 'JSON-RPC calls by method and outcome', ['method', 'outcome']);
  const proveSeconds =
    options.metrics &&
    histogram(
      options.metrics,
      'flashlog_prover_host_prove_seconds',
      'prover_prove duration',
      ['outcome'],
      [0.1, 0.5, 1, 5, 30, 120, 600, 1800],
    );
  const healthyGauge = options.metrics && gauge(options.metrics, 'flashlog_prover_host_healthy', '1 when healthz answers OK');
  const inFlight = new Set<Promise<unknown>>();
  let latched = false;
  let draining = false;
  let server: Server | undefined;

  const signerOf = async (enclave: EnclaveClient): Promise<Address> => publicKeyToAddress(toHex(await enclave.signerPublicKey()));

  /** First enclave (in configured order) whose signer the registry says is valid; latches health. */
  async function route(): Promise<EnclaveClient> {
    if (!registry) return enclaves[0]!;
    const seen: string[] = [];
    let lastError: string | undefined;
    for (const enclave of enclaves) {
      let signer: Address;
      try {
        signer = await signerOf(enclave);
      } catch (error) {
        logger?.warn({ enclave: enclave.name, err: errorMessage(error) }, 'enclave signer key unavailable; skipping it');
        continue;
      }
      seen.push(signer);
      try {
        if (await registry.isValidSigner(signer)) {
          latched = true;
          return enclave;
        }
      } catch (error) {
        lastError = errorMessage(error);
        logger?.warn({ enclave: enclave.name, signer, err: lastError }, 'isValidSigner failed');
      }
    }
    throw enclaveUnavailable(
      lastError && seen.length > 0
        ? `no valid signer found among: [${seen.join(', ')}] (registry: ${lastError})`
        : `no valid signer found among: [${seen.join(', ')}]`,
    );
  }

  async function prove(params: unknown): Promise<unknown> {
    const raw = Array.isArray(params)
      ? params[0]
      : params && typeof params === 'object' && 'request' in params
        ? (params as { request: unknown }).request
        : undefined;
    if (raw === undefined) throw new InvalidParamsError('params[0]: expected a ProofRequest object');
    const parsed = parseProofRequest(raw);
    if (!parsed.ok) throw new InvalidParamsError(parsed.message);
    const request = parsed.request;
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(
          new ServerError(
            `proof request timed out after ${Math.round(options.timeoutMs / 1000)}s for L2 block ${request.claimedL2BlockNumber}`,
          ),
        );
      }, options.timeoutMs);
    });
    let outcome = 'error';
    try {
      const result = await Promise.race([
        (async () => {
          const enclave = await route();
          const preimages = await options.witness(request, controller.signal);
          logger?.info({ enclave: enclave.name, claimed: request.claimedL2BlockNumber, preimages: preimages.length }, 'proving');
          try {
            return await enclave.prove(preimages, controller.signal);
          } catch (error) {
            throw new ServerError(errorMessage(error));
          }
        })(),
        timeout,
      ]);
      outcome = 'ok';
      return proofResultToWire(result);
    } catch (error) {
      if (error instanceof JsonRpcError) {
        outcome = error.rpcCode === -32000 && /timed out/.test(error.message) ? 'timeout' : 'error';
        throw error;
      }
      throw new ServerError(errorMessage(error));
    } finally {
      clearTimeout(timer);
      controller.abort();
      proveSeconds?.observe({ outcome }, (performance.now() - started) / 1000);
    }
  }

  /** enclave_* calls are all-or-nothing: one failing enclave fails the call. */
  async function everyEnclave<T>(call: (enclave: EnclaveClient) => Promise<T>): Promise<T[]> {
    try {
      return await Promise.all(enclaves.map(call));
    } catch (error) {
      throw enclaveUnavailable(errorMessage(error));
    }
  }

  async function health(): Promise<{ ok: true } | { ok: false; message: string }> {
    let state: { ok: true } | { ok: false; message: string };
    if (draining) state = { ok: false, message: 'shutting down' };
    else if (!registry || latched) state = { ok: true };
    else {
      try {
        await route();
        state = { ok: true };
      } catch (error) {
        state = {
          ok: false,
          message:
            error instanceof JsonRpcError && /^no valid signer/.test(error.message)
              ? 'signer is not a valid signer in TEEProverRegistry'
              : errorMessage(error),
        };
      }
    }
    healthyGauge?.set(state.ok ? 1 : 0);
    return state;
  }

  async function call(method: string, params: unknown): Promise<unknown> {
    switch (method) {
      case 'prover_prove':
        return prove(params);
      case 'enclave_signerPublicKey':
        return (await everyEnclave((enclave) => enclave.signerPublicKey())).map((key) => [...key]);
      case 'enclave_signerAttestation': {
        const list = Array.isArray(params)
          ? params
          : params && typeof params === 'object'
            ? [(params as Record<string, unknown>).user_data, (params as Record<string, unknown>).nonce]
            : [];
        const userData = byteParam(list[0], 'user_data');
        const nonce = byteParam(list[1], 'nonce');
        if (userData && userData.length > maxAttestationFieldBytes)
          throw new InvalidParamsError(`user_data exceeds ${maxAttestationFieldBytes}-byte limit`);
        if (nonce && nonce.length > maxAttestationFieldBytes)
          throw new InvalidParamsError(`nonce exceeds ${maxAttestationFieldBytes}-byte limit`);
        return (await everyEnclave((enclave) => enclave.signerAttestation(userData, nonce))).map((doc) => [...doc]);
      }
      case 'healthz': {
        const state = await health();
        if (!state.ok) throw new ServerError(state.message);
        return { version: options.version };
      }
      default:
        // jsonrpsee's text, not the foundation's MethodNotFoundError wording.
        throw new MethodNotFoundError(method, 'Method not found');
    }
  }

  async function one(body: unknown): Promise<unknown> {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return { jsonrpc: '2.0', id: null, error: failure(-32600, 'Invalid request') };
    const { jsonrpc, method, params, id } = body as Record<string, unknown>;
    const validId = id === undefined || id === null || typeof id === 'string' || typeof id === 'number';
    if (jsonrpc !== '2.0' || typeof method !== 'string' || !validId)
      return { jsonrpc: '2.0', id: validId ? (id ?? null) : null, error: failure(-32600, 'Invalid request') };
    let response: unknown;
    try {
      response = { jsonrpc: '2.0', id: id ?? null, result: await call(method, params) };
      requests?.inc({ method, outcome: 'ok' });
    } catch (error) {
      const rpc = error instanceof JsonRpcError ? failure(error.rpcCode, error.message) : failure(-32603, 'Internal error');
      if (!(error instanceof JsonRpcError)) logger?.error({ err: error, method }, 'unexpected prover host error');
      requests?.inc({ method: rpc.code === -32601 ? 'unknown' : method, outcome: String(rpc.code) });
      if (rpc.code !== -32601) logger?.warn({ method, code: rpc.code, error: rpc.message }, 'JSON-RPC error');
      response = { jsonrpc: '2.0', id: id ?? null, error: rpc };
    }
    return id === undefined ? undefined : response;
  }

  async function handle(body: unknown): Promise<unknown> {
    if (Array.isArray(body)) {
      if (body.length === 0) return { jsonrpc: '2.0', id: null, error: failure(-32600, 'Invalid request') };
      const out = (await Promise.all(body.map(one))).filter((item) => item !== undefined);
      return out.length ? out : undefined;
    }
    return one(body);
  }

  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? '' : JSON.stringify(body));
  };
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (options.exposeMetrics && options.metrics && answerMetrics(options.metrics, request, response)) return;
    if (request.method === 'GET' && path === '/healthz') {
      const work = health().then((state) => {
        if (state.ok) send(response, 200, { version: options.version });
        else send(response, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
      });
      track(work);
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST, GET' }).end();
      return;
    }
    const tooLarge = () =>
      JSON.stringify({ jsonrpc: '2.0', id: null, error: failure(-32600, `request body exceeds ${maxBodyBytes} bytes`) });
    track(
      readBody(request, response, maxBodyBytes, tooLarge).then((text) => {
        if (text === undefined) return;
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          send(response, 200, { jsonrpc: '2.0', id: null, error: failure(-32700, 'Parse error') });
          return;
        }
        return handle(body).then(
          (out) => send(response, 200, out),
          (error: unknown) => {
            logger?.error({ err: error }, 'prover host request failed');
            send(response, 500, { jsonrpc: '2.0', id: null, error: failure(-32603, 'Internal error') });
          },
        );
      }),
    );
  };
  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  return {
    handle,
    health,
    async listen(host, port) {
      server = createServer(onRequest);
      server.requestTimeout = 0; // proofs may take up to the proof request timeout
      server.headersTimeout = 60_000;
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, host, () => resolve());
      });
      const address = server.address() as AddressInfo;
      return { url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}` };
    },
    async close() {
      draining = true;
      const closed = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
      server?.closeIdleConnections();
      await Promise.allSettled([...inFlight]);
      server?.closeAllConnections();
      await closed;
    },
  };
}
