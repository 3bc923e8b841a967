import { z } from 'zod';
import { logFilterObject, toLogFilter } from '../params.ts';

/**
 * The zod pieces of the kinds' params: a kind's schema parses the whole params array (`[name, ...]`),
 * so an issue is named from `params` (`params[1].address: expected ..., got "0x12"`). The log
 * filter is eth_getLogs's ({address, topics}, Base's node's limits, params.ts), parsed to the
 * `LogFilter` that `matchesFilter` checks.
 */
export const logFilterSchema = logFilterObject('a filter object {address, topics}').transform(toLogFilter);

/** `[name]`: a kind that takes no options (anything after the name is ignored, as before). */
export const kindOnly = (name: string) =>
  z
    .tuple([z.literal(name)])
    .rest(z.unknown())
    .transform(() => ({}));

/** `[name, filter?]`: a log kind; no filter (or null) means every log. */
export const withLogFilter = (name: string) =>
  z
    .tuple([z.literal(name), logFilterSchema.nullish()])
    .rest(z.unknown())
    .transform(([, filter]) => ({ filter: filter ?? null }));
