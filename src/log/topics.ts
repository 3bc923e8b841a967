/** Topic names, the same on every log engine (see ARCHITECTURE.md, "The log"). */
export const topics = {
  flashblocks: 'flashlog.flashblocks',
  blocks: 'flashlog.blocks',
  logs: 'flashlog.logs',
  chain: 'flashlog.chain',
  proofRequests: 'flashlog.proofs.requests',
  proofReplies: 'flashlog.proofs.replies',
} as const;

export type TopicName = (typeof topics)[keyof typeof topics];
export const allTopics: readonly string[] = Object.values(topics);
