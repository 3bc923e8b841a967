import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { baseTimeDeposit } from '../../src/op/basetime.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { parseBlockFixture, type BlockFixture } from '../../src/prover/host/fixture.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';

/**
 * The Denim chain flashlog's engine built (test/fixtures/denim-chain, SOURCE.md there): every block,
 * the Denim activation block among them, re-executed by `flashlog execute-block` from its fixture
 * (a witness of only the nodes the block touches) to its hash; and the Denim rules refusing altered
 * blocks of that chain, each naming the block and the reason.
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dir = fileURLToPath(new URL('../fixtures/denim-chain/', import.meta.url));
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort((a, b) => Number(a.match(/(\d+)\.json$/)![1]) - Number(b.match(/(\d+)\.json$/)![1]));
const raw = (n: number) => JSON.parse(readFileSync(join(dir, `denim-chain-${n}.json`), 'utf8')) as Record<string, any>;
const fixture = (n: number): BlockFixture => parseBlockFixture(raw(n), `denim-chain-${n}.json`);

/** Block `n` of the chain with its transactions replaced (on the same parent state and witness). */
async function executeAltered(n: number, alter: (transactions: Hex[]) => Hex[]) {
  const { block } = fixture(n);
  return executeBlock({ ...block, attributes: { ...block.attributes, transactions: alter([...block.attributes.transactions]) } });
}
const refused = (where: string, reason: string) =>
  expect.objectContaining({ code: 'BLOCK_INVALID', message: expect.stringMatching(new RegExp(`^${where}: .*${reason}`)) });

describe('the engine-built Denim chain, re-executed', () => {
  it('has ten blocks: three Cobalt blocks, the Denim activation block (4) and six more Denim blocks', () => {
    expect(files).toEqual(Array.from({ length: 10 }, (_, i) => `denim-chain-${i + 1}.json`));
    const config = parseRollupConfig(raw(4).rollupConfig);
    expect(BigInt(raw(3).payload.timestamp)).toBeLessThan(BigInt(config.denim_time!));
    expect(BigInt(raw(4).payload.timestamp)).toBe(BigInt(config.denim_time!));
  });

  it.each(files)(
    'flashlog execute-block %s reproduces the block hash',
    (name) => {
      const out = spawnSync(process.execPath, [bin, 'execute-block', join(dir, name), '--json'], { encoding: 'utf8' });
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      const n = Number(name.match(/(\d+)\.json$/)![1]);
      expect(JSON.parse(out.stdout)).toMatchObject({
        matches: true,
        differing: [],
        hash: raw(n).expected.blockHash,
        expectedHash: raw(n).expected.blockHash,
        fork: n < 4 ? 'cobalt' : 'denim',
      });
    },
    30_000,
  );
});

describe('Denim refusals on that chain', () => {
  it('tx[1] missing: a Denim block with only the L1-info deposit, or without its BaseTime deposit', async () => {
    await expect(executeAltered(5, (txs) => txs.slice(0, 1))).rejects.toThrow(refused('Denim block 5', 'tx\\[1\\] is missing'));
    await expect(executeAltered(5, (txs) => [txs[0]!, ...txs.slice(2)])).rejects.toThrow(
      refused('Denim block 5', 'tx\\[1\\] is not a deposit \\(type 0x7e\\)'),
    );
  });

  it('a wrong millisecond part: off the 200 ms grid, and not 0 on the activation block', async () => {
    await expect(
      executeAltered(5, (txs) => [txs[0]!, baseTimeDeposit({ blockNumber: 5n, millisPart: 300 }), ...txs.slice(2)]),
    ).rejects.toThrow(refused('Denim block 5', 'sets the millisecond part 300, expected one of 0, 200, 400, 600, 800'));
    await expect(
      executeAltered(4, (txs) => [txs[0]!, baseTimeDeposit({ blockNumber: 4n, millisPart: 200 }), ...txs.slice(2)]),
    ).rejects.toThrow(refused('Denim block 4', "the first Denim block's millisecond part is 200, expected 0"));
  });

  it('a block 400 ms after its parent, within a second and across one', async () => {
    await expect(
      executeAltered(5, (txs) => [txs[0]!, baseTimeDeposit({ blockNumber: 5n, millisPart: 400 }), ...txs.slice(2)]),
    ).rejects.toThrow(refused('Denim block 5', "its time 1800000008400 ms .* is not its parent's 1800000008000 ms \\+ 200"));
    // Across a second: block 9 (header second …9) on block 8 (…8 s + 800 ms) sets 0; with 200 it is 400 ms later.
    await expect(
      executeAltered(9, (txs) => [txs[0]!, baseTimeDeposit({ blockNumber: 9n, millisPart: 200 }), ...txs.slice(2)]),
    ).rejects.toThrow(refused('Denim block 9', "its time 1800000009200 ms .* is not its parent's 1800000008800 ms \\+ 200"));
  });

  it('a second setTimestampMillisPart call by the depositor, in a Denim block and before Denim', async () => {
    await expect(executeAltered(5, (txs) => [...txs, baseTimeDeposit({ blockNumber: 5n, millisPart: 200 })])).rejects.toThrow(
      refused('Denim block 5', 'tx\\[3\\] is a depositor call of setTimestampMillisPart besides tx\\[1\\]'),
    );
    await expect(
      executeAltered(3, (txs) => [txs[0]!, baseTimeDeposit({ blockNumber: 3n, millisPart: 0 }), ...txs.slice(1)]),
    ).rejects.toThrow(refused('block 3', 'tx\\[1\\] is a depositor call of setTimestampMillisPart before Denim'));
  });

  it('the activation block without the BaseTime implementation code in the config: refused, naming the field', async () => {
    const { block } = fixture(4);
    await expect(executeBlock({ ...block, config: { ...block.config, base_time_implementation_code: null } })).rejects.toThrow(
      expect.objectContaining({ code: 'FORK_UNSUPPORTED', message: expect.stringContaining('Denim block 4 (activation)') }),
    );
  });
});
