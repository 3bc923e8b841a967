import { accessSync, constants, statSync } from 'node:fs';
import { z } from 'zod';
import { integer, setting, type SettingSpec } from './spec.ts';

/** An executable file at `path` (op-geth's binary). */
function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** `flashlog devnet --op-geth`: the devnet's L2 is an op-geth binary the user gives, derivable from an L1. */
export const opGethSettingSpecs = {
  opGeth: setting({
    schema: z.string().min(1).refine(isExecutableFile, 'expected the path of an executable op-geth binary').optional(),
    expects: 'the path of an executable op-geth binary (built from the Go module proxy: docs/prover.md)',
    describe:
      'devnet: run the L2 on this op-geth, sequenced by flashlog from the L1 of --batcher-l1-rpc (derivable: deposits and batches on that L1, rollup.json in --data-dir; no flashblocks feed)',
  }),
  opGethBlockTime: setting({
    schema: integer(1, 60),
    default: '1',
    expects: 'whole seconds, 1-60',
    describe: 'devnet --op-geth: the L2 block time',
  }),
} satisfies Record<string, SettingSpec>;
