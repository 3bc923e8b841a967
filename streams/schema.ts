import { ConfigError } from '../src/errors.ts';
import { schemaFileOf, topicJsonSchema, topicSchemas } from '../src/records/catalogue.ts';
import { allTopics, type TopicName } from '../src/records/topics.ts';
import type { Command } from './command.ts';

/**
 * `flashlog schema TOPIC`: prints a topic's value schema as JSON Schema (the text of
 * `schemas/TOPIC.schema.json`), for consumers outside JavaScript. `--list` prints the topics.
 */
export const schemaCommand: Command = {
  name: 'schema',
  summary: "print a topic's record schema as JSON Schema (--list: the topics, their keys and files)",
  usage: `flashlog schema TOPIC | flashlog schema --list   (topics: ${allTopics.join(', ')})`,
  settings: ['list'],
  longRunning: false,
  async run(ctx, positionals) {
    if (ctx.config.list) {
      if (positionals.length) throw new ConfigError(`--list takes no TOPIC, got ${JSON.stringify(positionals)}`);
      for (const topic of allTopics as TopicName[]) {
        process.stdout.write(`${topic}\tkey: ${topicSchemas[topic].key}\t${schemaFileOf(topic)}\n`);
      }
      return 0;
    }
    const topic = positionals[0];
    if (!topic || positionals.length > 1)
      throw new ConfigError(`TOPIC: expected exactly one topic name (or --list), got ${JSON.stringify(positionals)}`);
    if (!allTopics.includes(topic)) throw new ConfigError(`TOPIC: got "${topic}", expected one of ${allTopics.join(', ')}`);
    process.stdout.write(topicJsonSchema(topic as TopicName));
    return 0;
  },
};
