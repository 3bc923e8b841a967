/**
 * Fast yeses for records the schemas of src/records/ accept, for the view's replay.
 *
 * Why this is hand-written: zod builds an issue list and an output copy of every object it checks,
 * which cost more than reading and parsing a record together (a full replay validated every one of
 * its million records that way). These checks test the same fields with the same patterns
 * (`hexPatterns`) in plain loops. They are only ever allowed to say less than the schemas: `true`
 * means the schema accepts the value unchanged; `false` means "ask the schema", which then either
 * accepts the value after all or names the field it rejects (fast-check.test.ts holds the two
 * together on valid records and on one broken field at a time). The view keeps the value itself, so
 * a yes also needs each object's keys in the order the schema would output them (its own fields in
 * its order, then unknown ones): subscribers and RPC answers serialize these objects as they are.
 */
export type Value = Record<string, unknown>;

export const isObject = (value: unknown): value is Value => typeof value === 'object' && value !== null && !Array.isArray(value);
export const matches = (pattern: RegExp, value: unknown): boolean => typeof value === 'string' && pattern.test(value);
/** A key that zod's `.optional().nullable()` accepts: absent, null or matching. */
export const optionalNullable = (pattern: RegExp, value: unknown): boolean =>
  value === undefined || value === null || matches(pattern, value);
export const optional = (pattern: RegExp, value: unknown): boolean => value === undefined || matches(pattern, value);
export const count = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Position of each field in a schema, in the schema's order. */
export const order = (schema: { shape: Record<string, unknown> }): ReadonlyMap<string, number> =>
  new Map(Object.keys(schema.shape).map((key, i) => [key, i]));
/** Whether the schema's output would list the keys as `value` does: known ones in its order, then unknown ones. */
export function keysInOrder(value: Value, positions: ReadonlyMap<string, number>): boolean {
  let last = -1;
  let unknownSeen = false;
  for (const key in value) {
    const position = positions.get(key);
    if (position === undefined) {
      unknownSeen = true;
    } else {
      if (unknownSeen || position < last) return false;
      last = position;
    }
  }
  return true;
}

export function everyMatches(pattern: RegExp, value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (!matches(pattern, item)) return false;
  return true;
}
