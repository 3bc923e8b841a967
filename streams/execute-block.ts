import { ConfigError } from '../src/errors.ts';
import { compareHeaders, fieldWidth, formatComparison } from '../src/stateless/compare.ts';
import { executeBlock } from '../src/stateless/execute-block.ts';
import { readBlockFixture } from '../src/stateless/fixture.ts';
import type { Command } from './command.ts';

/**
 * `flashlog execute-block FIXTURE.json`: re-executes one block from its parent header, payload
 * attributes and witness (the `shared/fixtures/op-blocks` format), with the OP Stack rules of the
 * rollup config the fixture carries, and prints the rebuilt header beside the expected one.
 * Exit 0 only when the rebuilt header hashes to the expected block hash.
 */
export const executeBlockCommand: Command = {
  name: 'execute-block',
  summary: 're-execute a block from its witness and compare its header and hash with the chain\'s',
  usage: 'flashlog execute-block FIXTURE.json [--json]',
  settings: ['logLevel', 'json'],
  longRunning: false,
  async run(ctx, positionals) {
    const [file, ...extra] = positionals;
    if (!file || extra.length > 0) throw new ConfigError(`expected one FIXTURE.json, got ${JSON.stringify(positionals)}`);
    const fixture = await readBlockFixture(file);
    const started = performance.now();
    const executed = await executeBlock(fixture.block);
    const ms = Math.round(performance.now() - started);
    const matches = executed.hash === fixture.expectedHash;
    const comparison = compareHeaders(executed.header, fixture.expectedHeader);
    const summary = {
      block: Number(executed.header.number), fork: executed.rules.fork, transactions: executed.receipts.length,
      gasUsed: Number(executed.header.gasUsed), ms, hash: executed.hash, expectedHash: fixture.expectedHash, matches,
    };
    if (ctx.config.json) {
      process.stdout.write(`${JSON.stringify({ ...summary, header: comparison.computed, expectedHeader: comparison.expected ?? null, differing: comparison.differing,
        receipts: executed.receipts.map((r) => ({ type: r.type, status: r.status, gasUsed: Number(r.gasUsed), logs: r.logs.length, l1Fee: r.l1Fee.toString(), operatorFee: r.operatorFee.toString() })) })}\n`);
    } else {
      const out = [
        `block ${summary.block} (${summary.fork}): ${summary.transactions} transactions, ${summary.gasUsed} gas, ${ms} ms`,
        formatComparison(comparison),
        `${'hash'.padEnd(fieldWidth)}  ${matches ? ' ' : '≠'} ${executed.hash}${matches ? '' : `  expected ${fixture.expectedHash}`}`,
        matches ? 'block hash matches: the block was executed as the chain executed it'
          : `block hash differs${comparison.expected ? (comparison.differing.length ? `: ${comparison.differing.join(', ')}` : '') : ' (the fixture has no expected header to compare fields with)'}`,
      ];
      process.stdout.write(`${out.join('\n')}\n`);
    }
    return matches ? 0 : 1;
  },
};
