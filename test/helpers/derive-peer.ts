import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Hex } from 'viem';

/**
 * The OP Stack's own derivation code (test/go/derive-peer, op-node's derive package from the Go
 * module proxy) as a decoder: batcher data and blobs in, the channels and batches op-node reads out.
 */
const build = fileURLToPath(new URL('../go/derive-peer/build.sh', import.meta.url));

export interface PeerBlock {
  readonly timestamp: number;
  readonly epochNumber: number;
  /** Go marshals an empty list as null. */
  readonly transactions: Hex[] | null;
}
export interface PeerDecoded {
  readonly channels: { id: Hex; error?: string; batches: { type: 'singular' | 'span'; blocks: PeerBlock[]; error?: string }[] }[];
  readonly errors: string[] | null;
}

/** Builds the peer (minutes cold, seconds after) and returns its path. */
export function buildDerivePeer(): string {
  return execFileSync('bash', [build], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 }).trim();
}

/** op-node's decode of batcher data (calldata) and blobs, in order. */
export function peerDecode(
  peer: string,
  input: { chain: { chainId: number; genesisTime: number; blockTime: number }; fjord: boolean; batcherData: Hex[]; blobs: Hex[] },
): PeerDecoded {
  const run = spawnSync(peer, ['decode'], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`derive-peer decode exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as PeerDecoded;
}
