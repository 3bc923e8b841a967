/** Topic names, the same on every log engine (see ARCHITECTURE.md, "The log"). */
export const topics = {
  flashblocks: 'flashlog.flashblocks',
  blocks: 'flashlog.blocks',
  logs: 'flashlog.logs',
  chain: 'flashlog.chain',
  proofRequests: 'flashlog.proofs.requests',
  proofReplies: 'flashlog.proofs.replies',
  /** The log's own metadata: its first record stamps the log with its chain (chain-stamp.ts). */
  meta: 'flashlog.meta',
} as const;

export type TopicName = (typeof topics)[keyof typeof topics];
export const allTopics: readonly string[] = Object.values(topics);
