import { concat, pad, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { configLog, configPayload, ecotoneScalar, systemConfigAddress } from '../../test/helpers/l1-logs.ts';
import { applySystemConfigUpdates, type SystemConfig } from './system-config.ts';

const zero32: Hex = `0x${'00'.repeat(32)}`;
const initial: SystemConfig = {
  batcher: '0x1111111111111111111111111111111111111111',
  overhead: pad('0xbc', { size: 32 }),
  scalar: ecotoneScalar(1368, 810_949),
  gasLimit: 30_000_000n,
  eip1559Params: '0x0000000000000000',
  operatorFeeParams: zero32,
  minBaseFee: 0n,
  daFootprintGasScalar: 0,
};
const rules = { systemConfig: systemConfigAddress, ecotone: true };
const apply = (logs: ReturnType<typeof configLog>[], ecotone = true) =>
  applySystemConfigUpdates(initial, [{ status: 'success', logs }], { ...rules, ecotone });

describe('applySystemConfigUpdates', () => {
  it('applies every update type in log order, ignoring the unsafe block signer', () => {
    const batcher: Hex = '0x3333333333333333333333333333333333333333';
    const { config, skipped } = apply([
      configLog(0, configPayload.batcher(batcher), 0),
      configLog(1, configPayload.feeScalars(pad('0x01', { size: 32 }), ecotoneScalar(7, 8)), 1),
      configLog(2, configPayload.gasLimit(60_000_000n), 2),
      configLog(3, configPayload.unsafeBlockSigner(batcher), 3),
      configLog(4, configPayload.eip1559(250, 6), 4),
      configLog(5, configPayload.operatorFee(9, 10n), 5),
      configLog(6, configPayload.minBaseFee(1_000_000n), 6),
      configLog(7, configPayload.daFootprintGasScalar(500), 7),
      configLog(2, configPayload.gasLimit(45_000_000n), 8),
    ]);
    expect(skipped).toEqual([]);
    expect(config).toEqual({
      batcher,
      overhead: zero32, // Ecotone zeroes the overhead
      scalar: ecotoneScalar(7, 8),
      gasLimit: 45_000_000n,
      eip1559Params: '0x000000fa00000006',
      operatorFeeParams: configPayload.operatorFee(9, 10n),
      minBaseFee: 1_000_000n,
      daFootprintGasScalar: 500,
    });
  });

  it('keeps the overhead and any scalar before Ecotone; after it keeps the old scalar for an unknown form', () => {
    const odd = concat(['0x07', pad('0x01', { size: 31 })]);
    expect(apply([configLog(1, configPayload.feeScalars(pad('0x02', { size: 32 }), odd), 0)], false).config).toMatchObject({
      overhead: pad('0x02', { size: 32 }),
      scalar: odd,
    });
    expect(apply([configLog(1, configPayload.feeScalars(pad('0x02', { size: 32 }), odd), 0)]).config).toEqual(initial);
  });

  it('skips a malformed update with its reason and keeps the config', () => {
    const { config, skipped } = apply([
      configLog(2, configPayload.minBaseFee(2n ** 64n - 1n).replace(/^0x00/, '0x01') as Hex, 0),
      configLog(4, configPayload.eip1559(0, 6), 1),
      configLog(0, concat([configPayload.batcher(initial.batcher), '0x00']), 2),
      configLog(9, configPayload.gasLimit(1n), 3),
      configLog(0, configPayload.batcher(initial.batcher), 4, 1n),
      { ...configLog(2, configPayload.gasLimit(1n), 5), data: '0x' },
    ]);
    expect(config).toEqual(initial);
    expect(skipped).toEqual([
      { logIndex: 0, reason: 'gas limit: padding is not empty' },
      { logIndex: 1, reason: 'EIP-1559 params: denominator 0 and elasticity 6 must both be zero or both non-zero' },
      { logIndex: 2, reason: 'batcher: invalid length field' },
      { logIndex: 3, reason: 'unknown update type 9' },
      { logIndex: 4, reason: 'unknown ConfigUpdate version 1' },
      { logIndex: 5, reason: 'gas limit: invalid pointer field' },
    ]);
  });

  it("reads only successful receipts and the SystemConfig contract's logs, and leaves its input alone", () => {
    const log = configLog(2, configPayload.gasLimit(1n), 0);
    const before = structuredClone(initial);
    const { config } = applySystemConfigUpdates(
      initial,
      [
        { status: 'reverted', logs: [log] },
        { status: 'success', logs: [{ ...log, address: initial.batcher }] },
      ],
      rules,
    );
    expect(config).toEqual(initial);
    expect(applySystemConfigUpdates(initial, [{ status: 'success', logs: [log] }], rules).config.gasLimit).toBe(1n);
    expect(initial).toEqual(before);
  });
});
