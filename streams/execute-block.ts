import { readFileSync } from 'node:fs';
import { ConfigError, errorMessage, FlashlogError } from '../src/errors.ts';
import type { Config } from '../src/config/settings.ts';
import { knownRollupConfigs } from '../src/op/chains.ts';
import { compareHeaders, fieldWidth, formatComparison } from '../src/evm/op/compare.ts';
import { executeBlock } from '../src/evm/op/execute-block.ts';
import { fixtureFromRpc, readBlockFixture, type BlockFixture } from '../src/prover/host/fixture.ts';
import { collectBlockWitness } from '../src/prover/host/witness-rpc.ts';
import { httpCallRpc } from '../src/jsonrpc/upstream.ts';
import type { Command } from './command.ts';

/** The block from an L2 node (--l2-rpc, --block-number), with the chain's rules built in or from --rollup-config. */
async function fixtureFromNode(config: Config): Promise<BlockFixture> {
  const call = httpCallRpc(config.l2Rpc!, config.rpcTimeoutMs);
  const chainId = Number(BigInt((await call('eth_chainId', [])) as string));
  let rollupConfig: unknown;
  if (config.rollupConfig) {
    try {
      rollupConfig = JSON.parse(readFileSync(config.rollupConfig, 'utf8'));
    } catch (error) {
      throw new ConfigError(`--rollup-config (FLASHLOG_ROLLUP_CONFIG): ${errorMessage(error)}`);
    }
    const configured = (rollupConfig as { l2_chain_id?: unknown } | null)?.l2_chain_id;
    if (configured !== chainId)
      throw new ConfigError(
        `--rollup-config (FLASHLOG_ROLLUP_CONFIG): l2_chain_id is ${JSON.stringify(configured)}, but ${config.l2Rpc} serves chain ${chainId}`,
      );
  } else {
    rollupConfig = knownRollupConfigs.get(chainId);
    if (!rollupConfig)
      throw new ConfigError(
        `--rollup-config (FLASHLOG_ROLLUP_CONFIG): required for chain ${chainId}, whose rollup config flashlog does not know`,
      );
  }
  const witness = await collectBlockWitness(call, BigInt(config.blockNumber!));
  return fixtureFromRpc(witness, rollupConfig, `${config.l2Rpc} block ${config.blockNumber}`);
}

/**
 * `flashlog execute-block FIXTURE.json`: re-executes one block from its parent header, payload
 * attributes and witness (the `shared/fixtures/op-blocks` format), with the OP Stack rules of the
 * rollup config the fixture carries, and prints the rebuilt header beside the expected one.
 * With `--l2-rpc URL --block-number N` the same comes from an L2 node (debug_executionWitness, or
 * prestate traces + eth_getProof), the attributes from the block's own header.
 * Exit 0 only when the rebuilt header hashes to the expected block hash.
 */
export const executeBlockCommand: Command = {
  name: 'execute-block',
  summary: "re-execute a block from its witness and compare its header and hash with the chain's",
  usage:
    'flashlog execute-block FIXTURE.json [--json]\n       flashlog execute-block --l2-rpc URL --block-number N [--rollup-config FILE] [--json]',
  settings: ['logLevel', 'json', 'l2Rpc', 'blockNumber', 'rollupConfig', 'rpcTimeoutMs'],
  longRunning: false,
  async run(ctx, positionals) {
    const [file, ...extra] = positionals;
    const fromNode = ctx.config.l2Rpc !== undefined || ctx.config.blockNumber !== undefined;
    if (fromNode && (!ctx.config.l2Rpc || ctx.config.blockNumber === undefined || file)) {
      throw new ConfigError('expected FIXTURE.json, or --l2-rpc URL with --block-number N (not both)');
    }
    if (!fromNode && (!file || extra.length > 0)) throw new ConfigError(`expected one FIXTURE.json, got ${JSON.stringify(positionals)}`);
    if (!fromNode && ctx.config.rollupConfig)
      throw new ConfigError('--rollup-config (FLASHLOG_ROLLUP_CONFIG): applies to --l2-rpc; a FIXTURE.json carries its own rollupConfig');
    let fixture: BlockFixture;
    try {
      fixture = fromNode ? await fixtureFromNode(ctx.config) : await readBlockFixture(file!);
    } catch (error) {
      // An unreadable or malformed input is a usage error (exit 2), named by the parser.
      if (!fromNode && error instanceof FlashlogError) throw new ConfigError(error.message);
      throw error;
    }
    const started = performance.now();
    const executed = await executeBlock(fixture.block);
    const ms = Math.round(performance.now() - started);
    const matches = executed.hash === fixture.expectedHash;
    const comparison = compareHeaders(executed.header, fixture.expectedHeader);
    const summary = {
      block: Number(executed.header.number),
      fork: executed.rules.fork,
      transactions: executed.receipts.length,
      gasUsed: Number(executed.header.gasUsed),
      ms,
      hash: executed.hash,
      expectedHash: fixture.expectedHash,
      matches,
    };
    if (ctx.config.json) {
      process.stdout.write(
        `${JSON.stringify({
          ...summary,
          header: comparison.computed,
          expectedHeader: comparison.expected ?? null,
          differing: comparison.differing,
          receipts: executed.receipts.map((r) => ({
            type: r.type,
            status: r.status,
            gasUsed: Number(r.gasUsed),
            logs: r.logs.length,
            l1Fee: r.l1Fee.toString(),
            operatorFee: r.operatorFee.toString(),
          })),
        })}\n`,
      );
    } else {
      const out = [
        `block ${summary.block} (${summary.fork}): ${summary.transactions} transactions, ${summary.gasUsed} gas, ${ms} ms`,
        formatComparison(comparison),
        `${'hash'.padEnd(fieldWidth)}  ${matches ? ' ' : '≠'} ${executed.hash}${matches ? '' : `  expected ${fixture.expectedHash}`}`,
        matches
          ? 'block hash matches: the block was executed as the chain executed it'
          : `block hash differs${comparison.expected ? (comparison.differing.length ? `: ${comparison.differing.join(', ')}` : '') : ' (the fixture has no expected header to compare fields with)'}`,
      ];
      process.stdout.write(`${out.join('\n')}\n`);
    }
    return matches ? 0 : 1;
  },
};
