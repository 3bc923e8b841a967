/**
 * The chains `--network` knows, with public endpoints their operators document (README, "Chains"):
 *
 * - Base mainnet / Sepolia: since Denim (2026-11-05 / 2026-10-21) 200 ms blocks and no
 *   flashblocks; the blocks source polls Base's public HTTP RPC (docs.base.org, "Network
 *   information"). Public endpoints are rate-limited: bring your own node (--rpc, --rpc-ws) for load.
 * - Unichain mainnet / Sepolia: flashblocks feeds (rollup-boost README), receipts in the frames'
 *   metadata (op-rbuilder); public RPC as Unichain's docs give it (not re-checked; --rpc overrides).
 * - OP Mainnet / OP Sepolia (chain ids 10 and 11155420): pre-confirmations are Subblocks (the
 *   flashblocks JSON form with state_root, block_hash, withdrawals_root zeroed; ethereum-optimism/specs
 *   `specs/protocol/subblocks.md` @43a681ec), but OP documents no public subblocks WebSocket
 *   (UNCONFIRMED as of this preset): the preset takes OP's public RPC (https://mainnet.optimism.io,
 *   https://sepolia.optimism.io; rate-limited, no WebSocket) for canonical heads and requires --ws
 *   (`feedHint` says how).
 * - X Layer mainnet: flashblocks feed and RPC from X Layer's developer docs (RPC: 100 req/s per IP).
 *   The docs list two feed hosts, wss://xlayerws.okx.com/flashblocks (the one their node guide sets
 *   as FLASHBLOCKS_URL, used here) and wss://ws.xlayer.tech/flashblocks; --ws takes either.
 *
 * No preset points at a retired feed (Base's flashblocks feeds stopped at Denim).
 */
export interface NetworkPreset {
  readonly source: 'flashblocks' | 'blocks';
  readonly rpc: string;
  readonly ws?: string;
  readonly rpcWs?: string;
  /** A flashblocks preset without a public feed: how to point --ws at one (one line, for the error). */
  readonly feedHint?: string;
}

const opFeedHint = (network: string): string =>
  `--network ${network}: OP documents no public subblocks feed; give --ws (FLASHLOG_WS) the subblocks WebSocket URL of your provider or of your own op-reth (wss://…)`;

export const networks = {
  'base-mainnet': { source: 'blocks', rpc: 'https://mainnet.base.org' },
  'base-sepolia': { source: 'blocks', rpc: 'https://sepolia.base.org' },
  'unichain-mainnet': { source: 'flashblocks', ws: 'wss://mainnet-flashblocks.unichain.org/ws', rpc: 'https://mainnet.unichain.org' },
  'unichain-sepolia': { source: 'flashblocks', ws: 'wss://sepolia-flashblocks.unichain.org/ws', rpc: 'https://sepolia.unichain.org' },
  'op-mainnet': { source: 'flashblocks', rpc: 'https://mainnet.optimism.io', feedHint: opFeedHint('op-mainnet') },
  'op-sepolia': { source: 'flashblocks', rpc: 'https://sepolia.optimism.io', feedHint: opFeedHint('op-sepolia') },
  xlayer: { source: 'flashblocks', ws: 'wss://xlayerws.okx.com/flashblocks', rpc: 'https://rpc.xlayer.tech' },
} as const satisfies Record<string, NetworkPreset>;

export type NetworkName = keyof typeof networks;
