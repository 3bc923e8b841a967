import { integer, enumOf, httpUrlSetting, setting, type SettingSpec } from './spec.ts';

/** Upstream RPC, and the execution and reconciliation of pre-confirmed blocks. */
export const executionSettingSpecs = {
  rpc: httpUrlSetting('upstream JSON-RPC (canonical state)'),
  rpcTimeoutMs: setting({ schema: integer(1), default: '10000', expects: 'milliseconds', describe: 'timeout of one upstream RPC request' }),

  // Execution and reconciliation of pre-confirmed blocks (issue 3).
  executor: setting({
    schema: enumOf(['auto', 'local', 'metadata', 'node']),
    default: 'auto',
    expects: 'auto|local|metadata|node',
    describe:
      'receipts of pre-confirmed txs: local EDR over state forked from --rpc, era A/B feed metadata, or a flashblocks-aware --rpc node; auto = metadata when the feed carries receipts, else local',
  }),
  stateDiff: setting({
    schema: enumOf(['storage', 'accounts', 'full', 'none']),
    default: 'storage',
    expects: 'storage|accounts|full|none',
    describe:
      'local executor state diff: storage = balance/nonce/code and changed storage slots of touched accounts (each new tx traced alone); accounts = balance/nonce/code only (pending storage reads answer the sealed block); full = storage via the prestate tracer in the block (O(n^2) per block); none',
  }),
  canonicalPollMs: setting({
    schema: integer(0),
    default: '500',
    expects: 'milliseconds, 0 to disable',
    describe: 'ingest: how often to ask --rpc for canonical heads (sealed/reorg records, held flashblocks)',
  }),
} satisfies Record<string, SettingSpec>;
