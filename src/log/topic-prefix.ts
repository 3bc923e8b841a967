import { map } from 'rxjs';
import type { Log } from './port.ts';

/**
 * The log under a topic prefix (`--topic-prefix`): every topic name and consumer group gets the
 * prefix on its way to the log, and loses it on the way back, so flashlog's code keeps the standard
 * names (flashlog.blocks, ...). Several deployments share one Kafka cluster this way, one chain
 * each (`--topic-prefix unichain.` reads and writes unichain.flashlog.blocks), and tests on a shared
 * broker keep to their own topics.
 */
export function withTopicPrefix(log: Log, prefix: string): Log {
  if (prefix === '') return log;
  // A name that already carries the prefix (a proof request's replyTopic, written by a client
  // that knows the topic by its full name) is not prefixed twice.
  const to = (name: string) => (name.startsWith(`${prefix}flashlog.`) ? name : `${prefix}${name}`);
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
        ...(options.group ? { group: `${prefix}${options.group}` } : {}),
        ...(options.seek ? { seek: options.seek.map((position) => ({ ...position, topic: to(position.topic) })) } : {}),
      });
      return {
        records$: consumer.records$.pipe(map((record) => ({ ...record, topic: back(record.topic) }))),
        commit: (positions) => consumer.commit(positions.map((position) => ({ ...position, topic: to(position.topic) }))),
        pause: () => consumer.pause(),
        resume: () => consumer.resume(),
        close: () => consumer.close(),
      };
    },
    listTopics: async () => (await log.listTopics()).filter((topic) => topic.startsWith(prefix)).map(back),
    ...(log.identity ? { identity: async () => `${await log.identity!()}/${prefix}` } : {}),
    endOffsets: async (topic) => (await log.endOffsets(to(topic))).map((position) => ({ ...position, topic })),
    close: () => log.close(),
  };
}
