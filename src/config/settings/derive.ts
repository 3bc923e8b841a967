import { decodingForks } from '../../derive/rules.ts';
import { enumOf, integer, setting, type SettingSpec } from './spec.ts';

/** The operator's batch decoder (decode-batch). */
export const deriveSettingSpecs = {
  batchInput: setting({
    schema: enumOf(['auto', 'transaction', 'calldata', 'blob', 'channel']),
    default: 'auto',
    expects: 'auto|transaction|calldata|blob|channel',
    describe:
      'decode-batch: what each input holds: an EIP-2718 batcher transaction, batcher data (version byte and frames), a 131072-byte blob, or a compressed channel; auto = blob when 131072 bytes, else transaction',
  }),
  batchFork: setting({
    schema: enumOf(decodingForks),
    default: 'jovian',
    expects: decodingForks.join('|'),
    describe:
      'decode-batch: the fork whose decoding rules apply (channel bank and Holocene ordering, brotli and the channel size limits from Fjord, span batches from Delta)',
  }),
  l2GenesisTime: setting({
    schema: integer(0).optional(),
    expects: 'seconds (unix time)',
    describe:
      "decode-batch: the L2 genesis timestamp (rollup config genesis.l2_time), for span batch blocks' timestamps (default 0: relative)",
  }),
  l2BlockTime: setting({
    schema: integer(1).optional(),
    expects: 'seconds',
    describe: 'decode-batch: the L2 block time (rollup config block_time), for span batch blocks (default 2)',
  }),
} satisfies Record<string, SettingSpec>;
