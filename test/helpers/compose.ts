import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * Docker Compose's variable interpolation and env files, enough to render infra/node's compose
 * file without a Docker engine. Written here, small, because no maintained npm package implements
 * the compose-spec rules (npm has generic `${VAR}` replacers, without `:?`/`?` errors, the `-`
 * versus `:-` difference or `$$`). The rules, from the compose specification ("Interpolation"):
 *
 *   $$                 a literal $
 *   $VAR, ${VAR}       the value, or "" when unset
 *   ${VAR:-default}    default when VAR is unset or empty      ${VAR-default}  default when unset
 *   ${VAR:?error}      stop with error when unset or empty     ${VAR?error}    stop when unset
 *   ${VAR:+other}      other when set and non-empty, else ""   ${VAR+other}    other when set
 *
 * A default, error or replacement may itself hold interpolations (`${A:-${B}}`). Values are
 * interpolated after the YAML is parsed, so comments never are. Variables come from the shell
 * first, then the project's `.env` (compose's precedence).
 */
export class ComposeError extends Error {}

type Lookup = (name: string) => string | undefined;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The `${...}` body starting at `text[start]` (just after `${`): its text and the index after `}`. */
function braced(text: string, start: number): { body: string; end: number } {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '$' && text[i + 1] === '$') i++;
    else if (text[i] === '$' && text[i + 1] === '{') {
      depth++;
      i++;
    } else if (text[i] === '}' && --depth === 0) return { body: text.slice(start, i), end: i + 1 };
  }
  throw new ComposeError(`invalid interpolation format: unclosed "\${" in ${JSON.stringify(text)}`);
}

function expand(body: string, lookup: Lookup, whole: string): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw new ComposeError(`invalid interpolation format for ${JSON.stringify(whole)}: no variable name in "\${${body}}"`);
  const value = lookup(name);
  const rest = body.slice(name.length);
  if (rest === '') return value ?? '';
  const match = /^(:?)([-?+])([\s\S]*)$/.exec(rest);
  if (!match) throw new ComposeError(`invalid interpolation format for ${JSON.stringify(whole)}: "\${${body}}"`);
  const [, colon, operator, argument] = match as unknown as [string, string, '-' | '?' | '+', string];
  const missing = colon ? value === undefined || value === '' : value === undefined;
  switch (operator) {
    case '-':
      return missing ? interpolate(argument, lookup) : value!;
    case '?':
      if (missing) throw new ComposeError(`required variable ${name} is missing a value: ${interpolate(argument, lookup)}`);
      return value!;
    case '+':
      return missing ? '' : interpolate(argument, lookup);
  }
}

/**
 * Interpolates one string value the way compose does.
 * @example interpolate('${TAG:-latest}', (name) => process.env[name]) // "latest" when TAG is unset or empty
 */
export function interpolate(text: string, lookup: Lookup): string {
  let out = '';
  for (let i = 0; i < text.length;) {
    if (text[i] !== '$') {
      out += text[i++];
      continue;
    }
    const next = text[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '{') {
      const { body, end } = braced(text, i + 2);
      out += expand(body, lookup, text);
      i = end;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (!name)
        throw new ComposeError(`invalid interpolation format for ${JSON.stringify(text)}: a lone "$" (write "$$" for a literal $)`);
      out += lookup(name) ?? '';
      i += 1 + name.length;
    }
  }
  return out;
}

/**
 * An env file as compose reads it: `KEY=VALUE` lines, `#` comment lines, optional quotes. Values
 * here must be literal (compose would expand `${...}` inside unquoted and double-quoted values);
 * a `$` in one is refused rather than guessed at.
 */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const values = new Map<string, string>();
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$/.exec(line);
    if (!match) throw new ComposeError(`${file}:${index + 1}: expected KEY=VALUE, got ${JSON.stringify(raw)}`);
    const [, key, rawValue] = match as unknown as [string, string, string];
    let value = rawValue;
    if (/^'.*'$/.test(value)) value = value.slice(1, -1);
    else {
      if (/^".*"$/.test(value)) value = value.slice(1, -1);
      else value = value.replace(/\s+#.*$/, '');
      if (value.includes('$')) throw new ComposeError(`${file}:${index + 1}: ${key} holds a "$"; keep env files literal`);
    }
    values.set(key, value);
  });
  return values;
}

function interpolateTree(node: unknown, lookup: Lookup): unknown {
  if (typeof node === 'string') return interpolate(node, lookup);
  if (Array.isArray(node)) return node.map((item) => interpolateTree(item, lookup));
  if (node && typeof node === 'object')
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolateTree(value, lookup)]));
  return node;
}

export interface RenderedService {
  readonly image?: string;
  readonly build?: { context?: string; dockerfile?: string; args?: Record<string, string> };
  readonly command?: string[];
  readonly env_file?: string[];
  readonly environment?: Record<string, string>;
  readonly ports?: string[];
  readonly volumes?: string[];
  /** What the container starts with: its env files, then `environment` over them. */
  readonly containerEnv: Map<string, string>;
}

export interface Rendered {
  /** The variables interpolation saw: the project's `.env` under the shell's. */
  readonly project: Map<string, string>;
  readonly services: Record<string, RenderedService>;
}

/**
 * Renders `dir/docker-compose.yml` as `docker compose config` would: `.env` of `dir` under the
 * given shell variables, YAML merge keys, env files read relative to `dir`.
 */
export function renderCompose(dir: string, shell: Record<string, string> = {}, files: Record<string, string> = {}): Rendered {
  const read = (name: string) => files[name] ?? readFileSync(join(dir, name), 'utf8');
  let dotEnv = new Map<string, string>();
  try {
    dotEnv = parseEnvFile(read('.env'), '.env');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const project = new Map([...dotEnv, ...Object.entries(shell)]);
  const tree = interpolateTree(parse(read('docker-compose.yml'), { merge: true }), (name) => project.get(name)) as {
    services: Record<string, Omit<RenderedService, 'containerEnv'>>;
  };
  const services: Record<string, RenderedService> = {};
  for (const [name, service] of Object.entries(tree.services)) {
    const containerEnv = new Map<string, string>();
    for (const file of service.env_file ?? []) for (const [key, value] of parseEnvFile(read(file), file)) containerEnv.set(key, value);
    for (const [key, value] of Object.entries(service.environment ?? {})) containerEnv.set(key, String(value));
    services[name] = { ...service, containerEnv };
  }
  return { project, services };
}
