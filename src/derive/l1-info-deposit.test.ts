import { decodeFunctionData, pad, parseAbi, size, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { parseL1Info } from '../op/l1-info.ts';
import { parseRollupConfig, rulesAt } from '../op/rollup-config.ts';
import { encodeDeposit, sourceDomain, sourceHash } from '../op/deposit-tx.ts';
import { l1BlockInfoOf, l1InfoCalldataOf, l1InfoDeposit, l1InfoFormAt, type L1BlockInfo } from './l1-info-deposit.ts';
import type { SystemConfig } from './system-config.ts';

const parseDeposit = (tx: Hex) => parseTransaction(tx) as ReturnType<typeof parseTransaction> & { isSystemTx?: boolean };

const info: L1BlockInfo = {
  number: 19_000_000n,
  timestamp: 1_700_000_000n,
  baseFee: 7_000_000_000n,
  blobBaseFee: 3n,
  hash: `0x${'cd'.repeat(32)}`,
  sequenceNumber: 4n,
  batcherHash: pad('0x6887246668a3b87f54deb3b94ba47a6f63f32985', { size: 32 }),
  l1FeeOverhead: pad('0xbc', { size: 32 }),
  l1FeeScalar: pad('0x0a6fe0', { size: 32 }),
  baseFeeScalar: 5227,
  blobBaseFeeScalar: 1_014_213,
  operatorFeeScalar: 11,
  operatorFeeConstant: 12n,
  daFootprintGasScalar: 13,
};
const rollup = parseRollupConfig({
  l2_chain_id: 10,
  block_time: 2,
  regolith_time: 10,
  ecotone_time: 100,
  isthmus_time: 200,
  jovian_time: 300,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});

describe('the L1-info deposit', () => {
  it("writes the packed forms flashlog's L1-info parser reads back, at their lengths", () => {
    for (const [form, length] of [
      ['ecotone', 164],
      ['isthmus', 176],
      ['jovian', 178],
    ] as const) {
      const data = l1InfoCalldataOf(info, form);
      expect(size(data), form).toBe(length);
      expect(parseL1Info(data), form).toEqual({
        form,
        baseFeeScalar: info.baseFeeScalar,
        blobBaseFeeScalar: info.blobBaseFeeScalar,
        sequenceNumber: info.sequenceNumber,
        l1BlockNumber: info.number,
        l1Timestamp: info.timestamp,
        l1BlockHash: info.hash,
        batcherHash: info.batcherHash,
        l1BaseFee: info.baseFee,
        blobBaseFee: info.blobBaseFee,
        ...(form === 'ecotone' ? {} : { operatorFeeScalar: 11, operatorFeeConstant: 12n }),
        ...(form === 'jovian' ? { daFootprintGasScalar: 13 } : {}),
      });
    }
  });

  it("writes Bedrock's setL1BlockValues as the ABI call viem decodes", () => {
    const abi = parseAbi(['function setL1BlockValues(uint64,uint64,uint256,bytes32,uint64,bytes32,uint256,uint256)']);
    expect(decodeFunctionData({ abi, data: l1InfoCalldataOf(info, 'bedrock') }).args).toEqual([
      info.number,
      info.timestamp,
      info.baseFee,
      info.hash,
      info.sequenceNumber,
      info.batcherHash,
      BigInt(info.l1FeeOverhead),
      BigInt(info.l1FeeScalar),
    ]);
  });

  it("takes the previous fork's form in a fork's first block", () => {
    const formAt = (timestamp: bigint) => l1InfoFormAt(rulesAt(rollup, timestamp));
    expect([0n, 100n, 102n, 200n, 202n, 300n, 302n].map(formAt)).toEqual([
      'bedrock',
      'bedrock',
      'ecotone',
      'ecotone',
      'isthmus',
      'isthmus',
      'jovian',
    ]);
  });

  it('is a 1M-gas call from the depositor to L1Block since Regolith, a 150M-gas system call before', () => {
    const regolith = parseDeposit(encodeDeposit(l1InfoDeposit(info, rulesAt(rollup, 302n))));
    expect(regolith).toMatchObject({
      sourceHash: sourceHash(sourceDomain.l1Info, info.hash, info.sequenceNumber),
      from: '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001',
      to: '0x4200000000000000000000000000000000000015',
      gas: 1_000_000n,
      data: l1InfoCalldataOf(info, 'jovian'),
    });
    expect(regolith.isSystemTx).toBeFalsy();
    const bedrock = parseDeposit(encodeDeposit(l1InfoDeposit(info, rulesAt(rollup, 0n))));
    expect(bedrock).toMatchObject({ gas: 150_000_000n, isSystemTx: true });
  });

  it("reads the SystemConfig: scalars by version, the operator fee, Jovian's DA scalar default", () => {
    const config: SystemConfig = {
      batcher: '0x6887246668a3b87f54deb3b94ba47a6f63f32985',
      overhead: pad('0x01', { size: 32 }),
      scalar: `0x01${'00'.repeat(23)}000f79c50000146b` as Hex,
      gasLimit: 0n,
      eip1559Params: '0x0000000000000000',
      operatorFeeParams: `0x${'00'.repeat(20)}0000000b000000000000000c`,
      minBaseFee: 0n,
      daFootprintGasScalar: 0,
    };
    const origin = { hash: info.hash, number: 1n, timestamp: 2n, baseFeePerGas: 3n, blobBaseFee: null };
    expect(l1BlockInfoOf(origin, 0n, config, 'jovian')).toMatchObject({
      baseFeeScalar: 5227,
      blobBaseFeeScalar: 1_014_213,
      operatorFeeScalar: 11,
      operatorFeeConstant: 12n,
      daFootprintGasScalar: 400,
      blobBaseFee: 1n,
      batcherHash: pad(config.batcher, { size: 32 }),
    });
    const dirty = { ...config, scalar: `0x00${'00'.repeat(26)}01000f79c5` as Hex };
    expect(l1BlockInfoOf(origin, 0n, dirty, 'ecotone')).toMatchObject({ baseFeeScalar: 0xffff_ffff, blobBaseFeeScalar: 0 });
    expect(() => l1BlockInfoOf(origin, 0n, { ...config, scalar: `0x02${'00'.repeat(31)}` }, 'ecotone')).toThrow(/unknown scalar version 2/);
    expect(l1BlockInfoOf(origin, 0n, { ...config, scalar: `0x02${'00'.repeat(31)}` }, 'bedrock').l1FeeScalar).toBe(
      `0x02${'00'.repeat(31)}`,
    );
  });
});
