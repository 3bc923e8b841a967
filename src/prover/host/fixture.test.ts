import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBlockFixture } from './fixture.ts';
import { devnetRollupConfig } from '../../op/chains.ts';

/** The fixture loader names the field that does not fit and what it held, and takes a known chain's built-in config. */
const example = JSON.parse(readFileSync(new URL('../../../examples/devnet-block.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
> & { payload: Record<string, unknown> & { transactions: string[] } };

describe('parseBlockFixture', () => {
  it('takes the built-in config of a known chainId when rollupConfig is missing', () => {
    const { rollupConfig: _dropped, ...rest } = example;
    const fixture = parseBlockFixture({ ...rest, chainId: 1337 }, 'f.json');
    expect(fixture.block.config).toEqual(devnetRollupConfig);
  });

  it('refuses a missing rollupConfig of a chain it does not know, naming the chain', () => {
    const { rollupConfig: _dropped, ...rest } = example;
    expect(() => parseBlockFixture({ ...rest, chainId: 4242 }, 'f.json')).toThrow(
      'f.json.rollupConfig: missing, and chain 4242 has no built-in config to take it from',
    );
  });

  it('names an odd-length transaction and a malformed minBaseFee with what they held', () => {
    const [first, ...others] = example.payload.transactions;
    const odd = { ...example, payload: { ...example.payload, transactions: [first!.slice(0, -1), ...others] } };
    expect(() => parseBlockFixture(odd, 'f.json')).toThrow(/f\.json\.payload\.transactions\.0: expected 0x-hex of whole bytes .*\(got "0x/);
    const banana = { ...example, payload: { ...example.payload, minBaseFee: 'banana' } };
    expect(() => parseBlockFixture(banana, 'f.json')).toThrow('f.json.payload.minBaseFee: expected 0x-hex (got "banana")');
  });
});
