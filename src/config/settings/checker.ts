import { integer, decimal, httpUrlSetting, setting, type SettingSpec } from './spec.ts';

/** The gateway checker (check-gateway). */
export const checkerSettingSpecs = {
  gateway: httpUrlSetting("check-gateway: the flashlog gateway's JSON-RPC to hold against --node"),
  node: httpUrlSetting("check-gateway: the node the gateway stands in for (its upstream's JSON-RPC)"),
  minutes: setting({
    schema: decimal(0),
    default: '0',
    expects: 'minutes (0 = until stopped)',
    describe: 'check-gateway: how long to record pending answers before the summary (0: until SIGINT/SIGTERM, as a canary)',
  }),
  blocks: setting({
    schema: integer(1).optional(),
    expects: 'a positive integer',
    describe: 'check-gateway: stop once this many pending heights are judged',
  }),
} satisfies Record<string, SettingSpec>;
