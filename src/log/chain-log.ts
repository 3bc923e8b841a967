import type { Config } from '../config/settings.ts';
import { ConfigError, JsonRpcError } from '../errors.ts';
import type { ChainIdentity } from '../records/meta.ts';
import { describeChain, type ChainCheck, type LogPlace } from './chain-stamp.ts';

/**
 * The rules of opening a log held against a node's chain (src/log/chain-stamp.ts), without I/O;
 * src/log/open-chain-log.ts applies them:
 *
 *   node (--rpc): eth_chainId + block 0's hash (asked again while unreachable, for chainWaitMs)
 *     --> checkLogChain(log) --> same | stamped | unstamped | unchecked: one line (chainCheckLine)
 *                            --> mismatch: LogChainMismatchError, exit 2
 *
 * `run --devnet` starts a new chain every time, so it starts a fresh log: the embedded log's files
 * (freshLogFiles) go to <data-dir>/previous/, and a Kafka log under the topic prefix must be empty
 * (freshKafkaLogRefusal).
 */

/** How long a command waits at start for its node to name its chain before going on unchecked. */
export const chainWaitMs = 5000;
/** How long it waits between two questions while the node is out of reach. */
export const chainRetryMs = 500;

/**
 * `in ./data`, `under topic prefix "base." on Kafka 127.0.0.1:9092`, and what to do about a log of
 * another chain there.
 * @example logPlace({ log: 'embedded', dataDir: './data', topicPrefix: '', kafkaBrokers: undefined }).description // 'in ./data'
 */
export function logPlace(config: Pick<Config, 'log' | 'topicPrefix' | 'kafkaBrokers' | 'dataDir'>): LogPlace {
  const prefix = config.topicPrefix;
  if (config.log === 'kafka') {
    return {
      description: `${prefix ? `under topic prefix "${prefix}"` : 'under no topic prefix'} on Kafka ${(config.kafkaBrokers ?? []).join(',')}`,
      remedy: 'give each chain a topic prefix of its own (--topic-prefix, FLASHLOG_TOPIC_PREFIX)',
    };
  }
  return {
    description: `in ${config.dataDir}${prefix ? ` under topic prefix "${prefix}"` : ''}`,
    remedy: `give each chain a data directory of its own (--data-dir, FLASHLOG_DATA_DIR), or move ${config.dataDir} away`,
  };
}

/** One log line: its level, the chain named (a field), and the message. */
export interface ChainCheckLine {
  readonly level: 'info' | 'debug' | 'warn';
  readonly chain?: string;
  readonly message: string;
}

export interface ChainCheckLineOptions {
  /** LogPlace.description. */
  readonly where: string;
  readonly writer: boolean;
  /** Whether a node named the chain to expect. */
  readonly nodeGiven: boolean;
}

/**
 * The one line a process writes on what its chain check found. Confirmations are `info` for
 * writers and `debug` for readers (`tail` prints records on stdout, where the log lines go too);
 * a log made by an older flashlog (records, no stamp) is a warning.
 */
export function chainCheckLine(check: ChainCheck, { where, writer, nodeGiven }: ChainCheckLineOptions): ChainCheckLine {
  const confirm = writer ? 'info' : 'debug';
  switch (check.kind) {
    case 'same':
      return { level: confirm, chain: describeChain(check.chain), message: `the log ${where} holds the node's chain` };
    case 'unchecked':
      return {
        level: confirm,
        chain: describeChain(check.stamp),
        message: `the log ${where} holds this chain (not checked: no --rpc to compare with)`,
      };
    case 'stamped':
      return check.hadRecords
        ? {
            level: 'warn',
            chain: describeChain(check.chain),
            message: `the log ${where} had no chain stamp (made by an older flashlog): stamped it with the node's chain`,
          }
        : { level: 'info', chain: describeChain(check.chain), message: `stamped the new log ${where} with the node's chain` };
    case 'unstamped':
      if (!nodeGiven)
        return { level: confirm, message: `no node named the chain (--rpc): the log ${where} is neither checked nor stamped` };
      if (check.hadRecords)
        return { level: 'warn', message: `the log ${where} has no chain stamp (made by an older flashlog): reading it unchecked` };
      return { level: 'debug', message: `the log ${where} is new and not stamped yet (its writer stamps it)` };
  }
}

/**
 * Whether to ask the node for its chain again after `failure`: only while it is out of reach (a
 * node that answered, with an error or without a block 0, says the same again), and only when
 * another question still fits before `deadlineMs`.
 */
export function askChainAgain(failure: unknown, nowMs: number, deadlineMs: number): boolean {
  const unreachable = failure instanceof JsonRpcError && failure.rpcCode === -32000;
  return unreachable && nowMs + chainRetryMs < deadlineMs;
}

/**
 * The files of the data directory a fresh embedded log moves aside: the log (`logFile`), its WAL
 * and shared memory, and the view's snapshot beside it (one elsewhere, --view-snapshot, names the log it was
 * taken from and is not used with the new one).
 */
export function freshLogFiles(logFile: string, viewSnapshotElsewhere: boolean): string[] {
  const names = [logFile, `${logFile}-wal`, `${logFile}-shm`];
  if (!viewSnapshotElsewhere) names.push('view.snapshot.json');
  return names;
}

export interface FreshKafkaLog {
  /** The stamp the log holds, if any. */
  readonly stamp: ChainIdentity | null;
  /** Whether it holds records besides the stamp. */
  readonly hasRecords: boolean;
  /** The new devnet's chain, when it named one. */
  readonly chain: ChainIdentity | null;
  readonly place: LogPlace;
}

/**
 * `run --devnet` with Kafka: topics cannot be moved aside, so the log under the prefix must hold
 * nothing yet. Null when it holds nothing; else the ConfigError naming what it holds and the remedy.
 */
export function freshKafkaLogRefusal({ stamp, hasRecords, chain, place }: FreshKafkaLog): ConfigError | null {
  if (!stamp && !hasRecords) return null;
  return new ConfigError(
    `run --devnet starts a new chain${chain ? ` (${describeChain(chain)})` : ''}, but the log ${place.description} already holds ${stamp ? describeChain(stamp) : 'records of a chain it does not name'}; ${place.remedy}`,
  );
}
