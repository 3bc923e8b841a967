import type { z } from 'zod';
import { InvalidParamsError } from '../errors.ts';

/**
 * A zod failure as one -32602 message naming the field, STYLE.md's
 * `params[0].fromBlock: expected ..., got "yesterday"`: `where` names the value parsed
 * (`params[0]`), array indices are bracketed, and the first issue is the one reported. Every
 * server of the project (gateway, prover host, devnet) words its zod failures with it.
 *
 * A custom issue may say what came itself with `params: { got }` (`got 1001` for a list too long;
 * `got: null` for no `got` at all, as in `params[1]: give blockHash or blockNumber, not both`), or
 * be the whole message with `params: { whole: true }`.
 */
export function zodIssueMessage(error: z.ZodError, where: string, value: unknown): string {
  const issue = error.issues[0]!;
  const said = issue.code === 'custom' ? (issue.params as IssueParams | undefined) : undefined;
  if (said?.whole) return issue.message;
  const field = issue.path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : `${at}.${String(key)}`), where);
  if (said?.got === null) return `${field}: ${issue.message}`;
  if (typeof said?.got === 'string') return `${field}: ${issue.message}, got ${said.got}`;
  let got: unknown = value;
  for (const key of issue.path)
    got = got !== null && typeof got === 'object' ? (got as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
  return `${field}: ${issue.message}, got ${shown(got)}`;
}

/** What a custom issue may carry for `zodIssueMessage`. */
export interface IssueParams {
  /** What came, as the message shows it; null: the message says nothing of it. */
  readonly got?: string | null;
  /** The message is the whole text (no field, nothing of what came). */
  readonly whole?: boolean;
}

/** Parses `value` with `schema`, or throws -32602 with `zodIssueMessage`. */
export function parseParam<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string): z.output<Schema> {
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
