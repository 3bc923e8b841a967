import type { Observable } from 'rxjs';

/**
 * The log port: what flashlog needs from a replayable, partitioned, append-only log. Two adapters
 * implement it, `embedded` (node:sqlite) and `kafka` (kafkajs), and one contract test suite
 * (`contract.test.ts`) holds both to the same behaviour.
 *
 * Offsets are bigint. A committed offset is the *next* offset to read, as in Kafka.
 */
export interface LogRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly key: string | null;
  /** UTF-8 text; flashlog's own values are versioned JSON. */
  readonly value: string;
  /** Milliseconds since the epoch when the record was appended. */
  readonly timestamp: number;
}

export interface ProduceRecord {
  readonly topic: string;
  readonly key: string | null;
  readonly value: string;
}

export interface RecordPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
}

export interface TopicSpec {
  readonly name: string;
  readonly partitions?: number;
  /** -1 keeps records forever. */
  readonly retentionMs?: number;
  readonly replication?: number;
}

export interface ConsumeOptions {
  readonly topics: readonly string[];
  /** Consumer group. Without one the reader is ephemeral: nothing it commits is kept. */
  readonly group?: string;
  /** Where to start on a partition that has no committed offset in the group. Default earliest. */
  readonly from?: 'earliest' | 'latest';
  /** Start at these offsets regardless of what the group committed. */
  readonly seek?: readonly RecordPosition[];
  /**
   * Read the records already on the log off the main thread (a worker thread), then follow live in
   * this one: for a long replay on a machine with a core to spare. Only for an ephemeral reader (no
   * group) from the earliest offsets or `seek`; otherwise ignored. Kafka only: the embedded log
   * ignores it (measured no better there, see embedded/embedded.ts).
   */
  readonly replayInWorker?: boolean;
}

export interface LogConsumer {
  /**
   * The records, in offset order per partition. Subscribe once; it completes when the consumer
   * closes and errors when the log fails for good.
   */
  readonly records$: Observable<LogRecord>;
  /** Commits, for each position, the next offset the group should read. */
  commit(positions: readonly RecordPosition[]): Promise<void>;
  /**
   * Backpressure: stop delivering records until `resume()` (a subscriber whose output is full,
   * `flashlog tail` into a slow pipe). It is an invariant that no record reaches the subscriber while
   * paused: the embedded log stops at the next record, Kafka stops fetching (kafkajs
   * `consumer.pause`) and holds what it has already fetched, so what a paused consumer holds is
   * bounded by one fetch. Pausing twice, or resuming an unpaused consumer, does nothing.
   */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export interface Log {
  readonly kind: 'embedded' | 'kafka';
  /** Creates the topics that do not exist yet (idempotent). */
  ensureTopics(topics: readonly TopicSpec[]): Promise<void>;
  /** Appends records; resolves with their positions once durable. Order is kept per topic+key. */
  produce(records: readonly ProduceRecord[]): Promise<RecordPosition[]>;
  consumer(options: ConsumeOptions): LogConsumer;
  listTopics(): Promise<string[]>;
  /**
   * Names this log instance (the embedded file's id, the Kafka cluster id), so state derived from
   * one log (the view's snapshot) is never taken for another's.
   */
  identity?(): Promise<string>;
  /** The next offset to be written, per partition: a reader at these offsets has seen everything. */
  endOffsets(topic: string): Promise<RecordPosition[]>;
  close(): Promise<void>;
}
