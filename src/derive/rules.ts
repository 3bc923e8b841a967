import { rulesAt, type RollupConfig } from '../op/rollup-config.ts';
import type { ChannelRules } from './channel-bank.ts';
import type { ChannelReadRules } from './channel.ts';

/**
 * The forks that change how batcher data is decoded, and what each changes
 * (specs/protocol/derivation.md, "Protocol Parameters"; the fork pages):
 *
 * | from     | change |
 * | -------- | ------ |
 * | Canyon   | the channel bank hands out the first ready channel, not only the first one |
 * | Delta    | span batches |
 * | Fjord    | brotli channels; MAX_RLP_BYTES_PER_CHANNEL 10 MB → 100 MB; MAX_CHANNEL_BANK_SIZE 100 MB → 1 GB |
 * | Granite  | the channel timeout is 50 L1 blocks (before: the rollup config's `channel_timeout`) |
 * | Holocene | frames strictly in order, one staging channel, at most MAX_RLP_BYTES_PER_CHANNEL |
 * | Isthmus  | SetCode (type 4) transactions in batches (checked by batch validation, not decoding) |
 */
export const decodingForks = ['bedrock', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus', 'jovian'] as const;
export type DecodingFork = (typeof decodingForks)[number];

export type DerivationRules = ChannelRules & ChannelReadRules;

/** The rollup config's `channel_timeout` of OP Mainnet and most chains before Granite. */
export const defaultChannelTimeoutBedrock = 300;
const channelTimeoutGranite = 50;

/**
 * The decoding rules in force at `fork`.
 *
 * @example derivationRules('holocene').maxRlpBytesPerChannel // 100_000_000
 */
export function derivationRules(fork: DecodingFork, channelTimeoutBedrock = defaultChannelTimeoutBedrock): DerivationRules {
  const at = (from: DecodingFork) => decodingForks.indexOf(fork) >= decodingForks.indexOf(from);
  const fjord = at('fjord');
  return {
    canyon: at('canyon'),
    delta: at('delta'),
    fjord,
    holocene: at('holocene'),
    channelTimeout: at('granite') ? channelTimeoutGranite : channelTimeoutBedrock,
    maxRlpBytesPerChannel: fjord ? 100_000_000 : 10_000_000,
    maxChannelBankSize: fjord ? 1_000_000_000 : 100_000_000,
  };
}

/**
 * The decoding fork of an L2 chain at an L1 block's time (op-node picks the channel bank's and the
 * channel reader's rules by the L1 origin's timestamp against the L2 fork times). Forks after
 * Jovian change nothing in decoding.
 *
 * @example decodingForkAt(rollup, header.timestamp) // 'holocene'
 */
export function decodingForkAt(rollup: RollupConfig, l1Timestamp: bigint): DecodingFork {
  const rules = rulesAt(rollup, l1Timestamp);
  for (const fork of [...decodingForks].reverse()) {
    if (fork === 'bedrock' || rules.active(fork as Exclude<DecodingFork, 'bedrock'>)) return fork;
  }
  return 'bedrock';
}
