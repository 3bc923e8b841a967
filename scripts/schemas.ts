import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { schemaFileOf, topicJsonSchema } from '../src/records/catalogue.ts';
import { allTopics, type TopicName } from '../src/records/topics.ts';

/** `npm run schemas`: writes schemas/TOPIC.schema.json for every topic from the zod schemas. */
const root = fileURLToPath(new URL('../', import.meta.url));
mkdirSync(`${root}schemas`, { recursive: true });
for (const topic of allTopics as TopicName[]) {
  writeFileSync(`${root}${schemaFileOf(topic)}`, topicJsonSchema(topic));
  process.stdout.write(`${schemaFileOf(topic)}\n`);
}
