import { map } from 'rxjs';
import type { Log } from '../../src/log/port.ts';

/**
 * A view of a shared log (the test Kafka broker) where every topic name gets a prefix, so a test
 * run has its own flashlog.* topics while the code under test uses the standard names.
 */
export function prefixedLog(log: Log, prefix: string): Log {
  const to = (topic: string) => `${prefix}${topic}`;
  const back = (topic: string) => (topic.startsWith(prefix) ? topic.slice(prefix.length) : topic);
  return {
    kind: log.kind,
    ensureTopics: (specs) => log.ensureTopics(specs.map((spec) => ({ ...spec, name: to(spec.name) }))),
    produce: async (records) =>
      (await log.produce(records.map((record) => ({ ...record, topic: to(record.topic) })))).map((position) => ({
        ...position,
        topic: back(position.topic),
      })),
    consumer(options) {
      const consumer = log.consumer({
        ...options,
        topics: options.topics.map(to),
        ...(options.seek ? { seek: options.seek.map((position) => ({ ...position, topic: to(position.topic) })) } : {}),
      });
      return {
        records$: consumer.records$.pipe(map((record) => ({ ...record, topic: back(record.topic) }))),
        commit: (positions) => consumer.commit(positions.map((position) => ({ ...position, topic: to(position.topic) }))),
        close: () => consumer.close(),
      };
    },
    listTopics: async () => (await log.listTopics()).filter((topic) => topic.startsWith(prefix)).map(back),
    ...(log.identity ? { identity: async () => `${await log.identity!()}/${prefix}` } : {}),
    endOffsets: async (topic) => (await log.endOffsets(to(topic))).map((position) => ({ ...position, topic })),
    close: () => log.close(),
  };
}
