import { z } from 'zod';
import { blockRecordSchema } from './blocks.ts';
import { chainRecordSchema } from './chain.ts';
import { flashblockRecordSchema } from './flashblocks.ts';
import { logRecordSchema } from './logs.ts';
import { chainStampRecordSchema } from './meta.ts';
import { proofReplyRecordSchema, proofRequestRecordSchema } from './proofs.ts';
import { topics, type TopicName } from './topics.ts';

/**
 * Each topic's value schema, for consumers in any language: the zod schemas the product validates
 * with, turned into JSON Schema (draft 2020-12) by zod itself. The checked-in copies under
 * `schemas/` are written by `npm run schemas` and kept in sync by `catalogue.test.ts`;
 * `flashlog schema TOPIC` prints the same text.
 *
 * The JSON Schemas describe a record as written (zod's input side: a field with a default may be
 * absent). Refinements across fields (a proof reply holds exactly one of `result` and `error`)
 * have no JSON Schema form and are stated in the description instead.
 */
export const topicSchemas: Readonly<Record<TopicName, { readonly schema: z.ZodType; readonly key: string; readonly description: string }>> =
  {
    [topics.flashblocks]: {
      schema: flashblockRecordSchema,
      key: 'block number (decimal)',
      description: 'every accepted flashblock, as received',
    },
    [topics.blocks]: {
      schema: blockRecordSchema,
      key: 'block number (decimal)',
      description: 'the pre-confirmed block after each flashblock: header, every transaction so far, receipts of the new ones, state diff',
    },
    [topics.logs]: {
      schema: logRecordSchema,
      key: 'emitting address',
      description: 'one log as eth_getLogs returns it, with blockTimestamp, removed and the flashblock index',
    },
    [topics.chain]: {
      schema: chainRecordSchema,
      key: 'block number (decimal)',
      description: 'what became of a pre-confirmed block once canonical',
    },
    [topics.proofRequests]: { schema: proofRequestRecordSchema, key: 'request id', description: 'a proof request with its reply topic' },
    [topics.proofReplies]: {
      schema: proofReplyRecordSchema,
      key: 'request id',
      description: 'the proof or the error of a request; exactly one of result and error',
    },
    [topics.meta]: {
      schema: chainStampRecordSchema,
      key: '"chain"',
      description: "the log's own metadata: its first record stamps the log with its chain (id and genesis hash), for good",
    },
  };

/** The checked-in file of a topic's schema, relative to the repository root. */
export const schemaFileOf = (topic: TopicName): string => `schemas/${topic}.schema.json`;

/**
 * A topic's value schema as JSON Schema text (2-space indented, newline-terminated).
 *
 * @example topicJsonSchema('flashlog.logs') // '{\n  "$schema": "https://json-schema.org/draft/2020-12/schema",\n  "title": …'
 */
export function topicJsonSchema(topic: TopicName): string {
  const entry = topicSchemas[topic];
  const generated = z.toJSONSchema(entry.schema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  const document = {
    $schema,
    title: `${topic} record value`,
    description: `${entry.description}. Key: ${entry.key}. JSON, "v": 1; quantities are 0x-hex as in JSON-RPC.`,
    ...rest,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
