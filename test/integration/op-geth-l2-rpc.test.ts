import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCallRpc } from '../../src/jsonrpc/upstream.ts';
import { collectBlockWitness } from '../../src/prover/host/witness-rpc.ts';
import { tempDir } from '../helpers/context.ts';
import { replayOracleChain, startOpGeth, type OpGethNode, type OracleFixture } from '../helpers/op-geth.ts';
import { goPrograms } from '../helpers/strict-clients.ts';

/**
 * `flashlog execute-block --l2-rpc` against a real OP node: op-geth holds the oracle chain
 * (test/fixtures/op-geth, Isthmus then Jovian), and every block is re-executed from what op-geth
 * serves (`debug_executionWitness`, its headers as JSON objects, plus the message passer's account
 * proof op-geth leaves out) to op-geth's hash.
 */
const fixtureDir = fileURLToPath(new URL('../fixtures/op-geth/', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const fixtures = readdirSync(fixtureDir)
  .filter((name) => /^op-geth-\d+\.json$/.test(name))
  .map((name) => JSON.parse(readFileSync(`${fixtureDir}${name}`, 'utf8')) as OracleFixture & { rollupConfig: unknown })
  .sort((a, b) => a.blockNumber - b.blockNumber);
let node: OpGethNode;
const dir = tempDir('flashlog-op-geth-l2-rpc-');
const rollupConfig = `${dir.path}/rollup.json`;

beforeAll(async () => {
  node = await startOpGeth(goPrograms().opGeth, JSON.parse(readFileSync(`${fixtureDir}genesis.json`, 'utf8')));
  await replayOracleChain(node, fixtures);
  writeFileSync(rollupConfig, JSON.stringify(fixtures[0]!.rollupConfig));
}, 20 * 60_000);
afterAll(async () => {
  await node?.close();
  dir.remove();
});

describe('execute-block --l2-rpc against op-geth', () => {
  it('gathers the witness from debug_executionWitness (not the eth_getProof fallback)', async () => {
    const witness = await collectBlockWitness(httpCallRpc(node.url, 30_000), 7n);
    expect(witness.source).toBe('debug_executionWitness');
    expect(witness.blockHash).toBe(fixtures[6]!.expected.blockHash);
  });

  it.each(fixtures.map((fixture) => fixture.blockNumber))('block %i re-executes to op-geth’s hash', (number) => {
    const run = spawnSync(
      process.execPath,
      [bin, 'execute-block', '--l2-rpc', node.url, '--block-number', String(number), '--rollup-config', rollupConfig, '--json'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { hash: string; matches: boolean; differing: string[] };
    expect(out).toMatchObject({ matches: true, differing: [], hash: fixtures[number - 1]!.expected.blockHash });
  });
});
