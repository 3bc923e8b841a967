import { execFileSync, spawn, spawnSync } from 'node:child_process';
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

/**
 * op-node's L1BeaconClient fetching the blobs of the L1 block at `time` by versioned hash, and their
 * data. Asynchronous: the beacon endpoint may be served by this very process.
 */
export function peerBeacon(
  peer: string,
  input: { url: string; time: number; hashes: readonly Hex[] },
): Promise<{ blobs?: Hex[]; data?: Hex[]; error?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(peer, ['beacon'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status !== 0) reject(new Error(`derive-peer beacon exited ${status}: ${stderr}`));
      else resolve(JSON.parse(stdout) as { blobs?: Hex[]; data?: Hex[]; error?: string });
    });
    child.stdin.end(JSON.stringify(input));
  });
}
