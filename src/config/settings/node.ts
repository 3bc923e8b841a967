import { integer, decimal, port, bool, httpUrlSetting, setting, type SettingSpec } from './spec.ts';

/** Node operation (issue 7). */
export const nodeSettingSpecs = {
  consensusRpc: httpUrlSetting(
    'the consensus client RPC (optimism_syncStatus, port 7545): node-status, and the safe/finalized heads of ingest and run',
  ),
  maxLagMinutes: setting({ schema: decimal(0), default: '5', expects: 'minutes', describe: 'node-status: behind more than this exits 1' }),
  maxSafeLagMinutes: setting({
    schema: decimal(0),
    default: '30',
    expects: 'minutes',
    describe: 'node-status: the safe head (derived from L1) further than this behind the unsafe head exits 1 (needs --consensus-rpc)',
  }),
  expectChainId: setting({
    schema: integer(1).optional(),
    expects: 'a chain ID, e.g. 8453',
    describe: 'node-status: exit 1 when the node serves another chain',
  }),
  list: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'schema: list the topics instead of printing one schema',
  }),
  json: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'node-status, execute-block, check-gateway: print one JSON object for machines',
  }),
  cadenceWindowMs: setting({
    schema: integer(0, 60_000),
    default: '2000',
    expects: 'milliseconds',
    describe: 'node-status: how long to watch the head of a Denim node (200 ms blocks) before judging its cadence; 0 = lag only',
  }),
} satisfies Record<string, SettingSpec>;
