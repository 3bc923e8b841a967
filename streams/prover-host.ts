import { readFileSync } from 'node:fs';
import type { Address } from 'viem';
import { ConfigError, errorMessage } from '../src/errors.ts';
import { chainNames } from '../src/prover/config-hash.ts';
import { createEnclaveClient } from '../src/prover/host/enclave-client.ts';
import { createProverHost } from '../src/prover/host/host.ts';
import { createSignerRegistry } from '../src/prover/host/signer-registry.ts';
import { parseEndpoint } from '../src/prover/transport.ts';
import { collectWitness } from '../src/prover/host/witness.ts';
import { createScheduleCheck } from '../src/prover/host/schedule-check.ts';
import { derivationSources, resolveHostChain } from '../src/prover/host/host-chain.ts';
import { httpCallRpc } from '../src/jsonrpc/upstream.ts';
import { serviceSettings, type Command } from './command.ts';

const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * `flashlog prover-host`: the JSON-RPC prover host in front of one or more enclaves. Startup
 * resolves the L2 chain (src/prover/host/host-chain.ts: from --l2-chain-id or the L2 RPC, with its
 * rollup config) and refuses chains the enclave has no config hash for. Ctrl-C stops accepting and
 * drains in-flight requests.
 *
 *   settings -> resolveHostChain -> createProverHost(enclaves, registry, schedule check, witness) -> listen
 */
export const proverHostCommand: Command = {
  name: 'prover-host',
  summary: 'the TEE prover host: prover_prove and enclave_* over JSON-RPC, routed across enclaves',
  usage: 'flashlog prover-host --l1-rpc URL --l2-rpc URL [--enclave tcp://127.0.0.1:8000 ...] [--registry 0x… ] [--port 7300]',
  settings: [
    ...serviceSettings,
    'l1Rpc',
    'l1BeaconRpc',
    'l2Rpc',
    'l2ChainId',
    'host',
    'port',
    'enclave',
    'timeout',
    'registry',
    'rpcTimeoutMs',
    'enclaveCheck',
    'rollupConfig',
    'protocolVersions',
  ],
  defaults: { port: '7300' },
  longRunning: true,
  async run(ctx) {
    const { config, logger } = ctx;
    if (!config.l1Rpc) throw new ConfigError('--l1-rpc (FLASHLOG_L1_RPC): required, expected an http(s) URL of an L1 execution node');
    if (!config.l2Rpc) throw new ConfigError('--l2-rpc (FLASHLOG_L2_RPC): required, expected an http(s) URL of an L2 execution node');
    const endpoints = config.enclave.map((text) => {
      try {
        return parseEndpoint(text);
      } catch (error) {
        throw new ConfigError(`--enclave (FLASHLOG_ENCLAVE): ${errorMessage(error)}`);
      }
    });
    if (endpoints.length > 1 && !config.registry) {
      throw new ConfigError(`--registry (FLASHLOG_REGISTRY): required with more than one --enclave (got ${endpoints.length})`);
    }
    const l1 = httpCallRpc(config.l1Rpc, config.rpcTimeoutMs);
    const l2 = httpCallRpc(config.l2Rpc, config.rpcTimeoutMs);
    const { l2ChainId, rollup, rollupConfigJson, derivation } = await resolveHostChain(config, () => l2('eth_chainId', []));
    const check = config.enclaveCheck;
    const registry = config.registry ? createSignerRegistry({ address: config.registry as Address, l1RpcUrl: config.l1Rpc }) : undefined;
    const host = createProverHost({
      enclaves: endpoints.map((endpoint) => createEnclaveClient(endpoint)),
      registry,
      checkResult: config.protocolVersions
        ? createScheduleCheck({
            l1,
            l2,
            protocolVersions: config.protocolVersions as Address,
            rollup,
          })
        : undefined,
      witness: (request, signal) =>
        collectWitness(request, {
          l1,
          l2,
          l2ChainId,
          signal,
          check,
          ...(rollupConfigJson === undefined ? {} : { rollupConfigJson }),
          ...(derivation ? { derivation: derivationSources(derivation, config.l1BeaconRpc) } : {}),
          onDerivationWitness: (witness) =>
            logger.info(
              { claimed: request.claimedL2BlockNumber, l1Blocks: witness.blocks, blobs: witness.blobs, bytes: witness.bytes },
              'derivation preimages',
            ),
        }),
      timeoutMs: config.timeout * 1000,
      version,
      logger,
      metrics: ctx.metrics,
      exposeMetrics: config.metrics,
    });
    const { url } = await host.listen(config.host, config.port).catch((error: unknown) => {
      const { code } = error as { code?: string };
      if (code === 'EADDRINUSE' || code === 'EACCES')
        throw new ConfigError(
          `--port (FLASHLOG_PORT): ${config.host}:${config.port} is ${code === 'EADDRINUSE' ? 'already in use' : 'not allowed'}; expected a free port (0 = any)`,
        );
      throw error;
    });
    ctx.shutdown.register('prover-host', () => host.close());
    logger.info(
      {
        url,
        metrics: config.metrics ? `${url}/metrics` : null,
        chainId: l2ChainId,
        chain: chainNames.get(l2ChainId),
        enclaves: config.enclave,
        registry: config.registry ?? null,
        check,
        timeoutS: config.timeout,
        version,
      },
      'prover host listening',
    );
    await new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    return 0;
  },
};
