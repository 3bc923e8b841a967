import { randomBytes } from 'node:crypto';
import { concatMap, type Observable, type Subscription } from 'rxjs';
import type { WebSocket } from 'ws';
import { errorMessage, InvalidParamsError, LimitExceededError } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import type { Registry } from '../obs/metrics.ts';
import { counter, gauge } from '../obs/metrics.ts';
import type { RpcLog } from '../schemas/records.ts';
import type { PendingBlock, ViewState } from '../view/state.ts';
import { canonicalBlocks$ } from './canonical-blocks.ts';
import { formatPendingBlock, type TransactionFormatter } from './format.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { boolParam, logFilterParam, matchesFilter, objectParam, paramsArray, type LogFilter } from './params.ts';

/** pendingLogs subscribers written per turn of the event loop. */
const FAN_OUT_SLICE = 100;
/** Times in a row a pendingLogs pass goes back to its first subscribers for newer logs. */
const MAX_RESTARTS = 3;

/**
 * eth_subscribe / eth_unsubscribe over WebSocket:
 * - `newHeads` and `logs` [filter], the standard kinds, speak of canonical blocks, from one of two
 *   places (`standardKinds`):
 *   - `view`, on a chain followed by the blocks source (Base since Denim): each 200 ms block the
 *     view takes is canonical (unsafe), so `newHeads` is its header (with `timestampMs`) and `logs`
 *     its logs, written by the `pendingLogs` writer, with `removed: true` copies on a reorg;
 *   - `upstream`, on a flashblocks chain: each canonical block the view's head passes, read from
 *     the upstream once (canonical-blocks.ts); pre-confirmed logs stay on `pendingLogs`.
 * - `pendingLogs` [filter {address, topics}]: one notification per log of the latest flashblock;
 *   on a reorg, the withdrawn logs with `removed: true`.
 * - `newFlashblocks`: the accumulated pending block (full transactions, hash 0x00..00) per flashblock.
 * - `newFlashblockTransactions` [false | true | {address, topics}]: one notification per new
 *   transaction: its hash (false, the default), or (true) the transaction object with its receipt's
 *   `gasUsed`, `status`, `cumulativeGasUsed`, `contractAddress`, `logsBloom` and all its `logs`,
 *   or (a filter, as Base's node takes it) that full object for the transactions one of whose logs
 *   matches the filter, still with all their logs.
 * Each notification covers only what the latest flashblock added. Every payload is serialized once
 * and shared by all subscribers. A connection whose unsent bytes exceed `maxBufferedBytes` is closed
 * (1008, with the reason) and never slows the others.
 */
export interface SubscriptionLimits {
  readonly maxSubscriptions: number;
  readonly maxBufferedBytes: number;
}

export interface SubscriptionHub {
  /** Handles eth_subscribe / eth_unsubscribe for one connection. */
  call(socket: WebSocket, method: string, params: unknown): unknown;
  /** Forgets a closed connection. */
  detach(socket: WebSocket): void;
  readonly subscriberCount: () => number;
  close(): void;
}

type Kind = 'pendingLogs' | 'newFlashblocks' | 'newFlashblockTransactions' | 'logs' | 'newHeads';
const kindNames: readonly Kind[] = ['pendingLogs', 'newFlashblocks', 'newFlashblockTransactions', 'logs', 'newHeads'];
/** pendingLogs and logs share one fan-out: on a Denim chain each block's logs are both. */
const isLogKind = (kind: Kind): boolean => kind === 'pendingLogs' || kind === 'logs';
interface Sub {
  readonly id: string;
  readonly kind: Kind;
  readonly filter: LogFilter | null;
  readonly full: boolean;
  /** newFlashblockTransactions: only transactions with a log matching this (full objects). */
  readonly txFilter: LogFilter | null;
  readonly socket: WebSocket;
  /** pendingLogs: the newest log batch this subscriber has been written. */
  sent: number;
}

/** One flashblock's new logs (or a reorg's withdrawn ones), each serialized once when first needed. */
interface LogBatch {
  readonly seq: number;
  readonly logs: readonly RpcLog[];
  readonly bodies: (Buffer | undefined)[];
}

/** The header of one unmasked, final WebSocket text frame (RFC 6455 5.2) with `length` payload bytes. */
export function textFrameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x81, length]);
  if (length < 65536) return Buffer.from([0x81, 126, length >> 8, length & 0xff]);
  const header = Buffer.alloc(10);
  header[0] = 0x81;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}

export function createSubscriptionHub(options: {
  states$: Observable<ViewState>;
  formatter: TransactionFormatter;
  limits: SubscriptionLimits;
  logger: Logger;
  metrics: Registry;
  /** Where canonical blocks are read for `newHeads` and `logs` with `standardKinds: 'upstream'`. */
  upstream?: Upstream;
  /**
   * Where `newHeads` and `logs` come from: `view` when each block of the view is canonical (the
   * blocks source), `upstream` (the default) on a flashblocks chain, whose view holds pre-confirmed
   * blocks. With `upstream` and no upstream, those two kinds are refused.
   */
  standardKinds?: 'view' | 'upstream';
}): SubscriptionHub {
  const { formatter, limits, logger } = options;
  const standardFromView = options.standardKinds === 'view';
  const byId = new Map<string, Sub>();
  const bySocket = new Map<WebSocket, Map<string, Sub>>();
  const kinds: Record<Kind, Set<Sub>> = {
    pendingLogs: new Set(),
    newFlashblocks: new Set(),
    newFlashblockTransactions: new Set(),
    logs: new Set(),
    newHeads: new Set(),
  };
  /** Every pendingLogs and logs subscription, in arrival order: the log writer's list. */
  const logSubs = new Set<Sub>();
  const notifications = counter(options.metrics, 'flashlog_ws_notifications_total', 'subscription notifications sent', ['kind']);
  const slowDrops = counter(options.metrics, 'flashlog_ws_slow_disconnects_total', 'subscribers disconnected for falling behind');
  const subscribers = gauge(options.metrics, 'flashlog_ws_subscriptions', 'active subscriptions', ['kind']);
  const slow = new WeakSet<WebSocket>();

  /**
   * Sockets corked during one fan-out: every notification a flashblock brings a subscriber goes
   * out in one write (one syscall) instead of one per log. `uncorkAll` ends the fan-out.
   */
  const corked = new Set<{ cork(): void; uncork(): void }>();
  const uncorkAll = (): void => {
    for (const raw of corked) raw.uncork();
    corked.clear();
  };

  /** Closes a connection whose unsent data passed the limit (1008, with the reason); true if it did. */
  const dropIfSlow = (socket: WebSocket): boolean => {
    if (socket.bufferedAmount <= limits.maxBufferedBytes) return false;
    slow.add(socket);
    slowDrops.inc();
    logger.warn({ buffered: socket.bufferedAmount, limit: limits.maxBufferedBytes }, 'subscriber too slow; disconnecting');
    socket.close(1008, `subscriber too slow: ${socket.bufferedAmount} bytes unsent exceeds ${limits.maxBufferedBytes}`);
    setTimeout(() => socket.terminate(), 2000).unref();
    return true;
  };

  /** Writes a pendingLogs subscription every batch it still lacks, now. */
  const catchUp = (sub: Sub): void => {
    if (logSubs.has(sub) && sub.sent < logSeq) writeLogs(sub, logSeq);
  };
  /** A connection's logs go out before its other notifications. */
  const flushLogs = (socket: WebSocket): void => {
    for (const other of bySocket.get(socket)?.values() ?? []) catchUp(other);
  };

  const send = (sub: Sub, result: string): void => {
    const socket = sub.socket;
    if (slow.has(socket) || socket.readyState !== socket.OPEN || dropIfSlow(socket)) return;
    if (logSeq > 0) flushLogs(socket);
    const raw = (socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (raw && !corked.has(raw)) {
      raw.cork();
      corked.add(raw);
    }
    socket.send(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${sub.id}","result":${result}}}`);
    notifications.inc({ kind: sub.kind });
  };

  /**
   * pendingLogs is the hot path (every log to every subscriber). Each batch of logs is serialized
   * once, and a subscriber gets all its notifications in one write of ready-made WebSocket text
   * frames. Frames go straight to the connection's socket: without permessage-deflate (the server
   * never enables it) `ws` writes its own frames synchronously too, so the order on the wire is kept.
   *
   * One writer (`pump`) serves the subscribers in the order they came, a slice per turn of the
   * event loop, so a fan-out to thousands never holds back the pipeline behind it. When newer logs
   * arrive during a pass, the writer goes back to the first subscribers (those up to date get the
   * new batch; the rest get every batch they lack in one write), so the earliest subscribers wait
   * for one slice, not for the whole previous fan-out; a later one waits for the slices before it.
   * Each subscriber gets the batches in order.
   */
  const logBatches: LogBatch[] = [];
  let logSeq = 0;
  let pumping = false;

  const queueLogs = (logs: readonly RpcLog[]): void => {
    if (logSubs.size === 0 || logs.length === 0) return;
    logBatches.push({ seq: ++logSeq, logs, bodies: new Array(logs.length) });
    if (!pumping) void pump();
  };

  /** Writes `sub` every batch after its cursor up to `target`, in one write. */
  const writeLogs = (sub: Sub, target: number): void => {
    const from = sub.sent;
    const socket = sub.socket;
    if (slow.has(socket) || socket.readyState !== socket.OPEN || dropIfSlow(socket)) {
      sub.sent = target;
      return;
    }
    const raw = (socket as unknown as { _socket?: { write(data: Buffer): boolean } })._socket;
    const prefix = logPrefix(sub);
    const parts: Buffer[] = [];
    let count = 0;
    for (const batch of logBatches) {
      if (batch.seq <= from || batch.seq > target) continue;
      for (let i = 0; i < batch.logs.length; i++) {
        if (sub.filter && !matchesFilter(batch.logs[i]!, sub.filter)) continue;
        const body = (batch.bodies[i] ??= Buffer.from(`${JSON.stringify(batch.logs[i])}}}`));
        parts.push(textFrameHeader(prefix.length + body.length), prefix, body);
        count++;
      }
    }
    sub.sent = target;
    if (count === 0) return;
    if (raw) raw.write(Buffer.concat(parts));
    else for (let i = 0; i < parts.length; i += 3) socket.send(Buffer.concat([parts[i + 1]!, parts[i + 2]!]).toString('utf8'));
    notifications.inc({ kind: sub.kind }, count);
  };

  async function pump(): Promise<void> {
    pumping = true;
    try {
      let restarts = 0;
      for (;;) {
        const target = logSeq;
        let written = 0;
        let complete = true;
        for (const sub of [...logSubs]) {
          if (sub.sent >= target || !logSubs.has(sub)) continue;
          try {
            writeLogs(sub, target);
          } catch (error) {
            // one subscriber's failure (a socket error) skips it, never the others
            sub.sent = target;
            logger.warn({ err: errorMessage(error), subscription: sub.id }, 'pendingLogs notification failed');
          }
          if (++written % FAN_OUT_SLICE !== 0) continue;
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (logSeq !== target && restarts < MAX_RESTARTS) {
            restarts++;
            complete = false;
            break;
          }
        }
        if (!complete) continue;
        restarts = 0;
        // every subscriber has every batch up to target
        while (logBatches.length > 0 && logBatches[0]!.seq <= target) logBatches.shift();
        if (logSeq === target) return;
      }
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'pendingLogs notification failed');
    } finally {
      pumping = false;
    }
  }
  const prefixes = new WeakMap<Sub, Buffer>();
  const logPrefix = (sub: Sub): Buffer => {
    let prefix = prefixes.get(sub);
    if (!prefix)
      prefixes.set(
        sub,
        (prefix = Buffer.from(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${sub.id}","result":`)),
      );
    return prefix;
  };

  /** A full transaction as Base's node sends it: the transaction, its receipt's outcome, all its logs. */
  const fullTransaction = async (block: PendingBlock, position: number, logs: readonly RpcLog[]): Promise<Record<string, unknown>> => {
    const receipt = block.receipts[position];
    const outcome = receipt
      ? {
          gasUsed: receipt.gasUsed,
          status: receipt.status,
          cumulativeGasUsed: receipt.cumulativeGasUsed,
          contractAddress: receipt.contractAddress,
          logsBloom: receipt.logsBloom,
        }
      : {};
    return { ...(await formatter.transaction(block, position)), ...outcome, logs };
  };

  const notifyFlashblock = async (block: PendingBlock, firstNew: number, newLogs: readonly RpcLog[]): Promise<void> => {
    // Logs first: they are small and what latency-sensitive readers (indexers) wait for; whole
    // blocks to many subscribers take longer to write out.
    queueLogs(newLogs);
    if (standardFromView && kinds.newHeads.size > 0 && firstNew === 0) {
      // A new 200 ms block: its header.
      const { transactions: _transactions, uncles: _uncles, ...header } = await formatPendingBlock(block, false, formatter);
      const json = JSON.stringify(header);
      for (const sub of kinds.newHeads) send(sub, json);
    }
    if (kinds.newFlashblocks.size > 0) {
      const json = JSON.stringify(await formatPendingBlock(block, true, formatter));
      for (const sub of kinds.newFlashblocks) send(sub, json);
    }
    if (kinds.newFlashblockTransactions.size > 0) {
      const anyFull = [...kinds.newFlashblockTransactions].some((sub) => sub.full);
      for (let position = firstNew; position < block.transactions.length; position++) {
        const tx = block.transactions[position]!;
        const hashJson = JSON.stringify(tx.hash);
        const logs = newLogs.filter((log) => log.transactionHash.toLowerCase() === tx.hash.toLowerCase());
        let fullJson: string | undefined;
        if (anyFull) fullJson = JSON.stringify(await fullTransaction(block, position, logs));
        for (const sub of kinds.newFlashblockTransactions) {
          if (!sub.full) send(sub, hashJson);
          else if (!sub.txFilter || logs.some((log) => matchesFilter(log, sub.txFilter!))) send(sub, fullJson!);
        }
      }
    }
  };

  let lastSeq: number | undefined;
  /**
   * The state replayed to the hub as it subscribes (the view so far) is not news; anything after
   * it is, including the very first state when the log was empty at start.
   */
  let subscribing = true;
  const subscription: Subscription = options.states$
    .pipe(
      concatMap(async (state) => {
        if (subscribing || (lastSeq !== undefined && state.seq <= lastSeq)) {
          lastSeq = Math.max(lastSeq ?? 0, state.seq);
          return;
        }
        lastSeq = state.seq;
        const change = state.change;
        if (byId.size === 0) return;
        try {
          if (change.type === 'flashblock') {
            if (change.removedLogs) queueLogs(change.removedLogs);
            await notifyFlashblock(change.block, change.firstNew, change.newLogs);
          } else if (change.type === 'removed') queueLogs(change.logs);
        } catch (error) {
          logger.warn({ err: errorMessage(error) }, 'notification failed');
        } finally {
          uncorkAll();
        }
      }),
    )
    .subscribe({ error: (error: unknown) => logger.error({ err: errorMessage(error) }, 'view stream failed; subscriptions stop') });
  subscribing = false;

  // newHeads and logs on a flashblocks chain: canonical blocks, read upstream as the view's head passes them.
  const canonical =
    !standardFromView && options.upstream
      ? canonicalBlocks$({
          states$: options.states$,
          upstream: options.upstream,
          logger,
          wanted: () => ({ heads: kinds.newHeads.size > 0, logs: kinds.logs.size > 0 }),
        }).subscribe(({ header, logs }) => {
          try {
            const headerJson = JSON.stringify(header);
            for (const sub of kinds.newHeads) send(sub, headerJson);
            for (const log of logs) {
              let json: string | undefined;
              for (const sub of kinds.logs) {
                if (sub.filter && !matchesFilter(log, sub.filter)) continue;
                send(sub, (json ??= JSON.stringify(log)));
              }
            }
          } finally {
            uncorkAll();
          }
        })
      : undefined;

  const remove = (sub: Sub): void => {
    byId.delete(sub.id);
    bySocket.get(sub.socket)?.delete(sub.id);
    kinds[sub.kind].delete(sub);
    logSubs.delete(sub);
    subscribers.set({ kind: sub.kind }, kinds[sub.kind].size);
  };

  return {
    call(socket, method, rawParams) {
      const params = paramsArray(rawParams, method);
      if (method === 'eth_unsubscribe') {
        const id = params[0];
        if (typeof id !== 'string')
          throw new InvalidParamsError(`params[0]: expected a subscription id, got ${JSON.stringify(id) ?? 'nothing'}`);
        const sub = byId.get(id);
        if (!sub || sub.socket !== socket) return false;
        // what the gateway had for it before the unsubscribe still goes out
        catchUp(sub);
        remove(sub);
        return true;
      }
      const kind = params[0];
      const offered = kindNames.filter((name) => standardFromView || options.upstream || (name !== 'newHeads' && name !== 'logs'));
      if (typeof kind !== 'string' || !offered.includes(kind as Kind)) {
        throw new InvalidParamsError(`params[0]: expected one of ${offered.join(', ')}, got ${JSON.stringify(kind) ?? 'nothing'}`);
      }
      const mine = bySocket.get(socket) ?? new Map<string, Sub>();
      if (mine.size >= limits.maxSubscriptions) {
        throw new LimitExceededError(`subscription limit reached: at most ${limits.maxSubscriptions} per connection`);
      }
      const filter =
        isLogKind(kind as Kind) && params[1] !== undefined && params[1] !== null
          ? logFilterParam(objectParam(params[1], 'params[1]', 'a filter object {address, topics}'), 'params[1]')
          : null;
      if (
        kind === 'newFlashblockTransactions' &&
        !(
          params[1] === undefined ||
          params[1] === null ||
          typeof params[1] === 'boolean' ||
          (typeof params[1] === 'object' && !Array.isArray(params[1]))
        )
      ) {
        throw new InvalidParamsError(
          `params[1]: expected false, true or a filter {address, topics}, got ${JSON.stringify(params[1])?.slice(0, 80)}`,
        );
      }
      const txFilter =
        kind === 'newFlashblockTransactions' && typeof params[1] === 'object' && params[1] !== null && !Array.isArray(params[1])
          ? logFilterParam(params[1] as Record<string, unknown>, 'params[1]')
          : null;
      const full = kind === 'newFlashblockTransactions' ? txFilter !== null || boolParam(params[1], 'params[1]', false) : false;
      const sub: Sub = { id: `0x${randomBytes(16).toString('hex')}`, kind: kind as Kind, filter, full, txFilter, socket, sent: logSeq };
      byId.set(sub.id, sub);
      mine.set(sub.id, sub);
      bySocket.set(socket, mine);
      kinds[sub.kind].add(sub);
      if (kind === 'pendingLogs' || (kind === 'logs' && standardFromView)) logSubs.add(sub);
      subscribers.set({ kind: sub.kind }, kinds[sub.kind].size);
      return sub.id;
    },
    detach(socket) {
      for (const sub of bySocket.get(socket)?.values() ?? []) remove(sub);
      bySocket.delete(socket);
    },
    subscriberCount: () => byId.size,
    close() {
      subscription.unsubscribe();
      canonical?.unsubscribe();
    },
  };
}
