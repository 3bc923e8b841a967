import type { Log } from '../../src/log/port.ts';
import { withTopicPrefix } from '../../src/log/topic-prefix.ts';

/** A test's own topics on the shared test broker: the product's `--topic-prefix` (src/log/topic-prefix.ts). */
export function prefixedLog(log: Log, prefix: string): Log {
  return withTopicPrefix(log, prefix);
}
