import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * infra/node cannot be started here (no Docker engine), so its structure is checked: every
 * variable the operator sets is in both env files with a one-line comment above it, is used by
 * the compose file, and the ports the README documents are published.
 */
const read = (name: string) => readFileSync(new URL(`../../infra/node/${name}`, import.meta.url), 'utf8');
const variables = [
  'NODE_TAG', 'NETWORK_ENV', 'HOST_DATA_DIR', 'PROFILE', 'NODE_L1_ETH_RPC', 'NODE_L1_BEACON', 'EXEC_FB_WEBSOCKET_URL',
  'EXEC_HISTORICAL_PROOFS', 'EXEC_PROOFS_HISTORY_WINDOW', 'NODE_SOURCE_L2_RPC', 'NODE_PROOFS',
];

describe('infra/node', () => {
  const compose = read('docker-compose.yml');
  it.each(['.env.mainnet', '.env.sepolia'])('%s sets every variable, each with a comment', (file) => {
    const lines = read(file).split('\n');
    for (const variable of variables) {
      const at = lines.findIndex((line) => line.startsWith(`${variable}=`));
      expect(at, `${file} lacks ${variable}`).toBeGreaterThan(0);
      expect(lines[at - 1]!.startsWith('# '), `${variable} in ${file} has no comment above it`).toBe(true);
    }
    const values = Object.fromEntries(lines.filter((line) => /^[A-Z_]+=/.test(line)).map((line) => line.split(/=(.*)/s).slice(0, 2)));
    expect(values).toMatchObject({ NODE_TAG: 'latest', HOST_DATA_DIR: './reth-data', PROFILE: 'maxperf', EXEC_PROOFS_HISTORY_WINDOW: String(28 * 24 * 3600 / 2), NETWORK_ENV: file });
    expect(values.EXEC_FB_WEBSOCKET_URL).toMatch(/^wss:\/\/(mainnet|sepolia)\.flashblocks\.base\.org\/ws$/);
  });
  it('the compose file uses every variable with its default and publishes the documented ports', () => {
    for (const variable of variables.filter((name) => name !== 'NETWORK_ENV' || compose.includes('NETWORK_ENV'))) {
      expect(compose, `compose does not use ${variable}`).toContain(`\${${variable}`);
    }
    expect(compose).toContain('${NODE_TAG:-latest}');
    expect(compose).toContain('${NETWORK_ENV:-.env.mainnet}');
    expect(compose).toContain('${HOST_DATA_DIR:-./reth-data}:/data');
    expect(compose).toContain('${PROFILE:-maxperf}');
    for (const port of ['"8545:8545"', '"7545:8545"', '"9222:9222"', '"9222:9222/udp"', '"30303:30303"', '"30303:30303/udp"']) {
      expect(compose).toContain(port);
    }
  });
});
