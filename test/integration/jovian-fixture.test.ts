import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { concat, numberToHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { fixtureJsonFromRpc, parseBlockFixture } from '../../src/prover/host/fixture.ts';
import { headerToRpc } from '../../src/op/header.ts';
import { config, jovianTime, l1InfoCalldata, l1InfoDeposit, parentHeader, preState, userTx } from '../helpers/synthetic-op-block.ts';

/**
 * The fixture format of later forks (shared/fixtures/op-blocks/SOURCE.md): `payload.minBaseFee` (a hex
 * quantity from Jovian on, null before) and `rollupConfig.jovian_time`, read by the loader and by
 * `flashlog execute-block`. The block is a Jovian block executeBlock built on a chain made from nothing.
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const eip1559Params = concat([numberToHex(250, { size: 4 }), numberToHex(6, { size: 4 })]);

async function jovianFixture() {
  const { stateRoot, preimages, witness } = await preState();
  const parent = parentHeader(stateRoot, { blobGasUsed: 0n, extraData: concat(['0x01', eip1559Params, numberToHex(0, { size: 8 })]) });
  const transactions = [l1InfoDeposit(l1InfoCalldata(400)), await userTx(0, `0x${'77'.repeat(200)}`)];
  const executed = await executeBlock({
    config,
    parent,
    witness,
    attributes: {
      timestamp: BigInt(jovianTime) + 2n,
      prevRandao: numberToHex(7, { size: 32 }),
      feeRecipient: '0x4200000000000000000000000000000000000011',
      gasLimit: 30_000_000n,
      parentBeaconBlockRoot: numberToHex(9, { size: 32 }),
      eip1559Params,
      minBaseFee: 1_234n,
      transactions,
    },
  });
  // As `execute-block --l2-rpc` writes a fixture from a node's block: the attributes from the block's own header.
  return fixtureJsonFromRpc(
    {
      parentHeader: headerToRpc(parent),
      header: headerToRpc(executed.header),
      blockHash: executed.hash,
      transactions,
      preimages,
      source: 'debug_executionWitness',
    },
    config,
  );
}

describe('Jovian fixtures: payload.minBaseFee and rollupConfig.jovian_time', () => {
  it('a fixture written from a Jovian header carries minBaseFee as a hex quantity, and re-executes to its hash', async () => {
    const json = await jovianFixture();
    expect(json.payload.minBaseFee).toBe(numberToHex(1_234n));
    expect((json.rollupConfig as { jovian_time: number }).jovian_time).toBe(jovianTime);
    const fixture = parseBlockFixture(JSON.parse(JSON.stringify(json)), 'jovian.json');
    expect(fixture.block.attributes.minBaseFee).toBe(1_234n);
    expect((await executeBlock(fixture.block)).hash).toBe(fixture.expectedHash);
    // op-geth's Engine API writes minBaseFee as a JSON number: the loader takes that too.
    expect(parseBlockFixture({ ...json, payload: { ...json.payload, minBaseFee: 1_234 } }).block.attributes.minBaseFee).toBe(1_234n);
    expect(() => parseBlockFixture({ ...json, payload: { ...json.payload, minBaseFee: '1234' } }, 'f')).toThrow('f.payload.minBaseFee');
    expect(() => parseBlockFixture({ ...json, payload: { ...json.payload, minBaseFee: `0x1${'0'.repeat(16)}` } }, 'f')).toThrow(
      'f.payload.minBaseFee',
    );
  });

  it('flashlog execute-block reproduces a Jovian fixture, and refuses one without minBaseFee naming the field', async () => {
    const json = await jovianFixture();
    const dir = mkdtempSync(join(tmpdir(), 'jovian-fixture-'));
    const file = join(dir, 'jovian.json');
    writeFileSync(file, JSON.stringify(json));
    const ok = spawnSync(process.execPath, [bin, 'execute-block', file, '--json'], { encoding: 'utf8' });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ fork: 'jovian', matches: true, differing: [], transactions: 2 });

    const without = join(dir, 'without.json');
    writeFileSync(without, JSON.stringify({ ...json, payload: { ...json.payload, minBaseFee: null } }));
    const bad = spawnSync(process.execPath, [bin, 'execute-block', without, '--json'], { encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain('payload.minBaseFee: a Jovian block needs the minimum base fee');
  });
});
