import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { schemaFileOf, topicJsonSchema } from './catalogue.ts';
import { allTopics, type TopicName } from './topics.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('schemas/*.schema.json', () => {
  it.each(allTopics as TopicName[])('%s is in sync with the zod schema (npm run schemas rewrites it)', (topic) => {
    let checkedIn: string;
    try {
      checkedIn = readFileSync(`${root}${schemaFileOf(topic)}`, 'utf8');
    } catch {
      throw new Error(`${schemaFileOf(topic)} is missing: run npm run schemas and commit it`);
    }
    expect(checkedIn, `${schemaFileOf(topic)} differs from the zod schema: run npm run schemas and commit it`).toBe(topicJsonSchema(topic));
  });
});
