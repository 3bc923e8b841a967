/**
 * The chains `--network` knows, with public endpoints their operators document (README, "Chains"):
 *
 * - Base mainnet / Sepolia: since Denim (2026-11-05 / 2026-10-21) 200 ms blocks and no
 *   flashblocks; the blocks source polls Base's public HTTP RPC (docs.base.org, "Network
 *   information"). Public endpoints are rate-limited: bring your own node (--rpc, --rpc-ws) for load.
 * - Unichain mainnet / Sepolia: flashblocks feeds (rollup-boost README), receipts in the frames'
 *   metadata (op-rbuilder); public RPC as Unichain's docs give it (not re-checked; --rpc overrides).
 * - X Layer mainnet: flashblocks feed and RPC from X Layer's developer docs (RPC: 100 req/s per IP).
 *
 * No preset points at a retired feed (Base's flashblocks feeds stopped at Denim).
 */
export interface NetworkPreset {
  readonly source: 'flashblocks' | 'blocks';
  readonly rpc: string;
  readonly ws?: string;
  readonly rpcWs?: string;
}

export const networks = {
  'base-mainnet': { source: 'blocks', rpc: 'https://mainnet.base.org' },
  'base-sepolia': { source: 'blocks', rpc: 'https://sepolia.base.org' },
  'unichain-mainnet': { source: 'flashblocks', ws: 'wss://mainnet-flashblocks.unichain.org/ws', rpc: 'https://mainnet.unichain.org' },
  'unichain-sepolia': { source: 'flashblocks', ws: 'wss://sepolia-flashblocks.unichain.org/ws', rpc: 'https://sepolia.unichain.org' },
  xlayer: { source: 'flashblocks', ws: 'wss://xlayerws.okx.com/flashblocks', rpc: 'https://rpc.xlayer.tech' },
} as const satisfies Record<string, NetworkPreset>;

export type NetworkName = keyof typeof networks;
