import { z } from 'zod';
import { address, enumOf, httpUrlSetting, integer, port, setting, type SettingSpec } from './spec.ts';

/** The devnet's batcher (`flashlog devnet --batcher-l1-rpc URL --batcher-key KEY`): posts the L2's blocks to an L1. */
export const batcherSettingSpecs = {
  batcherL1Rpc: httpUrlSetting('devnet: the L1 JSON-RPC the batcher posts the L2 blocks to (the batcher is off without it)'),
  batcherKey: setting({
    schema: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/)
      .optional(),
    expects: '0x and 64 hex digits',
    describe: 'devnet: the private key the batcher signs its L1 transactions with (funded on the L1)',
  }),
  batcherInbox: setting({
    schema: address,
    default: '0xff00000000000000000000000000000000001337',
    expects: 'a 0x-prefixed 20-byte address',
    describe: 'devnet: the batch inbox address on the L1 that batcher transactions go to',
  }),
  batcherEveryBlocks: setting({
    schema: integer(1, 10_000),
    default: '10',
    expects: 'L2 blocks (1-10000)',
    describe: 'devnet: the batcher posts a channel every this many sealed L2 blocks',
  }),
  batcherTarget: setting({
    schema: enumOf(['calldata', 'blob']),
    default: 'calldata',
    expects: 'calldata|blob',
    describe:
      "devnet: batcher data in calldata, or in EIP-4844 blobs (one frame per blob, up to 6 blobs a transaction; each blob's KZG commitment and proof cost about 1 s of CPU, on a thread of their own; the L1 must take blob transactions)",
  }),
  batcherBatchType: setting({
    schema: enumOf(['singular', 'span']),
    default: 'span',
    expects: 'singular|span',
    describe: 'devnet: the batcher writes one singular batch per L2 block, or one span batch per channel',
  }),
  batcherCompression: setting({
    schema: enumOf(['zlib', 'brotli']),
    default: 'brotli',
    expects: 'zlib|brotli',
    describe: 'devnet: the batcher compresses its channels with zlib, or brotli (Fjord)',
  }),
  batcherBeaconPort: setting({
    schema: port,
    default: '5052',
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe:
      'devnet: with --batcher-l1-rpc, the port of the beacon API blob endpoints (/eth/v1/beacon/blob_sidecars/{slot}, /eth/v1/beacon/blobs/{slot}) serving the blobs the batcher posted',
  }),
} satisfies Record<string, SettingSpec>;
