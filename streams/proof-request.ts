import { ConfigError } from '../src/errors.ts';
import { httpCallRpc } from '../src/jsonrpc/upstream.ts';
import { proofRequestFromChains } from '../src/prover/request-from-chain.ts';
import { proofRequestToWire } from '../src/prover/request.ts';
import type { Command } from './command.ts';

/**
 * `flashlog proof-request --l1-rpc URL --l2-rpc URL --block-number N`: prints a ProofRequest (Base's
 * JSON, as `flashlog prove` reads it) for L2 blocks (agreed, N], read from the two nodes: the
 * agreed block's hash and output root, block N's output root, the L1 node's latest block as the
 * L1 head. The other fields are zero; edit them in the file if your prover needs them.
 */
export const proofRequestCommand: Command = {
  name: 'proof-request',
  summary: 'print a ProofRequest for L2 blocks (agreed, N] from an L1 and an L2 node (for flashlog prove)',
  usage: 'flashlog proof-request --l1-rpc URL --l2-rpc URL --block-number N [--agreed-block-number M] > request.json',
  settings: ['logLevel', 'l1Rpc', 'l2Rpc', 'blockNumber', 'agreedBlockNumber', 'rpcTimeoutMs'],
  longRunning: false,
  async run(ctx, positionals) {
    const { config } = ctx;
    if (positionals.length > 0) throw new ConfigError(`expected no positional arguments, got ${JSON.stringify(positionals)}`);
    if (!config.l1Rpc) throw new ConfigError('--l1-rpc (FLASHLOG_L1_RPC): required, expected an http(s) URL of an L1 execution node');
    if (!config.l2Rpc) throw new ConfigError('--l2-rpc (FLASHLOG_L2_RPC): required, expected an http(s) URL of an L2 execution node');
    if (config.blockNumber === undefined)
      throw new ConfigError('--block-number (FLASHLOG_BLOCK_NUMBER): required, expected the claimed L2 block');
    const agreed = config.agreedBlockNumber ?? config.blockNumber - 1;
    if (agreed >= config.blockNumber)
      throw new ConfigError(
        `--agreed-block-number (FLASHLOG_AGREED_BLOCK_NUMBER): got ${agreed}, expected a block below --block-number (${config.blockNumber})`,
      );
    const request = await proofRequestFromChains(
      { l1: httpCallRpc(config.l1Rpc, config.rpcTimeoutMs), l2: httpCallRpc(config.l2Rpc, config.rpcTimeoutMs) },
      { claimedBlock: config.blockNumber, agreedBlock: agreed },
    );
    process.stdout.write(`${JSON.stringify(proofRequestToWire(request), null, 2)}\n`);
    return 0;
  },
};
