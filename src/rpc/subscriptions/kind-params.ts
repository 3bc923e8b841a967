import { z } from 'zod';
import { address, hash32 } from '../../schemas/hex.ts';
import { maxFilterAddresses, maxFilterTopicsPerPosition, type LogFilter } from '../params.ts';

/**
 * The zod pieces of the kinds' params: a kind's schema parses the whole params array (`[name, ...]`),
 * so an issue is named from `params` (`params[1].address: expected ..., got "0x12"`). The log
 * filter takes what eth_getLogs takes ({address, topics}, Base's node's limits) and becomes the
 * `LogFilter` that `matchesFilter` checks (lower-case sets; an empty topic list means any).
 */
const addresses = z.union([address, z.array(address).max(maxFilterAddresses)], {
  error: `expected a 20-byte 0x-hex address or a list of at most ${maxFilterAddresses}`,
});
const topicPosition = z.union([z.null(), hash32, z.array(hash32).max(maxFilterTopicsPerPosition)], {
  error: `expected null, a 32-byte 0x-hex topic or a list of at most ${maxFilterTopicsPerPosition}`,
});

/** A log filter's shape, {address, topics} (kept apart from `toLogFilter` so it can sit in a union). */
export const logFilterObject = z.looseObject(
  {
    address: addresses.nullish(),
    topics: z.array(topicPosition).max(4, 'expected at most 4 positions').nullish(),
  },
  { error: 'expected a filter object {address, topics}' },
);

export function toLogFilter(filter: z.output<typeof logFilterObject>): LogFilter {
  const set = (one: string | readonly string[]) => new Set((typeof one === 'string' ? [one] : one).map((item) => item.toLowerCase()));
  return {
    addresses: filter.address === undefined || filter.address === null ? null : set(filter.address),
    topics: (filter.topics ?? []).map((position) => (position === null || position.length === 0 ? null : set(position))),
  };
}

export const logFilterSchema = logFilterObject.transform(toLogFilter);

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
