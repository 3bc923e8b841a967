import { describe, expect, it } from 'vitest';
import { ConfigError, InvalidParamsError, ServerError } from '../errors.ts';
import type { ChainIdentity } from '../records/meta.ts';
import { askChainAgain, chainCheckLine, chainRetryMs, freshKafkaLogRefusal, freshLogFiles, logPlace } from './chain-log.ts';

/** The rules of opening a log held against a node's chain, without a log or a node. */
const chainA: ChainIdentity = { chainId: 1337n, genesisHash: `0x${'a1'.repeat(32)}` };
const named = `chain id 1337, genesis 0x${'a1'.repeat(32)}`;

describe('where a log is, for messages', () => {
  it('names the data directory, with the topic prefix when there is one', () => {
    const embedded = { log: 'embedded', dataDir: './data', topicPrefix: '', kafkaBrokers: undefined } as const;
    expect(logPlace(embedded)).toEqual({
      description: 'in ./data',
      remedy: 'give each chain a data directory of its own (--data-dir, FLASHLOG_DATA_DIR), or move ./data away',
    });
    expect(logPlace({ ...embedded, topicPrefix: 'base.' }).description).toBe('in ./data under topic prefix "base."');
  });

  it('names the prefix and the brokers on Kafka, and the setting to change', () => {
    const kafka = { log: 'kafka' as const, dataDir: './data', topicPrefix: 'base.', kafkaBrokers: ['127.0.0.1:9092', '127.0.0.1:9093'] };
    expect(logPlace(kafka)).toEqual({
      description: 'under topic prefix "base." on Kafka 127.0.0.1:9092,127.0.0.1:9093',
      remedy: 'give each chain a topic prefix of its own (--topic-prefix, FLASHLOG_TOPIC_PREFIX)',
    });
    expect(logPlace({ ...kafka, topicPrefix: '' }).description).toBe('under no topic prefix on Kafka 127.0.0.1:9092,127.0.0.1:9093');
  });
});

describe('the line a chain check writes', () => {
  const where = 'in ./data';
  it('confirms the same chain at info for a writer and at debug for a reader', () => {
    const check = { kind: 'same', chain: chainA } as const;
    expect(chainCheckLine(check, { where, writer: true, nodeGiven: true })).toEqual({
      level: 'info',
      chain: named,
      message: "the log in ./data holds the node's chain",
    });
    expect(chainCheckLine(check, { where, writer: false, nodeGiven: true }).level).toBe('debug');
    expect(chainCheckLine({ kind: 'unchecked', stamp: chainA }, { where, writer: false, nodeGiven: false })).toEqual({
      level: 'debug',
      chain: named,
      message: 'the log in ./data holds this chain (not checked: no --rpc to compare with)',
    });
  });

  it('warns when a writer stamped or a reader met a log made by an older flashlog', () => {
    expect(chainCheckLine({ kind: 'stamped', chain: chainA, hadRecords: true }, { where, writer: true, nodeGiven: true })).toEqual({
      level: 'warn',
      chain: named,
      message: "the log in ./data had no chain stamp (made by an older flashlog): stamped it with the node's chain",
    });
    expect(chainCheckLine({ kind: 'stamped', chain: chainA, hadRecords: false }, { where, writer: true, nodeGiven: true })).toEqual({
      level: 'info',
      chain: named,
      message: "stamped the new log in ./data with the node's chain",
    });
    expect(chainCheckLine({ kind: 'unstamped', hadRecords: true }, { where, writer: false, nodeGiven: true })).toEqual({
      level: 'warn',
      message: 'the log in ./data has no chain stamp (made by an older flashlog): reading it unchecked',
    });
  });

  it('says when no node named the chain, and leaves a new log to its writer quietly', () => {
    expect(chainCheckLine({ kind: 'unstamped', hadRecords: true }, { where, writer: true, nodeGiven: false })).toEqual({
      level: 'info',
      message: 'no node named the chain (--rpc): the log in ./data is neither checked nor stamped',
    });
    expect(chainCheckLine({ kind: 'unstamped', hadRecords: false }, { where, writer: false, nodeGiven: true })).toEqual({
      level: 'debug',
      message: 'the log in ./data is new and not stamped yet (its writer stamps it)',
    });
  });
});

describe('asking a node for its chain again', () => {
  const unreachable = new ServerError('upstream RPC unreachable: connect ECONNREFUSED', { retryable: true });
  it('asks again while the node is out of reach and another question fits before the deadline', () => {
    expect(askChainAgain(unreachable, 1000, 1000 + chainRetryMs + 1)).toBe(true);
    expect(askChainAgain(unreachable, 1000, 1000 + chainRetryMs)).toBe(false);
  });

  it('does not ask a node that answered: it says the same again', () => {
    expect(askChainAgain(new InvalidParamsError('no block 0'), 0, 60_000)).toBe(false);
    expect(askChainAgain(new Error('not JSON-RPC'), 0, 60_000)).toBe(false);
  });
});

describe('a fresh log for a new devnet', () => {
  it('moves the embedded log with its WAL, and the view snapshot only when it sits beside it', () => {
    expect(freshLogFiles('flashlog.db', false)).toEqual(['flashlog.db', 'flashlog.db-wal', 'flashlog.db-shm', 'view.snapshot.json']);
    expect(freshLogFiles('flashlog.db', true)).toEqual(['flashlog.db', 'flashlog.db-wal', 'flashlog.db-shm']);
  });

  it('refuses a Kafka log that holds a stamp or records, naming both chains and the remedy', () => {
    const place = { description: 'under topic prefix "dev." on Kafka 127.0.0.1:9092', remedy: 'give each chain a topic prefix of its own' };
    expect(freshKafkaLogRefusal({ stamp: null, hasRecords: false, chain: chainA, place })).toBeNull();
    const stamped = freshKafkaLogRefusal({ stamp: { ...chainA, chainId: 901n }, hasRecords: false, chain: chainA, place });
    expect(stamped).toBeInstanceOf(ConfigError);
    expect(stamped?.message).toBe(
      `run --devnet starts a new chain (${named}), but the log under topic prefix "dev." on Kafka 127.0.0.1:9092 already holds chain id 901, genesis 0x${'a1'.repeat(32)}; give each chain a topic prefix of its own`,
    );
    expect(freshKafkaLogRefusal({ stamp: null, hasRecords: true, chain: null, place })?.message).toBe(
      'run --devnet starts a new chain, but the log under topic prefix "dev." on Kafka 127.0.0.1:9092 already holds records of a chain it does not name; give each chain a topic prefix of its own',
    );
  });
});
