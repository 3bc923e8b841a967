import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { startBlocksGateway, type BlocksGateway } from '../helpers/blocks-gateway.ts';
import { eventually } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * `flashlog check-gateway` pointed at the gateway of one Denim devnet and the node of another:
 * the same chain id (1337), another genesis. The checker compares the chains before any answer:
 * a bounded check exits 2 within seconds with one line naming both chains; a canary (no
 * --minutes) keeps running with `flashlog_checker_chain_mismatch` 1 until it is stopped.
 */
let net: BlocksGateway;
let other: Devnet;
const children: FlashlogProcess[] = [];
let gatewayGenesis: string;
let nodeGenesis: string;

const genesisOf = async (url: string): Promise<string> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x0', false] }),
  });
  return ((await response.json()) as { result: { hash: string } }).result.hash;
};

beforeAll(async () => {
  net = await startBlocksGateway({});
  // A devnet's genesis is stamped with the second it starts: the second devnet starts in another one.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  other = await createDevnet({ denim: true });
  gatewayGenesis = await genesisOf(net.serve.gateway.url);
  nodeGenesis = await genesisOf(other.rpcUrl);
}, 60_000);

afterAll(async () => {
  for (const child of children) if (child.child.exitCode === null) await child.stop('SIGKILL').catch(() => undefined);
  await other?.close();
  await net?.close();
});

describe('check-gateway against a node of another chain', () => {
  it('exits 2 before comparing anything, naming both chains (asked for 5 minutes, given 60 s)', async () => {
    // Precondition: the two devnets are two chains with one chain id.
    expect(gatewayGenesis).not.toBe(nodeGenesis);
    const checker = spawnFlashlog([
      'check-gateway',
      '--gateway',
      net.serve.gateway.url,
      '--node',
      other.rpcUrl,
      '--minutes',
      '1',
      '--no-metrics',
    ]);
    children.push(checker);
    expect(await checker.exited).toBe(2);
    const lines = checker.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`the gateway ${net.serve.gateway.url} serves chain id 1337, genesis ${gatewayGenesis.toLowerCase()}`);
    expect(lines[0]).toContain(`the node ${other.rpcUrl} is chain id 1337, genesis ${nodeGenesis.toLowerCase()}`);
    // Nothing was judged against the wrong node.
    expect(checker.lines.some((line) => 'mismatchesByField' in line || String(line.text ?? '').startsWith('blocks compared'))).toBe(false);
  }, 60_000);

  it('as a canary keeps running and exports the mismatch', async () => {
    const checker = spawnFlashlog(['check-gateway', '--gateway', net.serve.gateway.url, '--node', other.rpcUrl, '--metrics-port', '0']);
    children.push(checker);
    const metricsUrl = (await checker.waitFor((line) => line.msg === 'metrics listening', 30_000)).url as string;
    await eventually(
      async () => (/^flashlog_checker_chain_mismatch 1$/m.test(await (await fetch(metricsUrl)).text()) ? true : undefined),
      30_000,
      'flashlog_checker_chain_mismatch 1',
    );
    const logged = await checker.waitFor((line) => line.level === 50 && String(line.msg).includes(nodeGenesis.toLowerCase()));
    expect(String(logged.msg)).toContain(gatewayGenesis.toLowerCase());
    expect(checker.child.exitCode).toBeNull();
    expect(/^flashlog_checker_fields_compared_total 0$/m.test(await (await fetch(metricsUrl)).text())).toBe(true);
    // Stopped, it compared nothing: no pass.
    expect(await checker.stop('SIGTERM')).toBe(1);
  }, 60_000);
});
