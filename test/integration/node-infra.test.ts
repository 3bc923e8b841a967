import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { composeConfigProgram, readEnvFile, renderCompose, type Rendered } from '../helpers/compose-config.ts';

/**
 * infra/node held against the upstream Base node stack, without Docker: the compose file is
 * rendered by compose-go, the Compose reference implementation (test/go/compose-config: the
 * project's .env, the network env file, Compose's interpolation rules), and every container's
 * environment is checked against
 * infra/node/upstream-variables.json, the one list of what base/base's entrypoints and
 * base-consensus read, each name with the repository, commit and file it was read from.
 */
const dir = fileURLToPath(new URL('../../infra/node/', import.meta.url));
const read = (name: string) => readFileSync(`${dir}${name}`, 'utf8');

const commit = z.string().regex(/^[0-9a-f]{40}$/, 'a 40-hex commit');
const upstreamSchema = z.object({
  sources: z.record(z.string(), z.object({ repo: z.string(), commit, file: z.string() })),
  image: z.object({
    name: z.string(),
    nameSource: z.string(),
    minimumTag: z.string().regex(/^v\d+\.\d+\.\d+$/),
    buildContext: z.string(),
    dockerfile: z.string(),
    buildArgs: z.array(z.string()),
  }),
  release: z.object({
    source: z.string(),
    image: z.string(),
    tags: z.array(z.string()),
    rcTags: z.array(z.string()),
    binaries: z.array(z.string()),
    targets: z.array(z.string()),
    archive: z.string(),
    companions: z.array(z.string()),
  }),
  services: z.record(z.string(), z.object({ command: z.array(z.string()), ports: z.array(z.string()) })),
  variables: z.record(
    z.string(),
    z.object({ service: z.enum(['execution', 'node', 'both']), source: z.string(), required: z.boolean(), why: z.string() }),
  ),
  requiredWhen: z.array(z.object({ if: z.record(z.string(), z.string()), then: z.string(), source: z.string(), why: z.string() })),
  networks: z.record(z.string(), z.object({ source: z.string(), values: z.record(z.string(), z.string()) })),
});
const upstream = upstreamSchema.parse(JSON.parse(read('upstream-variables.json')));
const NETWORK_FILES = Object.keys(upstream.networks);
/** What an operator writes into .env before `docker compose up`. */
const operator = { NODE_L1_ETH_RPC: 'https://l1.example.org', NODE_L1_BEACON: 'https://beacon.example.org' };

const version = (tag: string) => (/^v(\d+)\.(\d+)\.(\d+)/.exec(tag) ?? []).slice(1, 4).map(Number);
const atLeast = (tag: string, minimum: string) => {
  const [a, b] = [version(tag), version(minimum)];
  if (a.length !== 3) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
};
const readsIn = (service: string) =>
  Object.entries(upstream.variables)
    .filter(([, variable]) => variable.service === service || variable.service === 'both')
    .map(([name]) => name);

/** Every way a rendered stack departs from upstream, one line each; empty when it matches. */
function departures(rendered: Rendered, networkFile: string): string[] {
  const found: string[] = [];
  for (const [name, expected] of Object.entries(upstream.services)) {
    const service = rendered.services[name];
    if (!service) {
      found.push(`${name}: no such service`);
      continue;
    }
    const env = service.containerEnv;
    if (JSON.stringify(service.command) !== JSON.stringify(expected.command))
      found.push(`${name}: command ${JSON.stringify(service.command)}, upstream runs ${JSON.stringify(expected.command)}`);
    const [image, tag = ''] = (service.image ?? '').split(':');
    if (image !== upstream.image.name) found.push(`${name}: image ${service.image}, upstream publishes ${upstream.image.name}`);
    if (!atLeast(tag, upstream.image.minimumTag)) found.push(`${name}: tag ${tag} is older than ${upstream.image.minimumTag}`);
    if (service.build?.context !== `${upstream.image.buildContext}#${tag}`)
      found.push(`${name}: builds ${service.build?.context}, expected ${upstream.image.buildContext}#${tag}`);
    if (service.build?.dockerfile !== upstream.image.dockerfile)
      found.push(`${name}: dockerfile ${service.build?.dockerfile}, upstream's is ${upstream.image.dockerfile}`);
    for (const arg of Object.keys(service.build?.args ?? {}))
      if (!upstream.image.buildArgs.includes(arg)) found.push(`${name}: build arg ${arg} is not an ARG of ${upstream.image.dockerfile}`);
    for (const variable of readsIn(name))
      if (upstream.variables[variable]!.required && !env.get(variable))
        found.push(`${name}: ${variable} is required upstream (${upstream.variables[variable]!.why}) and is not set`);
    for (const key of env.keys()) if (!(key in upstream.variables)) found.push(`${name}: sets ${key}, which upstream does not read`);
    for (const rule of upstream.requiredWhen)
      if (Object.entries(rule.if).every(([key, value]) => env.get(key) === value) && !env.get(rule.then))
        found.push(`${name}: ${Object.entries(rule.if).map(([k, v]) => `${k}=${v}`)} without ${rule.then} (${rule.why})`);
    for (const [key, value] of Object.entries(upstream.networks[networkFile]!.values)) {
      const got = env.get(key);
      // A required one that is missing was reported above.
      if (!readsIn(name).includes(key) || got === value || (got === undefined && upstream.variables[key]?.required)) continue;
      found.push(`${name}: ${key}=${got ?? '(unset)'}, upstream's ${networkFile} has ${value}`);
    }
    for (const port of service.ports ?? []) {
      const container = port.split(':').at(-1)!;
      if (!expected.ports.includes(container)) found.push(`${name}: publishes ${container}, which upstream's compose file does not`);
    }
  }
  const secret = rendered.services.node?.containerEnv.get('BASE_NODE_L2_ENGINE_AUTH_RAW') ?? '';
  if (!/^[0-9a-f]{64}$/.test(secret)) found.push('BASE_NODE_L2_ENGINE_AUTH_RAW is not a 64-hex-digit JWT secret');
  return found;
}

const render = (shell: Record<string, string>, files: Record<string, string> = {}) => renderCompose(dir, { ...operator, ...shell }, files);

// compose-go's program (test/go/build.sh): built once, minutes on a cold machine, or found at once.
beforeAll(() => {
  composeConfigProgram();
});

describe('infra/node against upstream (upstream-variables.json)', () => {
  it('names a repository, a commit and a file for every variable, rule and network', () => {
    for (const [name, variable] of Object.entries(upstream.variables))
      expect(upstream.sources[variable.source], `${name}: unknown source ${variable.source}`).toBeDefined();
    for (const item of [...upstream.requiredWhen, ...Object.values(upstream.networks), { source: upstream.image.nameSource }])
      expect(upstream.sources[item.source], `unknown source ${item.source}`).toBeDefined();
    expect(NETWORK_FILES).toEqual(['.env.mainnet', '.env.sepolia']);
  });

  it.each(NETWORK_FILES)('NETWORK_ENV=%s: every required variable is set, every variable set is read upstream', (networkFile) => {
    const rendered = render({ NETWORK_ENV: networkFile });
    expect(rendered.services.execution!.env_file).toEqual([networkFile]);
    expect(departures(rendered, networkFile)).toEqual([]);
  });

  it('catches a required variable removed from a network file, and one upstream does not read', () => {
    const without = read('.env.mainnet').replace(/^RETH_CHAIN=.*$/m, '');
    expect(departures(render({}, { '.env.mainnet': without }), '.env.mainnet')).toEqual([
      "execution: RETH_CHAIN is required upstream (exits 'expected RETH_CHAIN to be set') and is not set",
    ]);
    const stale = `${read('.env.sepolia')}OP_NODE_NETWORK=base-sepolia\n`;
    expect(departures(render({ NETWORK_ENV: '.env.sepolia' }, { '.env.sepolia': stale }), '.env.sepolia')).toEqual([
      'execution: sets OP_NODE_NETWORK, which upstream does not read',
      'node: sets OP_NODE_NETWORK, which upstream does not read',
    ]);
  });

  it('historical proofs start when switched on: the storage path comes with the switch, the window stays the binary default', () => {
    const off = render({}).services.execution!.containerEnv;
    expect(off.get('RETH_HISTORICAL_PROOFS')).toBe('false');
    const on = render({ EXEC_HISTORICAL_PROOFS: 'true' });
    expect(on.services.execution!.containerEnv.get('RETH_HISTORICAL_PROOFS')).toBe('true');
    expect(on.services.execution!.containerEnv.get('RETH_HISTORICAL_PROOFS_STORAGE_PATH')).toMatch(/^\/data\/./);
    expect([...on.services.execution!.containerEnv.keys()].filter((key) => /WINDOW/.test(key))).toEqual([]);
    expect(departures(on, '.env.mainnet')).toEqual([]);
    const noPath = render({ EXEC_HISTORICAL_PROOFS: 'true', EXEC_HISTORICAL_PROOFS_STORAGE_PATH: '' });
    // ${EXEC_HISTORICAL_PROOFS_STORAGE_PATH:-...}: an empty value still gets the default path.
    expect(noPath.services.execution!.containerEnv.get('RETH_HISTORICAL_PROOFS_STORAGE_PATH')).toBe('/data/proofs-history');
  });

  it('follow mode: NODE_SOURCE_L2_RPC and NODE_PROOFS reach base-consensus under its names; proofs without a source is caught', () => {
    const follow = render({ NODE_SOURCE_L2_RPC: 'https://follow.example.org', NODE_PROOFS: 'true' });
    expect(follow.services.node!.containerEnv.get('BASE_NODE_SOURCE_L2_RPC')).toBe('https://follow.example.org');
    expect(follow.services.node!.containerEnv.get('BASE_NODE_PROOFS')).toBe('true');
    expect(departures(follow, '.env.mainnet')).toEqual([]);
    expect(departures(render({ NODE_PROOFS: 'true' }), '.env.mainnet')).toEqual(
      expect.arrayContaining([expect.stringMatching(/^node: BASE_NODE_PROOFS=true without BASE_NODE_SOURCE_L2_RPC/)]),
    );
  });
});

describe("what a base/base release publishes (upstream-variables.json's release, from its release workflow)", () => {
  const docs = readFileSync(fileURLToPath(new URL('../../docs/node.md', import.meta.url)), 'utf8');
  let tag = '';
  let [major, minor] = [0, 0];
  beforeAll(() => {
    tag = readEnvFile(`${dir}.env`).get('NODE_TAG')!;
    [major = 0, minor = 0] = version(tag);
  });
  const fill = (pattern: string, values: Record<string, string>) =>
    pattern.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? `{${key}}`);

  it("the image and its tags at the templates' NODE_TAG, each named in docs/node.md", () => {
    expect(upstream.sources[upstream.release.source]?.file).toBe('.github/workflows/build-release.yml');
    const tags = upstream.release.tags.map((pattern) => fill(pattern, { tag, major: String(major), minor: String(minor) }));
    expect(tags).toEqual([tag, `${major}.${minor}`, `${major}`, 'latest']);
    expect(docs).toContain(`\`${upstream.release.image}\``);
    for (const rendered of tags) expect(docs, `docs/node.md does not name tag ${rendered}`).toContain(`\`${rendered}\``);
  });

  it('the release binaries as the alternative: every binary and target, the archive name, its checksum and signature', () => {
    for (const bin of upstream.release.binaries) expect(docs, `docs/node.md does not name ${bin}`).toContain(`\`${bin}\``);
    for (const target of upstream.release.targets) expect(docs).toContain(`\`${target}\``);
    expect(docs).toContain(`\`${fill(upstream.release.archive, { bin: '<binary>', tag: '<tag>', target: '<target>' })}\``);
    for (const bin of ['base-reth-node', 'base-consensus'])
      expect(docs).toContain(`\`${fill(upstream.release.archive, { bin, tag: '<tag>', target: '<target>' })}\``);
    for (const companion of upstream.release.companions) expect(docs).toContain(companion);
  });
});

describe('infra/node as an operator meets it', () => {
  const compose = read('docker-compose.yml');
  const dotEnvText = read('.env');
  let dotEnv = new Map<string, string>();
  beforeAll(() => {
    dotEnv = readEnvFile(`${dir}.env`);
  });

  it('.env holds every setting, each with a comment above it, each used by the compose file', () => {
    const lines = dotEnvText.split('\n');
    for (const key of dotEnv.keys()) {
      const at = lines.findIndex((line) => line.startsWith(`${key}=`));
      expect(lines[at - 1]!.startsWith('# '), `${key} has no comment above it`).toBe(true);
      expect(compose, `the compose file does not use ${key}`).toContain(`\${${key}`);
    }
    expect(dotEnv.get('NODE_TAG')).toBe(upstream.image.minimumTag);
    expect(dotEnv.get('NETWORK_ENV')).toBe('.env.mainnet');
  });

  it('maps the seed names onto upstream names in one block, used by both services', () => {
    const rendered = render({});
    expect(rendered.services.node!.containerEnv).toEqual(rendered.services.execution!.containerEnv);
    const mapping = Object.fromEntries(
      [...compose.matchAll(/^ {2}([A-Z_0-9]+): \$\{([A-Z_0-9]+)/gm)].map(([, upstreamName, seedName]) => [seedName!, upstreamName!]),
    );
    expect(mapping).toEqual({
      NODE_L1_ETH_RPC: 'BASE_NODE_L1_ETH_RPC',
      NODE_L1_BEACON: 'BASE_NODE_L1_BEACON',
      NODE_SOURCE_L2_RPC: 'BASE_NODE_SOURCE_L2_RPC',
      NODE_PROOFS: 'BASE_NODE_PROOFS',
      EXEC_HISTORICAL_PROOFS: 'RETH_HISTORICAL_PROOFS',
      EXEC_HISTORICAL_PROOFS_STORAGE_PATH: 'RETH_HISTORICAL_PROOFS_STORAGE_PATH',
      EXEC_PRUNING_ARGS: 'RETH_PRUNING_ARGS',
    });
    // Each seed value reaches both containers under its upstream name.
    const probes = Object.fromEntries(Object.keys(mapping).map((seedName) => [seedName, `probe-${seedName}`]));
    const probed = render(probes);
    for (const [seedName, upstreamName] of Object.entries(mapping))
      for (const service of ['execution', 'node'])
        expect(probed.services[service]!.containerEnv.get(upstreamName), `${service}: ${upstreamName}`).toBe(`probe-${seedName}`);
    // Seed names with nothing upstream to map onto stay out (see docs/node.md).
    for (const gone of ['PROFILE', 'EXEC_FB_WEBSOCKET_URL', 'EXEC_PROOFS_HISTORY_WINDOW', 'OP_NODE_']) {
      expect(compose).not.toContain(gone);
      expect(dotEnvText).not.toContain(gone);
    }
  });

  it('plain `docker compose up`: every ${VAR:?} names a variable .env sets; until it is filled in, the stop names it', () => {
    const required = [...compose.matchAll(/\$\{([A-Z_0-9]+):?\?/g)].map(([, name]) => name!);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(dotEnv.has(name), `${name} is required but .env does not set it`).toBe(true);
    expect(() => renderCompose(dir)).toThrow(
      /required variable NODE_L1_ETH_RPC is missing a value: set NODE_L1_ETH_RPC in infra\/node\/.env/,
    );
    const filled = `${dotEnvText}\nNODE_L1_ETH_RPC=https://l1.example.org\nNODE_L1_BEACON=https://beacon.example.org\n`;
    const rendered = renderCompose(dir, {}, { '.env': filled });
    expect(departures(rendered, '.env.mainnet')).toEqual([]);
    expect(rendered.services.execution!.volumes).toEqual(['./reth-data:/data']);
  });

  it('publishes RPC, WebSocket and consensus RPC for flashlog, and the P2P ports peers connect to', () => {
    const { execution, node } = render({}).services;
    expect(execution!.ports).toEqual(['8545:8545', '8546:8546', '30303:30303', '30303:30303/udp']);
    expect(node!.ports).toEqual(['7545:8545', '9222:9222', '9222:9222/udp']);
  });
});
