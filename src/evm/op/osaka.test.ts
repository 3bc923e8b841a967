import { readFileSync } from 'node:fs';
import { createBlock } from '@ethereumjs/block';
import { Common, Mainnet } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import { concatHex, hexToBytes, numberToHex, bytesToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { serializeTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { baseMainnetRollupConfig, opMainnetRollupConfig } from '../../op/chains.ts';
import { opPrecompiles } from './precompiles.ts';
import { rulesAt, type RollupConfig } from '../../op/rollup-config.ts';
import { runDeposit, runUserTx } from './transactions.ts';

/** The EVM execute-block builds for a block of `config` at `time` (its hardfork, its OP precompiles). */
async function evmAt(config: RollupConfig, time: number | bigint) {
  const rules = rulesAt(config, BigInt(time));
  const common = new Common({ chain: { ...Mainnet, chainId: rules.chainId, name: `op-${rules.chainId}` }, hardfork: rules.evmHardfork });
  const evm = await createEVM({ common, customPrecompiles: opPrecompiles(common, rules) as never });
  const call = async (to: Hex, data: Hex, gasLimit = 100_000_000n) =>
    (await evm.runCall({ to: createAddressFromString(to), data: hexToBytes(data), gasLimit })).execResult;
  return { rules, common, evm, call };
}
const precompile = (n: number): Hex => numberToHex(n, { size: 20 });

const op = opMainnetRollupConfig;
const base = baseMainnetRollupConfig;
const karst = op.karst_time!;
const azul = base.azul_time!;
const jovianOp = op.jovian_time!;
const jovianBase = base.jovian_time!;

const vectors = JSON.parse(readFileSync(new URL('../../../test/fixtures/osaka/precompile-vectors.json', import.meta.url), 'utf8')) as {
  p256Verify: { name: string; input: Hex; expected: Hex; gas: number }[];
  modexpEip7883: { name: string; input: Hex; expected: Hex; gas: number }[];
};

describe('Osaka on L2 (Karst, Azul)', () => {
  it('EIP-7939 CLZ: the EIP test cases from Karst/Azul on, an invalid opcode before', async () => {
    // The EIP's table: 0 -> 256, 2^255 -> 0, 2^256-1 -> 0, 2^254 -> 1, 2^255-1 -> 1, 1 -> 255.
    const cases: [bigint, bigint][] = [
      [0n, 256n],
      [2n ** 255n, 0n],
      [2n ** 256n - 1n, 0n],
      [2n ** 254n, 1n],
      [2n ** 255n - 1n, 1n],
      [1n, 255n],
    ];
    // PUSH32 x, CLZ, PUSH0, MSTORE, PUSH1 32, PUSH0, RETURN
    const code = (x: bigint) => concatHex(['0x7f', numberToHex(x, { size: 32 }), '0x1e5f5260205ff3']);
    for (const [config, at] of [
      [op, karst],
      [base, azul],
    ] as const) {
      const { evm } = await evmAt(config, at);
      for (const [x, zeros] of cases) {
        const result = await evm.runCode({ code: hexToBytes(code(x)), gasLimit: 100_000n });
        expect(result.exceptionError, `CLZ(${x})`).toBeUndefined();
        expect(BigInt(bytesToHex(result.returnValue))).toBe(zeros);
        // PUSH32 3 + CLZ 5 + PUSH0 2 + MSTORE 3+3 (memory) + PUSH1 3 + PUSH0 2
        expect(result.executionGasUsed).toBe(21n);
      }
    }
    const before = await (await evmAt(op, karst - 1)).evm.runCode({ code: hexToBytes(code(1n)), gasLimit: 100_000n });
    expect(before.exceptionError?.error).toBe('invalid opcode');
  });

  it('EIP-7951 P256VERIFY: the EIP vectors at 6,900 gas from Karst/Azul; RIP-7212 at 3,450 before', async () => {
    for (const [config, at] of [
      [op, karst],
      [base, azul],
    ] as const) {
      const { call } = await evmAt(config, at);
      for (const vector of vectors.p256Verify) {
        const result = await call(precompile(0x100), vector.input, 100_000n);
        expect(bytesToHex(result.returnValue), vector.name).toBe(vector.expected);
        expect(result.executionGasUsed, vector.name).toBe(BigInt(vector.gas));
      }
    }
    const valid = vectors.p256Verify.find((vector) => vector.expected !== '0x')!;
    for (const [config, at] of [
      [op, karst - 1],
      [base, azul - 1],
    ] as const) {
      const result = await (await evmAt(config, at)).call(precompile(0x100), valid.input, 100_000n);
      expect(bytesToHex(result.returnValue)).toBe(valid.expected);
      expect(result.executionGasUsed).toBe(3_450n);
    }
  });

  it('EIP-7883 MODEXP gas and EIP-7823 bounds: the EIP vectors from Karst/Azul on, EIP-2565 gas before', async () => {
    for (const [config, at] of [
      [op, karst],
      [base, azul],
    ] as const) {
      const { call } = await evmAt(config, at);
      for (const vector of vectors.modexpEip7883) {
        const result = await call(precompile(5), vector.input);
        expect(bytesToHex(result.returnValue), vector.name).toBe(vector.expected);
        expect(result.executionGasUsed, vector.name).toBe(BigInt(vector.gas));
      }
      // EIP-7823: a base, exponent or modulus longer than 1,024 bytes fails, with all gas used.
      const lengths = (b: number, e: number, m: number) => concatHex([b, e, m].map((n) => numberToHex(n, { size: 32 })));
      const atBound = await call(precompile(5), concatHex([lengths(1024, 1, 1), `0x${'02'.repeat(1024)}`, '0x03', '0x05']), 10_000_000n);
      expect(atBound.exceptionError).toBeUndefined();
      const over = await call(precompile(5), concatHex([lengths(1025, 1, 1), `0x${'02'.repeat(1025)}`, '0x03', '0x05']), 10_000_000n);
      expect(over.exceptionError).toBeDefined();
      expect(over.executionGasUsed).toBe(10_000_000n);
    }
    const square = vectors.modexpEip7883.find((vector) => vector.name === 'nagydani-1-square')!;
    const before = await (await evmAt(op, karst - 1)).call(precompile(5), square.input);
    expect(bytesToHex(before.returnValue)).toBe(square.expected);
    expect(before.executionGasUsed).not.toBe(BigInt(square.gas)); // EIP-2565 prices it at 200
  });

  it('EIP-7918 and the blob schedule leave an L2 block alone: excessBlobGas 0 gives BLOBBASEFEE 1, as before Osaka', async () => {
    for (const at of [karst - 1, karst]) {
      const { evm, common } = await evmAt(op, at);
      const header = { timestamp: BigInt(at), gasLimit: 30_000_000n, baseFeePerGas: 1n, excessBlobGas: 0n, blobGasUsed: 0n };
      const block = createBlock({ header, withdrawals: [] }, { common, skipConsensusFormatValidation: true });
      // BLOBBASEFEE, PUSH0, MSTORE, PUSH1 32, PUSH0, RETURN
      const result = await evm.runCode({ code: hexToBytes('0x4a5f5260205ff3'), gasLimit: 100_000n, block });
      expect(BigInt(bytesToHex(result.returnValue))).toBe(1n);
    }
  });

  it('EIP-7825: a user transaction over 2^24 gas is invalid from Karst on, a deposit over it still runs', async () => {
    const { rules, common } = await evmAt(op, karst);
    const state = new MerkleStateManager();
    const vm = await createVM({ common, stateManager: state });
    const block = createBlock({ header: { timestamp: BigInt(karst), gasLimit: 60_000_000n, baseFeePerGas: 0n } }, { common });
    const sender = privateKeyToAccount(`0x${'11'.repeat(32)}`);
    await state.putAccount(createAddressFromString(sender.address), new Account(0n, 10n ** 24n));
    const fees = { l1Cost: () => 0n, operatorCost: () => 0n };
    const signed = (gas: bigint, nonce: number) =>
      sender.signTransaction({ chainId: 10, type: 'eip1559', nonce, to: sender.address, gas, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n });
    await expect(runUserTx(vm, state, common, hexToBytes(await signed(2n ** 24n + 1n, 0)), block, 0n, fees as never)).rejects.toThrow(
      'exceeds the maximum allowed by EIP-7825 (16777216)',
    );
    expect((await runUserTx(vm, state, common, hexToBytes(await signed(2n ** 24n, 0)), block, 0n, fees as never)).status).toBe(1);
    const deposit = serializeTransaction({
      type: 'deposit',
      sourceHash: `0x${'01'.repeat(32)}`,
      from: '0x00000000000000000000000000000000000000aa',
      to: '0x00000000000000000000000000000000000000bb',
      mint: 0n,
      value: 0n,
      gas: 30_000_000n,
      isSystemTx: false,
      data: '0x',
    });
    const receipt = await runDeposit(vm, state, common, deposit, block, rules);
    expect([receipt.status, receipt.gasUsed]).toEqual([1, 21_000n]);
  });
});

describe('precompile input caps', () => {
  /** Calls `address` with `bytes` zero bytes of input and 50M gas. */
  const callWith = async (config: RollupConfig, at: number, address: number, bytes: number) =>
    (await evmAt(config, at)).call(precompile(address), bytesToHex(new Uint8Array(bytes)), 50_000_000n);
  const refused = (result: { exceptionError?: unknown; executionGasUsed: bigint }) =>
    result.exceptionError !== undefined && result.executionGasUsed === 50_000_000n;

  it('bn256Pairing: Jovian 81,984 B (427 pairs), OP Karst 57,600 B (300 pairs), Base Azul keeps 427 pairs', async () => {
    expect(refused(await callWith(op, jovianOp, 8, 81_984 + 192))).toBe(true);
    expect(refused(await callWith(op, jovianOp, 8, 81_984))).toBe(false);
    expect(refused(await callWith(op, jovianOp - 1, 8, 81_984 + 192))).toBe(false); // Granite's 112,687 before
    expect(refused(await callWith(op, karst, 8, 57_600 + 192))).toBe(true);
    const atCap = await callWith(op, karst, 8, 57_600);
    expect([refused(atCap), BigInt(bytesToHex(atCap.returnValue))]).toEqual([false, 1n]); // 300 points at infinity pair to 1
    expect(refused(await callWith(base, azul, 8, 57_600 + 192))).toBe(false);
    expect(refused(await callWith(base, azul, 8, 81_984 + 192))).toBe(true);
  });

  it('Granite: bn256Pairing over 112,687 B fails with all gas used', async () => {
    const granite = opMainnetRollupConfig.granite_time!;
    // 587 pairs (112,704 B): over the cap from Granite, 20M gas of valid pairing before it.
    expect(refused(await callWith(op, granite, 8, 587 * 192))).toBe(true);
    expect(refused(await callWith(op, granite - 1, 8, 587 * 192))).toBe(false);
  });

  it('BLS12-381 (Isthmus, then Jovian): G1 MSM, G2 MSM and pairing over their caps fail with all gas used', async () => {
    const isthmus = op.isthmus_time!;
    for (const [address, isthmusCap, jovianCap, unit] of [
      [0x0c, 513_760, 288_960, 160],
      [0x0e, 488_448, 278_784, 288],
      [0x0f, 235_008, 156_672, 384],
    ] as const) {
      expect(refused(await callWith(op, jovianOp, address, jovianCap + unit)), `0x${address.toString(16)} Jovian`).toBe(true);
      expect(refused(await callWith(op, jovianOp - 1, address, jovianCap + unit)), `0x${address.toString(16)} Isthmus`).toBe(false);
      expect(refused(await callWith(op, isthmus, address, isthmusCap + unit)), `0x${address.toString(16)} Isthmus cap`).toBe(true);
      expect(refused(await callWith(base, jovianBase, address, jovianCap + unit))).toBe(true);
    }
  });
});
