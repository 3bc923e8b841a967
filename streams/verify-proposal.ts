import { readFileSync } from 'node:fs';
import type { Hex } from 'viem';
import { ConfigError, errorMessage } from '../src/errors.ts';
import { parseProofRequest, proofResultFromWire } from '../src/prover/request.ts';
import { verifyProofResult } from '../src/prover/verify.ts';
import type { Command } from './command.ts';

const readJson = (file: string, what: string): unknown => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${what} ${file}: cannot read JSON: ${errorMessage(error)}`);
  }
};

/**
 * `flashlog verify-proposal RESULT.json REQUEST.json`: rebuilds each proposal's journal, recovers
 * the signer and prints, one JSON line per proposal, the journal, its digest, the signer and the
 * 130-byte proof with v as 27/28 (what the L1 verifier takes). RESULT.json is a ProofResult
 * ({"Tee":…}) or a reply record from `flashlog prove`. `--schedule-id` is the scheduleId the L1
 * game pinned; a proposal carrying another, or signed over the journal before scheduleId, is
 * refused and named on stderr. Exit 0 when every check holds.
 */
export const verifyProposalCommand: Command = {
  name: 'verify-proposal',
  summary: "rebuild a proof's journals, recover the signer, print the L1 proof bytes",
  usage: 'flashlog verify-proposal RESULT.json REQUEST.json [--tee-image-hash 0x…] [--schedule-id 0x…]',
  settings: ['logLevel', 'teeImageHash', 'scheduleId'],
  longRunning: false,
  async run(ctx, positionals) {
    const [resultFile, requestFile, ...extra] = positionals;
    if (!resultFile || !requestFile || extra.length > 0)
      throw new ConfigError(`expected RESULT.json REQUEST.json, got ${JSON.stringify(positionals)}`);
    const resultJson = readJson(resultFile, 'RESULT.json') as Record<string, unknown>;
    const wire = resultJson && typeof resultJson === 'object' && 'result' in resultJson ? resultJson.result : resultJson;
    if (resultJson && typeof resultJson === 'object' && 'error' in resultJson)
      throw new ConfigError(`RESULT.json ${resultFile}: the reply is an error: ${JSON.stringify(resultJson.error)}`);
    let result;
    try {
      result = proofResultFromWire(wire);
    } catch (error) {
      throw new ConfigError(`RESULT.json ${resultFile}: not a ProofResult: ${errorMessage(error).slice(0, 300)}`);
    }
    const parsed = parseProofRequest(readJson(requestFile, 'REQUEST.json'), 'REQUEST.json');
    if (!parsed.ok) throw new ConfigError(parsed.message);
    const { proposals, problems } = await verifyProofResult(
      result,
      parsed.request,
      ctx.config.teeImageHash as Hex,
      ctx.config.scheduleId as Hex | undefined,
    );
    for (const proposal of proposals) process.stdout.write(`${JSON.stringify(proposal)}\n`);
    for (const problem of problems) process.stderr.write(`flashlog verify-proposal: ${problem}\n`);
    return problems.length === 0 ? 0 : 1;
  },
};
