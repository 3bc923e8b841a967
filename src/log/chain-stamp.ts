import { firstValueFrom, timeout } from 'rxjs';
import { ConfigError, FlashlogError } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { chainStampKey, decodeChainStamp, encodeChainStamp, type ChainIdentity } from '../records/meta.ts';
import { allTopics, topics } from '../records/topics.ts';
import { hash32, quantity, type Hex } from '../schemas/hex.ts';
import type { Log } from './port.ts';

/**
 * The log's chain stamp (its first flashlog.meta record, src/records/meta.ts): read, written, and
 * held against the chain of a node.
 */

/** `chain id 1337, genesis 0x26f9…` (the whole hash): how a chain is named in every message. */
export const describeChain = (chain: ChainIdentity): string => `chain id ${chain.chainId}, genesis ${chain.genesisHash}`;

export const sameChain = (a: ChainIdentity, b: ChainIdentity): boolean =>
  a.chainId === b.chainId && a.genesisHash.toLowerCase() === b.genesisHash.toLowerCase();

/** A stamp never changes once written, so a log's is read once per process. */
const known = new WeakMap<Log, ChainIdentity>();

/** The chain the log is stamped with, or null for a log that has no stamp (new, or made by an older flashlog). */
export async function readChainStamp(log: Log, waitMs = 30_000): Promise<ChainIdentity | null> {
  const cached = known.get(log);
  if (cached) return cached;
  const ends = await log.endOffsets(topics.meta);
  if (ends.every((end) => end.offset === 0n)) return null;
  const consumer = log.consumer({ topics: [topics.meta], from: 'earliest' });
  try {
    const first = await firstValueFrom(consumer.records$.pipe(timeout(waitMs)));
    const chain = decodeChainStamp(first.value);
    known.set(log, chain);
    return chain;
  } finally {
    await consumer.close();
  }
}

/** Whether any record is on the log besides its stamp (a log made before stamps, when unstamped). */
export async function logHasRecords(log: Log): Promise<boolean> {
  for (const topic of allTopics) {
    if (topic === topics.meta) continue;
    const ends = await log.endOffsets(topic).catch(() => []);
    if (ends.some((end) => end.offset > 0n)) return true;
  }
  return false;
}

/** Stamps a log that has no stamp; resolves with the log's stamp afterwards (the first one written wins). */
export async function stampChain(log: Log, chain: ChainIdentity): Promise<ChainIdentity> {
  const existing = await readChainStamp(log);
  if (existing) return existing;
  await log.produce([{ topic: topics.meta, key: chainStampKey, value: encodeChainStamp(chain) }]);
  const stamped = await readChainStamp(log);
  if (!stamped) throw new FlashlogError('LOG_CHAIN_STAMP_INVALID', `${topics.meta}: the chain stamp written is not on the log`);
  return stamped;
}

/**
 * What a process found when it held the log against the chain of its node:
 * - `same`: the log is stamped with that chain;
 * - `stamped`: a writer stamped a log that had no stamp (`hadRecords`: one made by an older flashlog);
 * - `unstamped`: a reader met a log with no stamp, or nobody said which chain to expect;
 * - `unchecked`: the log is stamped, but the process has no chain to hold it against.
 * A log of another chain is not a result: checkLogChain throws LogChainMismatchError.
 */
export type ChainCheck =
  | { readonly kind: 'same'; readonly chain: ChainIdentity }
  | { readonly kind: 'stamped'; readonly chain: ChainIdentity; readonly hadRecords: boolean }
  | { readonly kind: 'unstamped'; readonly hadRecords: boolean }
  | { readonly kind: 'unchecked'; readonly stamp: ChainIdentity };

/**
 * A log of another chain than the node's: one line naming both chains and where the log is, and
 * what to do. A ConfigError, so the CLI prints it as one line and exits 2 (the setting to change is
 * --data-dir or --topic-prefix).
 */
export class LogChainMismatchError extends ConfigError {
  readonly stamp: ChainIdentity;
  readonly expected: ChainIdentity;
  constructor(where: LogPlace, stamp: ChainIdentity, expected: ChainIdentity, expectedFrom: string) {
    super(`the log ${where.description} holds ${describeChain(stamp)}, but ${expectedFrom} is ${describeChain(expected)}; ${where.remedy}`);
    this.name = 'LogChainMismatchError';
    this.stamp = stamp;
    this.expected = expected;
  }
}

/** Where a log is, for messages: `in ./data`, `under topic prefix "base." on Kafka 127.0.0.1:9092`. */
export interface LogPlace {
  readonly description: string;
  /** What a user does about a log of another chain there. */
  readonly remedy: string;
}

export interface CheckLogChainOptions {
  /** The chain of the node this process follows or serves; null when it has none to ask. */
  readonly expected: ChainIdentity | null;
  /** Where `expected` came from, for the message: `the node at http://…`. */
  readonly expectedFrom: string;
  /** A writer stamps an unstamped log; a reader never writes. */
  readonly writer: boolean;
  readonly place: LogPlace;
}

/**
 * Holds the log against the node's chain: a log of another chain throws LogChainMismatchError; a
 * writer stamps a log that has none. Readers accept an unstamped log (the caller says so in a
 * warning when it has records).
 */
export async function checkLogChain(log: Log, options: CheckLogChainOptions): Promise<ChainCheck> {
  const stamp = await readChainStamp(log);
  const { expected } = options;
  if (stamp && expected) {
    if (!sameChain(stamp, expected)) throw new LogChainMismatchError(options.place, stamp, expected, options.expectedFrom);
    return { kind: 'same', chain: stamp };
  }
  if (stamp) return { kind: 'unchecked', stamp };
  const hadRecords = await logHasRecords(log);
  if (!expected || !options.writer) return { kind: 'unstamped', hadRecords };
  const stamped = await stampChain(log, expected);
  // Another writer stamped the log first, with another chain.
  if (!sameChain(stamped, expected)) throw new LogChainMismatchError(options.place, stamped, expected, options.expectedFrom);
  return { kind: 'stamped', chain: stamped, hadRecords };
}

/**
 * The chain of a node: eth_chainId and the hash of its block 0. Errors say which answer was wrong.
 * @example await upstreamChain(createUpstream('http://127.0.0.1:8545', { timeoutMs: 5000 }))
 */
export async function upstreamChain(upstream: Upstream): Promise<ChainIdentity> {
  const [chainId, genesis] = await Promise.all([upstream.call('eth_chainId', []), upstream.call('eth_getBlockByNumber', ['0x0', false])]);
  return chainIdentityOf(chainId, genesis);
}

/**
 * The chain named by the answers to `eth_chainId` and `eth_getBlockByNumber("0x0")`, read by the
 * writer's chain stamp and by the checker alike. Throws LOG_CHAIN_STAMP_INVALID naming the field
 * (after `where`, such as an endpoint's URL) on an answer that is not one.
 * @example chainIdentityOf('0x539', { hash: '0xabc…' }) // { chainId: 1337n, genesisHash: '0xabc…' }
 */
export function chainIdentityOf(chainId: unknown, genesis: unknown, where = ''): ChainIdentity {
  const at = where ? `${where} ` : '';
  const id = quantity.safeParse(chainId);
  if (!id.success)
    throw new FlashlogError('LOG_CHAIN_STAMP_INVALID', `${at}eth_chainId: expected a 0x-hex quantity, got ${JSON.stringify(chainId)}`);
  const hash = hash32.safeParse((genesis as { hash?: unknown } | null)?.hash);
  if (!hash.success)
    throw new FlashlogError(
      'LOG_CHAIN_STAMP_INVALID',
      `${at}eth_getBlockByNumber("0x0").hash: expected a 32-byte 0x-hex hash, got ${JSON.stringify((genesis as { hash?: unknown } | null)?.hash ?? genesis)}`,
    );
  return { chainId: BigInt(id.data), genesisHash: hash.data.toLowerCase() as Hex };
}

/**
 * The check a writer runs while it writes, not only at start: resolves while the node is still
 * the log's chain (or the log has no stamp yet), throws LogChainMismatchError (a ConfigError: one
 * line naming both chains, exit 2) once it is another; a node not answering (a node restarting)
 * is thrown as it is, so a caller that must know waits and asks again; a node that answers without
 * a block 0 (pruned) cannot be checked and passes, as at start.
 * @example const verify = createChainGuard(log, upstream, place, 'the node at http://127.0.0.1:8545'); await verify();
 */
export function createChainGuard(log: Log, upstream: Upstream, place: LogPlace, nodeName: string): () => Promise<void> {
  const changed: LogPlace = {
    description: place.description,
    remedy: `the writer stopped so the log keeps one chain; ${place.remedy}`,
  };
  return async () => {
    const stamp = await readChainStamp(log);
    if (!stamp) return;
    let chain: ChainIdentity;
    try {
      chain = await upstreamChain(upstream);
    } catch (error) {
      // A node that answers but cannot name its chain (no block 0: a pruned devnet) cannot be
      // checked; as at start, it is followed unchecked. Not answering is thrown: asked again.
      if (error instanceof FlashlogError && error.code === 'LOG_CHAIN_STAMP_INVALID') return;
      throw error;
    }
    if (!sameChain(stamp, chain))
      throw new LogChainMismatchError(changed, stamp, chain, `${nodeName} (its chain changed while this writer ran)`);
  };
}
