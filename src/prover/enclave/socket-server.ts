import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import type { EnclaveCore } from './core.ts';
import { decodeEnclaveRequest, encodeEnclaveResponse } from '../enclave-protocol.ts';
import { serveFrames, type EnclaveEndpoint, type FrameServer } from '../transport.ts';

/**
 * Serves an enclave core over TCP or a Unix socket: one framed request per connection, a framed
 * response, close. A request that cannot be decoded is answered with EnclaveResponse::Error.
 */
export function serveEnclave(
  core: EnclaveCore,
  options: { endpoint: EnclaveEndpoint; logger?: Logger; requestTimeoutMs?: number; maxFrameBytes?: number },
): Promise<FrameServer> {
  const logger = options.logger;
  return serveFrames({
    endpoint: options.endpoint,
    ...(logger ? { logger } : {}),
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
    async handle(payload) {
      let request;
      try {
        request = decodeEnclaveRequest(payload);
      } catch (error) {
        return encodeEnclaveResponse({ type: 'error', message: `invalid request: ${errorMessage(error)}` });
      }
      const started = Date.now();
      const response = await core.handle(request);
      logger?.info(
        {
          request: request.type,
          response: response.type,
          ms: Date.now() - started,
          ...(response.type === 'error' ? { error: response.message } : {}),
        },
        'enclave request',
      );
      return encodeEnclaveResponse(response);
    },
    onBadFrame: (error) => encodeEnclaveResponse({ type: 'error', message: `invalid request frame: ${errorMessage(error)}` }),
  });
}
