import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { bytesToHex, hexToBytes, parseTransaction } from 'viem';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../test/helpers/shared.ts';
import { decodeBatcherData, type BatcherInputKind } from './batcher-data.ts';
import { derivationRules } from './rules.ts';

/**
 * The operator's decoder never throws for bad input: random bytes, and the OP Mainnet batcher
 * data with bytes flipped, come back as a report whose errors say where.
 */
const rules = derivationRules('jovian');
const chain = { chainId: 10n, l2GenesisTime: 1_686_068_903n, blockTime: 2n };
const calldata = hexToBytes(parseTransaction(bytesToHex(readFileSync(sharedPath('fixtures/derivation/raw_batcher_tx.hex')))).data!);

describe('decodeBatcherData', () => {
  it('reports, never throws, for random bytes of every input kind', async () => {
    const kinds: BatcherInputKind[] = ['transaction', 'calldata', 'blob', 'channel'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...kinds), fc.uint8Array({ maxLength: 400 }), async (kind, bytes) => {
        const report = await decodeBatcherData([{ kind, bytes, label: 'random' }], rules, chain);
        expect(report.inputs).toHaveLength(1);
      }),
      { numRuns: 200 },
    );
  });

  it('reports, never throws, for the OP Mainnet batcher data with bytes flipped', async () => {
    // The frame header and the start of the zlib stream, where a flip changes the structure.
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 120 }), xor: fc.integer({ min: 1, max: 255 }) }), {
          minLength: 1,
          maxLength: 3,
        }),
        async (flips) => {
          const bytes = Uint8Array.from(calldata);
          for (const { at, xor } of flips) bytes[at] = bytes[at]! ^ xor;
          const report = await decodeBatcherData([{ kind: 'calldata', bytes, label: 'flipped' }], rules, chain);
          expect(report.inputs).toHaveLength(1);
        },
      ),
      { numRuns: 40 },
    );
  });
});
