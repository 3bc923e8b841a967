import { errorMessage, InvalidParamsError, JsonRpcError, ServerError } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import type { Histogram } from '../../obs/metrics.ts';
import type { EnclaveClient } from './enclave-client.ts';
import type { Preimage, ProofResult } from '../enclave-protocol.ts';
import { parseProofRequest, proofResultToWire, type ProofRequest } from '../request.ts';

/**
 * `prover_prove [ProofRequest]`: route to an enclave, collect the preimages, prove, all within
 * `timeoutMs` (-32000 "proof request timed out" past it; every other failure is -32000 too, except
 * -32602 for bad params and -32001 when no signer is valid).
 */
export interface ProveCallOptions {
  readonly route: () => Promise<EnclaveClient>;
  readonly witness: (request: ProofRequest, signal: AbortSignal) => Promise<Preimage[]>;
  readonly timeoutMs: number;
  readonly logger?: Logger | undefined;
  /** prover_prove duration, by outcome (ok, error, timeout). */
  readonly proveSeconds?: Histogram<string> | undefined;
  /** The preimage set's size per proof, in bytes. */
  readonly witnessBytes?: Histogram<string> | undefined;
  /** Checks the enclave's answer before it is returned (./schedule-check.ts); a throw is the reply. */
  readonly checkResult?: ((request: ProofRequest, result: ProofResult) => Promise<void>) | undefined;
}

/** A preimage set's size: its total bytes, and its bytes by key type (blobs, keccak-keyed nodes and headers, …). */
export function preimageSetSize(preimages: readonly Preimage[]): { bytes: number; bytesByType: Record<string, number> } {
  const bytesByType: Record<string, number> = {};
  let bytes = 0;
  for (const { key, value } of preimages) {
    bytes += value.length;
    bytesByType[key.type] = (bytesByType[key.type] ?? 0) + value.length;
  }
  return { bytes, bytesByType };
}

/** The params of prover_prove: `[request]` or `{request}`. */
function requestParam(params: unknown): unknown {
  if (Array.isArray(params)) return params[0];
  if (params && typeof params === 'object' && 'request' in params) return (params as { request: unknown }).request;
  return undefined;
}

export function createProveCall(options: ProveCallOptions): (params: unknown) => Promise<unknown> {
  const { logger } = options;
  return async function prove(params) {
    const raw = requestParam(params);
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
          const enclave = await options.route();
          const preimages = await options.witness(request, controller.signal);
          const size = preimageSetSize(preimages);
          options.witnessBytes?.observe(size.bytes);
          logger?.info({ enclave: enclave.name, claimed: request.claimedL2BlockNumber, preimages: preimages.length, ...size }, 'proving');
          let proved: ProofResult;
          try {
            proved = await enclave.prove(preimages, controller.signal);
          } catch (error) {
            throw new ServerError(errorMessage(error));
          }
          await options.checkResult?.(request, proved);
          return proved;
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
      options.proveSeconds?.observe({ outcome }, (performance.now() - started) / 1000);
    }
  };
}
