import { z } from 'zod';
import { integer, decimal, port, bool, address, enumOf, setting, type SettingSpec } from './spec.ts';

/** The local devnet (`flashlog devnet`, issue 3). */
export const devnetSettingSpecs = {
  devnetHost: setting({
    schema: z.string().min(1),
    default: '127.0.0.1',
    expects: 'a host or IP to bind',
    describe: 'devnet: bind address of its JSON-RPC and flashblocks WebSocket',
  }),
  devnetPort: setting({
    schema: port,
    default: '8545',
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe: 'devnet: JSON-RPC (HTTP) port',
  }),
  devnetWsPort: setting({
    schema: port,
    default: '7111',
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe: 'devnet: flashblocks WebSocket port',
  }),
  blockTimeMs: setting({ schema: integer(1), default: '2000', expects: 'milliseconds', describe: 'devnet: block time' }),
  flashblockMs: setting({
    schema: integer(1),
    default: '200',
    expects: 'milliseconds (at most --block-time-ms)',
    describe: 'devnet: time between flashblocks',
  }),
  metadataReceipts: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'devnet: flashblock metadata carries type-tagged receipts (pre-Azul era B) instead of {block_number, access_list: null}',
  }),
  feedForm: setting({
    schema: enumOf(['flashblocks', 'subblocks']),
    default: 'flashblocks',
    expects: 'flashblocks|subblocks',
    describe:
      "devnet: the feed's form: Base's retired flashblocks (real state root and block hash in the last frame of a block), or OP's subblocks (state_root, block_hash, withdrawals_root zeroed and withdrawals empty in every frame, receipts in the metadata)",
  }),
  plain: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'devnet: send flashblocks as text frames instead of brotli binary frames',
  }),
  load: setting({
    schema: decimal(0),
    default: '0',
    expects: 'transactions per second (0 = none)',
    describe:
      'devnet: built-in load generator rate (transfers, ERC-20, deployments, reverts, logs, deposits); --reorg-every with --load 0 sends 10 tx/s (devnet and run --devnet), so each reorg has a transaction to withdraw',
  }),
  reorgEvery: setting({
    schema: integer(0),
    default: '0',
    expects: 'blocks (0 = never)',
    describe:
      'devnet: every K-th block seals without its last pre-confirmed transaction (with --denim: the unsafe head is replaced by a block without it)',
  }),
  devnetHistoryBlocks: setting({
    schema: integer(0).pipe(
      z
        .number()
        .refine(
          (blocks) => blocks === 0 || blocks >= 256,
          'expected 0 (keep everything) or at least 256 (BLOCKHASH reads 256 blocks back)',
        ),
    ),
    default: '0',
    expects: 'blocks (0 = keep everything; else at least 256)',
    describe:
      'devnet (flashblocks) / run --devnet: bounded history: every K sealed blocks the chain moves to a new EVM forked at its head and blocks and state older than the last K blocks are dropped (null / "missing trie node", as on a pruned node); blocks after the first rollover carry an EVM-made state root (docs/memory.md)',
  }),
  denim: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe:
      'devnet / run --devnet: Base after Denim: complete blocks every --denim-block-ms, no flashblocks feed, tx[1] the BaseTime deposit, WebSocket JSON-RPC (newHeads, logs) on the RPC port',
  }),
  denimBlockMs: setting({ schema: integer(1), default: '200', expects: 'milliseconds', describe: 'devnet --denim: block time' }),
  safeLagBlocks: setting({
    schema: integer(1),
    default: '10',
    expects: 'blocks',
    describe: 'devnet --denim: how far `safe` trails the unsafe head',
  }),
  finalizedLagBlocks: setting({
    schema: integer(1),
    default: '50',
    expects: 'blocks',
    describe: 'devnet --denim: how far `finalized` trails the unsafe head',
  }),
} satisfies Record<string, SettingSpec>;
