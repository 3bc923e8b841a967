import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goPrograms } from './strict-clients.ts';

/**
 * A compose project rendered by compose-go, the Compose reference implementation that
 * `docker compose` loads files with (test/go/compose-config, built by test/go/build.sh), without
 * a Docker engine: the project's `.env` under the given shell variables, Compose's interpolation
 * (`${VAR:-default}`, `${VAR:?error}`, ...), YAML anchors and merge keys, and every service's
 * env files folded into its environment.
 */
export interface RenderedService {
  readonly image?: string;
  readonly build?: { context?: string; dockerfile?: string; args?: Record<string, string> };
  readonly command?: string[];
  /** The env files named, as written. */
  readonly env_file: string[];
  /** Ports in Compose's short form: `published:target`, with `/udp` for UDP. */
  readonly ports: string[];
  /** Volumes in Compose's short form: `source:target`. */
  readonly volumes: string[];
  /** What the container starts with: its env files, then `environment` over them. */
  readonly containerEnv: Map<string, string>;
}

export interface Rendered {
  /** The variables interpolation saw: the project's `.env` under the shell's. */
  readonly project: Map<string, string>;
  readonly services: Record<string, RenderedService>;
}

/** compose-config refused the project (a required variable unset, a malformed file): Compose's own message. */
export class ComposeError extends Error {}

interface ComposeGoService {
  image?: string;
  build?: RenderedService['build'];
  command?: string[] | null;
  env_file?: { path: string }[];
  environment?: Record<string, string | null>;
  ports?: { target: number; published?: string; protocol?: string }[];
  volumes?: { source?: string; target: string }[];
}

let binary: string | undefined;

/** The path of test/go/compose-config, built by test/go/build.sh on first use (minutes cold, a second warm). */
export function composeConfigProgram(): string {
  binary ??= goPrograms().composeConfig;
  return binary;
}

function compose(args: string[]): string {
  try {
    return execFileSync(composeConfigProgram(), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    if (stderr) throw new ComposeError(stderr);
    throw error;
  }
}

/**
 * Renders `dir/docker-compose.yml` as `docker compose config` run in `dir` would. `shell` stands
 * in for the shell's variables (nothing is taken from this process's environment); `files`
 * replaces files of `dir` by name (the project is copied to a temporary directory first).
 * @example renderCompose('infra/node', { NODE_L1_ETH_RPC: 'https://l1.example.org' }).services.node!.containerEnv
 */
export function renderCompose(dir: string, shell: Record<string, string> = {}, files: Record<string, string> = {}): Rendered {
  const copy = mkdtempSync(join(tmpdir(), 'compose-config-'));
  const project = join(copy, 'project');
  try {
    cpSync(dir, project, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text);
    const out = JSON.parse(compose(['project', project, ...Object.entries(shell).map(([key, value]) => `${key}=${value}`)])) as {
      project: { services: Record<string, ComposeGoService> };
      environment: Record<string, string>;
    };
    const services: Record<string, RenderedService> = {};
    for (const [name, service] of Object.entries(out.project.services))
      services[name] = {
        ...(service.image === undefined ? {} : { image: service.image }),
        ...(service.build === undefined ? {} : { build: service.build }),
        ...(service.command ? { command: service.command } : {}),
        env_file: (service.env_file ?? []).map((file) => file.path),
        ports: (service.ports ?? []).map(
          (port) => `${port.published ? `${port.published}:` : ''}${port.target}${port.protocol === 'udp' ? '/udp' : ''}`,
        ),
        volumes: (service.volumes ?? []).map((volume) => (volume.source ? `${volume.source}:${volume.target}` : volume.target)),
        containerEnv: new Map(Object.entries(service.environment ?? {}).map(([key, value]) => [key, value ?? ''])),
      };
    return { project: new Map(Object.entries(out.environment)), services };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** An env file's variables as Compose reads it. */
export function readEnvFile(path: string): Map<string, string> {
  return new Map(Object.entries(JSON.parse(compose(['dotenv', path])) as Record<string, string>));
}
