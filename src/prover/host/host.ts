import {
  errorMessage,
  InvalidParamsError,
  JsonRpcError,
  MethodNotFoundError,
  ResourceUnavailableError,
  ServerError,
} from '../../errors.ts';
import { handleMessage, handleText, type RpcCall } from '../../jsonrpc/protocol.ts';
import type { Logger } from '../../obs/logger.ts';
import { counter, gauge, histogram, type Registry } from '../../obs/metrics.ts';
import type { EnclaveClient } from './enclave-client.ts';
import { createHostHttp } from './http-server.ts';
import { createProveCall, type ProveCallOptions } from './prove-call.ts';
import type { Preimage } from '../enclave-protocol.ts';
import type { SignerRegistry } from './signer-registry.ts';
import type { ProofRequest } from '../request.ts';
import { createSignerRoute } from './signer-route.ts';

/**
 * The prover host: JSON-RPC 2.0 over HTTP POST, as Base's nitro host speaks it (jsonrpsee):
 *   prover_prove [ProofRequest]             -> {"Tee":{"aggregate_proposal":…,"proposals":[…]}}
 *   enclave_signerPublicKey []              -> [[4,…65 bytes], …] one per enclave, in configured order
 *   enclave_signerAttestation [user_data?, nonce?] -> [[…document bytes], …] one per enclave
 *   healthz []                              -> {"version":"x.y.z"}
 *   GET /healthz                            -> 200 {"version":…} | 500 when unhealthy
 * Errors: -32000 proof failed or timed out; -32001 no valid signer / enclave unavailable;
 * -32602 bad params (user_data or nonce over 512 bytes is checked before any enclave is called).
 *
 * Its pieces: the HTTP side (`http-server.ts`), enclave choice by the signer registry
 * (`signer-route.ts`), prover_prove with its timeout (`prove-call.ts`), the JSON-RPC framing in
 * jsonrpsee's wording (`jsonrpc/protocol.ts`); here, the methods.
 */
export interface ProverHostOptions {
  readonly enclaves: readonly EnclaveClient[];
  readonly registry?: SignerRegistry | undefined;
  /** Collects the preimages of a request (from the L1/L2 RPCs). */
  readonly witness: (request: ProofRequest, signal: AbortSignal) => Promise<Preimage[]>;
  /** Checks each enclave answer before it is returned (./schedule-check.ts). */
  readonly checkResult?: ProveCallOptions['checkResult'];
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

/** jsonrpsee's framing: its fixed error texts, no limit on a batch (its default). */
const hostProtocol = { maxBatch: Number.POSITIVE_INFINITY, wording: 'jsonrpsee' } as const;

/** A byte vector param: JSON array of integers (serde Vec<u8>), or 0x-hex, or null/absent. */
function byteParam(value: unknown, name: string): Uint8Array | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return Uint8Array.from(value as number[]);
  if (typeof value === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(value)) return Uint8Array.from(Buffer.from(value.slice(2), 'hex'));
  throw new InvalidParamsError(`invalid type for ${name}: expected an array of bytes (0-255) or null`);
}

export function createProverHost(options: ProverHostOptions): ProverHost {
  const { enclaves, logger, metrics } = options;
  const requests =
    metrics && counter(metrics, 'flashlog_prover_host_requests_total', 'JSON-RPC calls by method and outcome', ['method', 'outcome']);
  const proveSeconds =
    metrics &&
    histogram(metrics, 'flashlog_prover_host_prove_seconds', 'prover_prove duration', ['outcome'], [0.1, 0.5, 1, 5, 30, 120, 600, 1800]);
  const healthyGauge = metrics && gauge(metrics, 'flashlog_prover_host_healthy', '1 when healthz answers OK');
  const signers = createSignerRoute({ enclaves, registry: options.registry, logger });
  const witnessBytes =
    metrics &&
    histogram(
      metrics,
      'flashlog_prover_host_witness_bytes',
      'the preimage set sent to the enclave per proof, in bytes',
      [],
      [1e5, 1e6, 1e7, 1e8, 1e9],
    );
  const prove = createProveCall({
    route: signers.route,
    witness: options.witness,
    checkResult: options.checkResult,
    timeoutMs: options.timeoutMs,
    logger,
    proveSeconds,
    witnessBytes,
  });
  let draining = false;

  /** enclave_* calls are all-or-nothing: one failing enclave fails the call (-32001). */
  async function everyEnclave<T>(call: (enclave: EnclaveClient) => Promise<T>): Promise<T[]> {
    try {
      return await Promise.all(enclaves.map(call));
    } catch (error) {
      throw new ResourceUnavailableError(errorMessage(error));
    }
  }

  async function health(): Promise<{ ok: true } | { ok: false; message: string }> {
    let state: { ok: true } | { ok: false; message: string };
    if (draining) state = { ok: false, message: 'shutting down' };
    else if (!options.registry || signers.latched) state = { ok: true };
    else {
      try {
        await signers.route();
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
        const { userData, nonce } = attestationParams(params);
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

  /** One call, counted and logged by method and outcome; the framing around it is protocol.ts's, in jsonrpsee's wording. */
  async function dispatch(request: RpcCall): Promise<unknown> {
    try {
      const result = await call(request.method, request.params);
      requests?.inc({ method: request.method, outcome: 'ok' });
      return result;
    } catch (error) {
      const code = error instanceof JsonRpcError ? error.rpcCode : -32603;
      if (!(error instanceof JsonRpcError)) logger?.error({ err: error, method: request.method }, 'unexpected prover host error');
      requests?.inc({ method: code === -32601 ? 'unknown' : request.method, outcome: String(code) });
      if (code !== -32601)
        logger?.warn(
          { method: request.method, code, error: error instanceof JsonRpcError ? error.message : 'Internal error' },
          'JSON-RPC error',
        );
      throw error;
    }
  }

  async function handle(body: unknown): Promise<unknown> {
    return (await handleMessage(body, dispatch, hostProtocol)) ?? undefined;
  }

  const http = createHostHttp({
    answer: (text) => handleText(text, dispatch, hostProtocol),
    health,
    version: options.version,
    maxBodyBytes: options.maxBodyBytes ?? 10 * 1024 * 1024,
    logger,
    metrics: options.exposeMetrics ? metrics : undefined,
  });

  return {
    handle,
    health,
    listen: (host, port) => http.listen(host, port),
    async close() {
      draining = true;
      await http.close();
    },
  };
}

/** The params of enclave_signerAttestation, `[user_data?, nonce?]` or by name, each at most 512 bytes. */
function attestationParams(params: unknown): { userData: Uint8Array | undefined; nonce: Uint8Array | undefined } {
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
  return { userData, nonce };
}
