import { z } from 'zod';

/**
 * What a setting is (a flag and a `FLASHLOG_*` variable, validated by zod) and the schemas the
 * tables in this folder build their settings from.
 */
export interface SettingSpec<T extends z.ZodType = z.ZodType> {
  /** The schema that parses the raw string (or string[] when repeatable) into the value. */
  readonly schema: T;
  /** What a valid value looks like, for error messages and --help. */
  readonly expects: string;
  readonly describe: string;
  /** The default, as a user would write it (shown in --help). */
  readonly default?: string | undefined;
  /** The flag may be given many times; the variable is comma-separated. */
  readonly repeatable?: boolean;
  /** A flag without a value (`--plain`); the variable takes true/false/1/0. */
  readonly boolean?: boolean;
  /** One-letter alias. */
  readonly short?: string;
}

export const url = (protocols: readonly string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  });
export const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
export const decimal = (min: number) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number)
    .pipe(z.number().min(min));
export const port = integer(0, 65535);
export const bool = z
  .union([z.literal('true'), z.literal('false'), z.literal('1'), z.literal('0'), z.literal('')])
  .transform((value) => value === 'true' || value === '1' || value === '');
export const bytes = z
  .string()
  .regex(/^\d+(k|m|g|kib|mib|gib)?$/i)
  .transform((value) => {
    const match = /^(\d+)([a-z]*)$/i.exec(value)!;
    const unit = (match[2] ?? '').toLowerCase()[0];
    const scale = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
    return Number(match[1]) * scale;
  });
export const hostPortList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/)).min(1));
export { address } from '../../schemas/hex.ts';
export const enumOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values);

export function setting<T extends z.ZodType>(spec: SettingSpec<T>): SettingSpec<T> {
  return spec;
}

/** An optional http(s) URL: an upstream's JSON-RPC or API. */
export const httpUrlSetting = (describe: string) =>
  setting({ schema: url(['http:', 'https:']).optional(), expects: 'http:// or https:// URL', describe });
