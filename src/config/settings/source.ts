import { z } from 'zod';
import { url, integer, bytes, enumOf, setting, type SettingSpec } from './spec.ts';

/** Ingest. */
export const sourceSettingSpecs = {
  ws: setting({
    schema: z
      .array(url(['ws:', 'wss:']))
      .min(1)
      .optional(),
    repeatable: true,
    expects: 'ws:// or wss:// URL (repeatable)',
    describe: 'flashblocks WebSocket feed; many are merged and de-duplicated (serve: only says the source is flashblocks, as for ingest)',
  }),
  maxFrameBytes: setting({
    schema: bytes,
    default: '16MiB',
    expects: 'bytes, e.g. 16777216 or 16MiB',
    describe: 'cap on a frame, compressed or decompressed',
  }),
  pingIntervalMs: setting({
    schema: integer(10),
    default: '500',
    expects: 'milliseconds',
    describe: 'WebSocket ping interval; no pong before the next ping reconnects',
  }),
  reconnectMinMs: setting({
    schema: integer(1),
    default: '1000',
    expects: 'milliseconds',
    describe: 'first reconnect delay (doubles each failure)',
  }),
  reconnectMaxMs: setting({ schema: integer(1), default: '10000', expects: 'milliseconds', describe: 'longest reconnect delay' }),
  aheadBlocks: setting({
    schema: integer(0, 64),
    default: '5',
    expects: 'an integer 0-64',
    describe: 'blocks buffered ahead of their canonical parent',
  }),
  produceBufferRecords: setting({
    schema: integer(1),
    default: '100000',
    expects: 'records',
    describe: 'records held while the log is unavailable before the oldest are dropped',
  }),
  drainTimeoutMs: setting({
    schema: integer(0),
    default: '5000',
    expects: 'milliseconds',
    describe:
      'at shutdown, how long ingest waits for work in flight (an execution, records not yet appended) before abandoning it; later flashblocks are published without executing',
  }),

  // The blocks source (Base after Denim, issue 14).
  source: setting({
    schema: enumOf(['flashblocks', 'blocks']).optional(),
    expects: 'flashblocks|blocks',
    describe:
      "where pre-confirmations come from: a flashblocks feed (--ws) or a node's 200 ms blocks (--rpc, --rpc-ws); default from --network, else flashblocks with --ws, blocks without",
  }),
  rpcWs: setting({
    schema: url(['ws:', 'wss:']).optional(),
    expects: 'ws:// or wss:// URL',
    describe: "blocks source: the node's WebSocket JSON-RPC (eth_subscribe newHeads); without it, --rpc is polled every --blocks-poll-ms",
  }),
  blocksPollMs: setting({
    schema: integer(10),
    default: '200',
    expects: 'milliseconds',
    describe:
      "blocks source: how often to read the node's latest block without --rpc-ws (one block time); with it, a safety poll at 10x this",
  }),
  maxReorgBlocks: setting({
    schema: integer(1, 10000),
    default: '64',
    expects: 'blocks',
    describe: 'blocks source: newest blocks held for linking; a reorg deeper than this withdraws every block held',
  }),
  maxBackfillBlocks: setting({
    schema: integer(1, 100000),
    default: '600',
    expects: 'blocks',
    describe:
      'most blocks read from the node after a restart, an outage or a reorg (either source); older missing blocks are a gap record (600 = 2 minutes of 200 ms blocks)',
  }),
  lifecyclePollMs: setting({
    schema: integer(0),
    default: '1000',
    expects: 'milliseconds, 0 to disable',
    describe: 'how often to read the safe / finalized heads (node tags, or optimism_syncStatus with --consensus-rpc) for flashlog.chain',
  }),
} satisfies Record<string, SettingSpec>;
