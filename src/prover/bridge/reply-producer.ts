import { errorMessage } from '../../errors.ts';
import type { Log } from '../../log/port.ts';
import type { Logger } from '../../obs/logger.ts';
import { abortableSleep } from './slots.ts';

/**
 * Puts proof replies on the log: retried with backoff (`retryMs` doubling to 5 s) until the log
 * takes them or the bridge stops; and which reply topics exist, since a reply to a topic that does
 * not exist would be retried forever.
 */
export interface ReplyProducer {
  /** Produces until the log takes it; false if the bridge stopped first. */
  produce(topic: string, requestId: string, value: string): Promise<boolean>;
  topicExists(topic: string): Promise<boolean>;
}

export function createReplyProducer(options: {
  readonly log: Log;
  /** Known to exist from the start. */
  readonly replyTopic: string;
  readonly retryMs: number;
  readonly signal: AbortSignal;
  readonly logger?: Logger | undefined;
}): ReplyProducer {
  const { log, logger, signal } = options;
  const knownTopics = new Set<string>([options.replyTopic]);
  return {
    async produce(topic, requestId, value) {
      let delay = options.retryMs;
      while (!signal.aborted) {
        try {
          await log.produce([{ topic, key: requestId, value }]);
          return true;
        } catch (error) {
          logger?.warn({ err: errorMessage(error), requestId, topic }, 'reply not produced; retrying');
          await abortableSleep(delay, signal);
          delay = Math.min(delay * 2, 5000);
        }
      }
      return false;
    },
    async topicExists(topic) {
      if (knownTopics.has(topic)) return true;
      for (const name of await log.listTopics()) knownTopics.add(name);
      return knownTopics.has(topic);
    },
  };
}
