import { createHash } from 'node:crypto';
import type { ChainIdentity } from '../records/meta.ts';
import type { RpcLog } from '../records/logs.ts';
import { hash32, quantity, type Hex } from '../schemas/hex.ts';
import type { PendingBlock, ViewState } from './state.ts';

/**
 * A checkpoint of the view at log offsets, so a restart replays only the records after it.
 *
 * The view is small (at most `maxPendingBlocks` pending and dropped blocks, the canonical number,
 * the offsets), so a snapshot is one JSON document:
 *
 *   {"format":"flashlog.view-snapshot","version":1,"digest":"<sha256 of body>","body":"<JSON text>"}
 *
 * `body` holds the state (bigints as decimal strings, maps rebuilt on load) and, per partition
 * read, the offset of the last record applied with the SHA-256 of its value. A restart reads that
 * record again before any other of its partition: if it is not there or differs, the log is not
 * the one the snapshot was taken from (a new broker, a recreated topic, a replaced file) and the
 * view replays from the beginning. The snapshot also names the log it was taken from (its identity:
 * the embedded file's id, the Kafka cluster id) and the chain that log holds (its stamp, `chain`:
 * `{chainId, genesisHash}`, null when the log had none), and a snapshot of another log or another
 * chain is not used. It is an invariant that a snapshot is only used when every one of these checks
 * passes, so a snapshot can make a restart faster but never change an answer.
 */
export const snapshotFormat = 'flashlog.view-snapshot';
export const snapshotVersion = 1;

/** The last record applied on one partition: the resume point and its fingerprint. */
export interface SnapshotCheck {
  readonly topic: string;
  readonly partition: number;
  /** Offset of the last record applied (the view resumes after it). */
  readonly offset: bigint;
  /** SHA-256 (hex) of that record's value. */
  readonly sha256: string;
}

export interface ViewSnapshot {
  /** The log's identity (Log.identity), null when the log has none. */
  readonly logIdentity: string | null;
  /** The chain of the log it was taken from (the log's stamp), null when the log had none. */
  readonly chain?: ChainIdentity | null;
  readonly state: ViewState;
  readonly checks: readonly SnapshotCheck[];
}

export type DecodedSnapshot = { readonly ok: true; readonly snapshot: ViewSnapshot } | { readonly ok: false; readonly reason: string };

export function valueDigest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

interface BlockBody {
  number: string;
  index: number;
  payloadId: string;
  header: PendingBlock['header'];
  transactions: PendingBlock['transactions'];
  receipts: PendingBlock['receipts'];
  logs: PendingBlock['logs'];
  stateDiff: PendingBlock['stateDiff'];
  /** Lagoon's post-exec transaction; absent in snapshots written before flashlog knew it. */
  postExecTx?: PendingBlock['postExecTx'];
}

interface Body {
  logIdentity: string | null;
  /** Absent in snapshots written before the log knew its chain. */
  chain?: { chainId: string; genesisHash: string } | null;
  canonical: string;
  blocks: BlockBody[];
  dropped: BlockBody[];
  offsets: Record<string, string>;
  applied: number;
  invalid: number;
  lastInvalid: string | null;
  seq: number;
  checks: { topic: string; partition: number; offset: string; sha256: string }[];
}

const encodeBlock = (block: PendingBlock): BlockBody => ({
  number: block.number.toString(),
  index: block.index,
  payloadId: block.payloadId,
  header: block.header,
  transactions: block.transactions,
  receipts: block.receipts,
  logs: block.logs,
  stateDiff: block.stateDiff,
  ...(block.postExecTx ? { postExecTx: block.postExecTx } : {}),
});

/**
 * The snapshot text of a view state and the fingerprints of the records it was built from.
 * @example writeFileSync(path, encodeSnapshot({ state: view.current(), checks }));
 */
export function encodeSnapshot(snapshot: ViewSnapshot): string {
  const { state } = snapshot;
  const body: Body = {
    logIdentity: snapshot.logIdentity,
    chain: snapshot.chain ? { chainId: `0x${snapshot.chain.chainId.toString(16)}`, genesisHash: snapshot.chain.genesisHash } : null,
    canonical: state.canonical.toString(),
    blocks: state.blocks.map(encodeBlock),
    dropped: state.dropped.map(encodeBlock),
    offsets: Object.fromEntries(Object.entries(state.offsets).map(([key, offset]) => [key, offset.toString()])),
    applied: state.applied,
    invalid: state.invalid,
    lastInvalid: state.lastInvalid,
    seq: state.seq,
    checks: snapshot.checks.map((check) => ({ ...check, offset: check.offset.toString() })),
  };
  const text = JSON.stringify(body);
  return JSON.stringify({ format: snapshotFormat, version: snapshotVersion, digest: valueDigest(text), body: text });
}

/** Reads a snapshot; any doubt (format, version, digest, shape) is a reason, never a guess. */
export function decodeSnapshot(text: string): DecodedSnapshot {
  let envelope: { format?: unknown; version?: unknown; digest?: unknown; body?: unknown };
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    return { ok: false, reason: 'not JSON (truncated or corrupt)' };
  }
  if (envelope?.format !== snapshotFormat)
    return { ok: false, reason: `format: expected ${snapshotFormat}, got ${JSON.stringify(envelope?.format)}` };
  if (envelope.version !== snapshotVersion)
    return { ok: false, reason: `version: expected ${snapshotVersion}, got ${JSON.stringify(envelope.version)}` };
  if (typeof envelope.body !== 'string' || envelope.digest !== valueDigest(envelope.body))
    return { ok: false, reason: 'digest: the body does not match its SHA-256 (corrupt)' };
  try {
    const body = JSON.parse(envelope.body) as Body;
    const state: ViewState = {
      canonical: BigInt(body.canonical),
      blocks: body.blocks.map(decodeBlock),
      dropped: body.dropped.map(decodeBlock),
      offsets: Object.fromEntries(Object.entries(body.offsets).map(([key, offset]) => [key, BigInt(offset)])),
      applied: body.applied,
      invalid: body.invalid,
      lastInvalid: body.lastInvalid,
      change: { type: 'none' },
      seq: body.seq,
    };
    const checks = body.checks.map((check) => ({
      topic: check.topic,
      partition: check.partition,
      offset: BigInt(check.offset),
      sha256: check.sha256,
    }));
    for (const [key, next] of Object.entries(state.offsets)) {
      if (!checks.some((check) => `${check.topic}/${check.partition}` === key && check.offset + 1n === next))
        return { ok: false, reason: `checks: none for ${key}` };
    }
    if (body.logIdentity !== null && typeof body.logIdentity !== 'string')
      return { ok: false, reason: 'logIdentity: expected a string or null' };
    let chain: ChainIdentity | null = null;
    if (body.chain !== undefined && body.chain !== null) {
      if (!quantity.safeParse(body.chain.chainId).success || !hash32.safeParse(body.chain.genesisHash).success)
        return { ok: false, reason: 'chain: expected {chainId: 0x-hex quantity, genesisHash: 32-byte 0x-hex hash} or null' };
      chain = { chainId: BigInt(body.chain.chainId), genesisHash: body.chain.genesisHash.toLowerCase() as Hex };
    }
    return { ok: true, snapshot: { logIdentity: body.logIdentity, chain, state, checks } };
  } catch (error) {
    return { ok: false, reason: `body: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function decodeBlock(body: BlockBody): PendingBlock {
  const positionByHash = new Map<string, number>();
  body.transactions.forEach((tx, position) => positionByHash.set(tx.hash.toLowerCase(), position));
  const logsByAddress = new Map<string, RpcLog[]>();
  for (const log of body.logs) {
    const key = log.address.toLowerCase();
    const list = logsByAddress.get(key);
    if (list) list.push(log);
    else logsByAddress.set(key, [log]);
  }
  return {
    number: BigInt(body.number),
    index: body.index,
    payloadId: body.payloadId,
    header: body.header,
    transactions: body.transactions,
    positionByHash,
    receipts: body.receipts,
    logs: body.logs,
    logsByAddress,
    stateDiff: body.stateDiff,
    postExecTx: body.postExecTx ?? null,
  };
}
