import { availableParallelism } from 'node:os';
import { generatePrivateKey } from 'viem/accounts';
import { createEnclaveCore } from '../src/prover/enclave/core.ts';
import { serveEnclave } from '../src/prover/enclave/socket-server.ts';
import { createReexecPool } from '../src/prover/enclave/reexec-pool.ts';
import { formatEndpoint, parseEndpoint } from '../src/prover/transport.ts';
import { ConfigError, errorMessage } from '../src/errors.ts';
import { serviceSettings, type Command } from './command.ts';

/**
 * `flashlog enclave`: a local-mode enclave. No security module here: teeImageHash is zero, the
 * signer key comes from a CSPRNG at start and lives only in memory; only its address is logged.
 * Prove re-executes every L2 block of the range from the request's preimages and signs only if the
 * rebuilt headers hash to the blocks' hashes and the last output root is the claimed one
 * (--enclave-check headers: hash-linked headers only). It does not derive the blocks from L1.
 */
export const enclaveCommand: Command = {
  name: 'enclave',
  summary: 'a local-mode TEE enclave (frames over TCP or a Unix socket)',
  usage: 'flashlog enclave [--listen tcp://127.0.0.1:8000 | unix:/path]',
  settings: [...serviceSettings, 'listen', 'proveDelayMs', 'enclaveCheck', 'enclaveWorkers'],
  defaults: { metricsPort: '9465' },
  longRunning: true,
  async run(ctx) {
    let endpoint;
    try {
      endpoint = parseEndpoint(ctx.config.listen);
    } catch (error) {
      throw new ConfigError(`--listen (FLASHLOG_LISTEN): ${errorMessage(error)}`);
    }
    const check = ctx.config.enclaveCheck;
    const workers = ctx.config.enclaveWorkers ?? Math.max(1, availableParallelism() - 1);
    // Threads for the blocks of a proof, shared by all proofs; with 1, blocks run in this thread.
    const pool = workers > 1 && check !== 'headers' ? createReexecPool({ workers }) : undefined;
    if (pool) ctx.shutdown.register('enclave re-execution threads', () => pool.close());
    const core = createEnclaveCore({ privateKey: generatePrivateKey(), check, ...(pool ? { pool } : {}) });
    const delayMs = ctx.config.proveDelayMs;
    const handled =
      delayMs > 0
        ? {
            ...core,
            handle: async (request: Parameters<typeof core.handle>[0]) => {
              if (request.type === 'prove') await new Promise((resolve) => setTimeout(resolve, delayMs));
              return core.handle(request);
            },
          }
        : core;
    const server = await serveEnclave(handled, { endpoint, logger: ctx.logger });
    ctx.shutdown.register('enclave', () => server.close());
    ctx.logger.info(
      {
        listen: formatEndpoint(server.endpoint),
        signer: core.signerAddress,
        teeImageHash: core.teeImageHash,
        mode: 'local',
        check,
        reexecThreads: pool?.size ?? 1,
      },
      'enclave listening',
    );
    ctx.logger.warn(
      { mode: 'local', check },
      check === 'derive'
        ? 'local mode: a proof derives every L2 block from the L1 preimages, refuses a supplied block that is not the derived one, and re-executes it from the derived transactions; there is no attestation'
        : check === 'reexecute'
          ? 'local mode: a proof re-executes every L2 block from the witness and checks its rebuilt header against the block hash; the transactions and payload attributes come from the L2 blocks themselves, not derived from L1, and there is no attestation'
          : 'local mode, headers only: a proof checks the claimed output root against hash-verified L2 headers and message-passer storage roots; it re-executes nothing, does not derive the blocks from L1, and there is no attestation',
    );
    await new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    return 0;
  },
};
