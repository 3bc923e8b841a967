import type { z } from 'zod';
import { InvalidParamsError } from '../errors.ts';

/**
 * A zod failure as one -32602 message naming the field, STYLE.md's
 * `params[0].fromBlock: expected ..., got "yesterday"`: `where` names the value parsed
 * (`params[0]`), array indices are bracketed, and the first issue is the one reported. Every
 * server of the project (gateway, prover host, devnet) words its zod failures with it.
 */
export function zodIssueMessage(error: z.ZodError, where: string, value: unknown): string {
  const issue = error.issues[0]!;
  const field = issue.path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : `${at}.${String(key)}`), where);
  let got: unknown = value;
  for (const key of issue.path)
    got = got !== null && typeof got === 'object' ? (got as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
  return `${field}: ${issue.message}, got ${shown(got)}`;
}

/** Parses `value` with `schema`, or throws -32602 with `zodIssueMessage`. */
export function parseParam<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidParamsError(zodIssueMessage(parsed.error, where, value));
  return parsed.data;
}

function shown(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  text ??= value === undefined ? 'nothing' : typeof value;
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
