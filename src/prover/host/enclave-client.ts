import { FlashlogError } from '../../errors.ts';
import { decodeEnclaveResponse, encodeEnclaveRequest, type EnclaveResponse, type Preimage, type ProofResult } from '../enclave-protocol.ts';
import { exchangeFrame, formatEndpoint, type EnclaveEndpoint } from '../transport.ts';

/** An enclave answered EnclaveResponse::Error; `message` is its text, verbatim. */
export class EnclaveError extends FlashlogError {
  constructor(message: string) {
    super('ENCLAVE_ERROR', message);
    this.name = 'EnclaveError';
  }
}

export interface EnclaveClient {
  readonly endpoint: EnclaveEndpoint;
  readonly name: string;
  signerPublicKey(): Promise<Uint8Array>;
  signerAttestation(userData?: Uint8Array, nonce?: Uint8Array): Promise<Uint8Array>;
  /** No response timeout of its own: the caller bounds it (the host's proof request timeout). */
  prove(preimages: readonly Preimage[], signal?: AbortSignal): Promise<ProofResult>;
}

/** Host side of one enclave: connect 5 s, signer calls answer within 10 s (as Base's host). */
export function createEnclaveClient(
  endpoint: EnclaveEndpoint,
  options: { connectTimeoutMs?: number; signerTimeoutMs?: number } = {},
): EnclaveClient {
  const name = formatEndpoint(endpoint);
  const expect = <T extends EnclaveResponse['type']>(response: EnclaveResponse, type: T): Extract<EnclaveResponse, { type: T }> => {
    if (response.type === 'error') throw new EnclaveError(response.message);
    if (response.type !== type)
      throw new FlashlogError('ENCLAVE_PROTOCOL', `enclave ${name}: expected a ${type} response, got ${response.type}`);
    return response as Extract<EnclaveResponse, { type: T }>;
  };
  const signerOptions = { connectTimeoutMs: options.connectTimeoutMs ?? 5000, responseTimeoutMs: options.signerTimeoutMs ?? 10_000 };
  return {
    endpoint,
    name,
    async signerPublicKey() {
      const reply = await exchangeFrame(endpoint, encodeEnclaveRequest({ type: 'signerPublicKey' }), signerOptions);
      return expect(decodeEnclaveResponse(reply), 'signerPublicKey').publicKey;
    },
    async signerAttestation(userData, nonce) {
      const reply = await exchangeFrame(endpoint, encodeEnclaveRequest({ type: 'signerAttestation', userData, nonce }), signerOptions);
      return expect(decodeEnclaveResponse(reply), 'signerAttestation').document;
    },
    async prove(preimages, signal) {
      const reply = await exchangeFrame(endpoint, encodeEnclaveRequest({ type: 'prove', preimages }), {
        connectTimeoutMs: signerOptions.connectTimeoutMs,
        ...(signal ? { signal } : {}),
      });
      return expect(decodeEnclaveResponse(reply), 'prove').result;
    },
  };
}
