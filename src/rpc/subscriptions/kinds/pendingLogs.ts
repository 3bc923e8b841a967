import { defineKind } from '../kind.ts';
import { withLogFilter } from '../kind-params.ts';

/**
 * `pendingLogs` [filter {address, topics}] (Base's kind): one notification per log of the latest
 * flashblock (or 200 ms block); on a reorg, the withdrawn logs with `removed: true`. Every feed has it.
 */
export const pendingLogs = defineKind({
  name: 'pendingLogs',
  params: withLogFilter('pendingLogs'),
  reads: () => 'logs',
  logFilter: (options) => options.filter,
});
