import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';

/**
 * infra/node cannot be started here (no Docker engine), so its structure is checked: the compose
 * file parses as YAML with the services, images, volumes, env files and ports the README
 * documents; every variable the operator sets is in both env files with a one-line comment above
 * it and the stated default, and is used by the compose file.
 */
const read = (name: string) => readFileSync(new URL(`../../infra/node/${name}`, import.meta.url), 'utf8');
const variables = [
  'NODE_TAG',
  'NETWORK_ENV',
  'HOST_DATA_DIR',
  'PROFILE',
  'NODE_L1_ETH_RPC',
  'NODE_L1_BEACON',
  'EXEC_FB_WEBSOCKET_URL',
  'EXEC_HISTORICAL_PROOFS',
  'EXEC_PROOFS_HISTORY_WINDOW',
  'NODE_SOURCE_L2_RPC',
  'NODE_PROOFS',
] as const;

const serviceSchema = z
  .object({
    image: z.string(),
    command: z.array(z.string()),
    env_file: z.array(z.string()),
    environment: z.record(z.string(), z.string()),
    volumes: z.array(z.string()),
    ports: z.array(z.string()),
    build: z
      .object({ args: z.record(z.string(), z.string()) })
      .loose()
      .optional(),
  })
  .loose();
const composeSchema = z.object({ services: z.object({ execution: serviceSchema, node: serviceSchema }) });

describe('infra/node', () => {
  const text = read('docker-compose.yml');
  const compose = composeSchema.parse(parse(text));
  const { execution, node } = compose.services;

  it.each(['.env.mainnet', '.env.sepolia'])('%s sets every variable, each with a comment and its default', (file) => {
    const lines = read(file).split('\n');
    for (const variable of variables) {
      const at = lines.findIndex((line) => line.startsWith(`${variable}=`));
      expect(at, `${file} lacks ${variable}`).toBeGreaterThan(0);
      expect(lines[at - 1]!.startsWith('# '), `${variable} in ${file} has no comment above it`).toBe(true);
    }
    const values = Object.fromEntries(lines.filter((line) => /^[A-Z_0-9]+=/.test(line)).map((line) => line.split(/=(.*)/s).slice(0, 2)));
    expect(values).toMatchObject({
      NODE_TAG: 'latest',
      HOST_DATA_DIR: './reth-data',
      PROFILE: 'maxperf',
      NETWORK_ENV: file,
      EXEC_HISTORICAL_PROOFS: 'false',
      EXEC_PROOFS_HISTORY_WINDOW: String((28 * 24 * 3600) / 2), // 28 days of 2 s blocks; 2.8 days of Denim's 200 ms blocks
    });
    // Base since Denim: no flashblocks feed to point the node at (the old one is retired), and the comments say so.
    expect(values.EXEC_FB_WEBSOCKET_URL).toBe('');
    const commentAbove = (variable: string) => lines[lines.findIndex((line) => line.startsWith(`${variable}=`)) - 1]!;
    expect(commentAbove('EXEC_FB_WEBSOCKET_URL')).toMatch(/unused on Base since Denim .*retired.*chain that still streams flashblocks/);
    expect(commentAbove('NODE_TAG')).toContain('base/base v1.5.1 or later');
    expect(commentAbove('EXEC_PROOFS_HISTORY_WINDOW')).toContain('2.8 days');
    expect(lines.slice(0, 3).join('\n')).toMatch(/Denim \(2026-(11-05|10-21) 18:00 UTC\).*200 ms.*\n.*timestampMs/);
  });

  it('the compose file parses and both services use the defaults the README states', () => {
    for (const service of [execution, node]) {
      expect(service.image).toBe('ghcr.io/base/node-reth:${NODE_TAG:-latest}');
      expect(service.env_file).toEqual(['${NETWORK_ENV:-.env.mainnet}']);
      expect(service.volumes).toContain('${HOST_DATA_DIR:-./reth-data}:/data');
    }
    expect(execution.build?.args).toEqual({ PROFILE: '${PROFILE:-maxperf}' });
    expect(execution.environment).toMatchObject({
      RETH_FB_WEBSOCKET_URL: expect.stringContaining('${EXEC_FB_WEBSOCKET_URL'),
      RETH_HISTORICAL_PROOFS: expect.stringContaining('${EXEC_HISTORICAL_PROOFS'),
      RETH_PROOFS_HISTORY_WINDOW: '${EXEC_PROOFS_HISTORY_WINDOW:-1209600}',
    });
    for (const variable of ['NODE_L1_ETH_RPC', 'NODE_L1_BEACON', 'NODE_SOURCE_L2_RPC', 'NODE_PROOFS']) {
      expect(
        Object.values(node.environment).some((value) => value.startsWith(`\${${variable}`)),
        `node service does not use ${variable}`,
      ).toBe(true);
    }
    for (const variable of variables) expect(text, `compose does not use ${variable}`).toContain(`\${${variable}`);
  });

  it('publishes RPC 8545, consensus RPC 7545 and the P2P ports', () => {
    expect(execution.ports).toEqual(expect.arrayContaining(['8545:8545', '30303:30303', '30303:30303/udp']));
    expect(node.ports).toEqual(expect.arrayContaining(['7545:8545', '9222:9222', '9222:9222/udp']));
  });
});
