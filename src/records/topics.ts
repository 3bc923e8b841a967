/**
 * The values flashlog writes to its topics: versioned JSON (`"v": 1`). Quantities stay 0x-hex as
 * in JSON-RPC. Each topic's file here holds its schema, its value type, its fast check and its encoder; the
 * catalogue (catalogue.ts) turns the schemas into JSON Schema. Consumers validate with these schemas; unknown fields are kept so that a newer
 * minor addition does not break an older reader. Every record names (blockNumber, index) so a
 * consumer can de-duplicate.
 */

/** Topic names, the same on every log engine (see ARCHITECTURE.md, "The log"). */
export const topics = {
  flashblocks: 'flashlog.flashblocks',
  blocks: 'flashlog.blocks',
  logs: 'flashlog.logs',
  chain: 'flashlog.chain',
  proofRequests: 'flashlog.proofs.requests',
  proofReplies: 'flashlog.proofs.replies',
  /** The log's own metadata: its first record stamps the log with its chain (meta.ts). */
  meta: 'flashlog.meta',
} as const;

export type TopicName = (typeof topics)[keyof typeof topics];
export const allTopics: readonly string[] = Object.values(topics);

/** A record as a topic's encoder writes it: what the log's port (src/log/port.ts) produces. */
export interface TopicRecord {
  readonly topic: TopicName;
  readonly key: string;
  readonly value: string;
}
