import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createTx } from '@ethereumjs/tx';
import { concat, hexToBigInt, hexToBytes, keccak256, numberToHex, padHex, stringToHex, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { JsonRpcError } from '../errors.ts';
import { fastLzSize, feeVaults, l1BlockAddress } from '../op/l1-cost.ts';
import { fixedRules, genesisRules, type ChainRules } from './chain-rules.ts';
import type { ForkAccount } from './fork-state.ts';
import { signedForm } from './op-fees.ts';
import type { SimulatePayload } from './payload.ts';
import { simulate, type SimulationContext } from './simulate-blocks.ts';

/*
 * OP fees in simulated calls, on a fake chain whose L1Block predeploy holds non-zero fee
 * parameters. The expected fees are the specification's formulas (OP Stack specs,
 * fjord/exec-engine.md, isthmus/exec-engine.md, jovian/exec-engine.md), written out here.
 */

const SENDER = '0x00000000000000000000000000000000000a11ce';
const READER = '0x00000000000000000000000000000000000000b0';
const TARGET = '0x00000000000000000000000000000000000000c0';
const ETHER = 10n ** 18n;
const GWEI = 10n ** 9n;
// PUSH1 0 CALLDATALOAD BALANCE PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: the balance of the address in the calldata
const BALANCE_OF = '0x60003531600052602060' + '00f3';

const fee = {
  l1BaseFee: 20n * GWEI,
  blobBaseFee: 3n * GWEI,
  baseFeeScalar: 1_368n,
  blobBaseFeeScalar: 810_949n,
  operatorScalar: 7_000n,
  operatorConstant: 123_456_789n,
};

/** L1Block storage: slot 1 l1BaseFee, slot 3 the scalars (bytes 16-24), slot 7 blobBaseFee, slot 8 the operator fee (bytes 20-32). */
function l1BlockSlot(slot: bigint): bigint {
  if (slot === 1n) return fee.l1BaseFee;
  if (slot === 7n) return fee.blobBaseFee;
  const word = (parts: Hex[]) => hexToBigInt(padHex(concat(parts), { size: 32, dir: 'right' }));
  if (slot === 3n)
    return word([
      padHex('0x0', { size: 16 }),
      numberToHex(fee.baseFeeScalar, { size: 4 }),
      numberToHex(fee.blobBaseFeeScalar, { size: 4 }),
    ]);
  if (slot === 8n)
    return word([
      padHex('0x0', { size: 20 }),
      numberToHex(fee.operatorScalar, { size: 4 }),
      numberToHex(fee.operatorConstant, { size: 8 }),
    ]);
  return 0n;
}

function context(rules: ChainRules, senderBalance = ETHER): SimulationContext {
  const accounts: Record<string, ForkAccount> = {
    [SENDER]: { balance: senderBalance, nonce: 0n, code: '0x' },
    [READER]: { balance: 0n, nonce: 0n, code: BALANCE_OF as Hex },
  };
  return {
    base: {
      number: 100n,
      hash: `0x${'11'.repeat(32)}`,
      timestamp: 1_800_000_000n,
      gasLimit: 30_000_000n,
      gasUsed: 0n,
      baseFeePerGas: GWEI,
      excessBlobGas: 0n,
      blobGasUsed: 0n,
      miner: `0x${'00'.repeat(20)}`,
      difficulty: 0n,
      // Holocene: 0x00 ‖ denominator 250 ‖ elasticity 6
      extraData: concat(['0x00', numberToHex(250, { size: 4 }), numberToHex(6, { size: 4 })]),
    },
    source: {
      account: async (address) => accounts[address.toLowerCase()],
      storage: async (address, slot) => (address.toLowerCase() === l1BlockAddress ? l1BlockSlot(hexToBigInt(slot)) : 0n),
    },
    blockHash: async () => `0x${'22'.repeat(32)}`,
    ...rules,
    gasCap: 50_000_000n,
  };
}

type Call = { status: Hex; returnData: Hex; gasUsed: Hex; error?: { code: number; message: string } };
type Block = { baseFeePerGas: Hex; miner: Hex; calls: Call[] };
const run = async (payload: unknown, ctx: SimulationContext) => (await simulate(payload as SimulatePayload, ctx)) as unknown as Block[];

const balanceReads = (addresses: readonly string[]) =>
  addresses.map((address) => ({ from: READER, to: READER, input: padHex(address as Hex, { size: 32 }) }));
const watched = [SENDER, feeVaults.l1Fee, feeVaults.operatorFee, feeVaults.baseFee] as const;

/** Fjord: a transaction under the minimum size (100 estimated bytes) pays 100e6 · l1FeeScaled / 1e12. */
const fjordMinimumL1Fee = () =>
  (100_000_000n * (16n * fee.l1BaseFee * fee.baseFeeScalar + fee.blobBaseFee * fee.blobBaseFeeScalar)) / 10n ** 12n;

/** One charged transfer of 1 wei, then the balances of the sender and the three vaults read in the next block. */
async function transferThenRead(ctx: SimulationContext, validation = false) {
  const baseFee = 2n * GWEI;
  const tip = GWEI;
  const blocks = await run(
    {
      validation,
      blockStateCalls: [
        {
          ...(validation ? {} : { blockOverrides: { baseFeePerGas: numberToHex(baseFee) } }),
          calls: [
            {
              from: SENDER,
              to: TARGET,
              value: '0x1',
              gas: numberToHex(60_000),
              maxFeePerGas: numberToHex(5n * GWEI),
              maxPriorityFeePerGas: numberToHex(tip),
            },
          ],
        },
        { calls: validation ? [] : balanceReads(watched) },
      ],
    },
    ctx,
  );
  const [first, second] = blocks;
  const gasUsed = hexToBigInt(first!.calls[0]!.gasUsed);
  const [sender, l1Vault, operatorVault, baseFeeVault] = second!.calls.map((call) => hexToBigInt(call.returnData));
  return { first: first!, gasUsed, baseFee: hexToBigInt(first!.baseFeePerGas), tip, sender, l1Vault, operatorVault, baseFeeVault };
}

describe('eth_simulateV1 on an OP Stack chain: a call that pays for gas pays the L1 and operator fees', () => {
  it('Isthmus (the devnet by its chain ID): L1 fee, operator fee gas·scalar/1e6 + constant, base fee to its vault, all from the sender', async () => {
    const r = await transferThenRead(context(fixedRules(1337n)));
    expect(r.first.calls[0]!.status).toBe('0x1');
    const l1Fee = fjordMinimumL1Fee();
    const operatorFee = (r.gasUsed * fee.operatorScalar) / 1_000_000n + fee.operatorConstant;
    expect(l1Fee).toBeGreaterThan(0n);
    expect(r.l1Vault).toBe(l1Fee);
    expect(r.operatorVault).toBe(operatorFee);
    expect(r.baseFeeVault).toBe(r.gasUsed * r.baseFee);
    expect(r.sender).toBe(ETHER - 1n - r.gasUsed * (r.baseFee + r.tip) - l1Fee - operatorFee);
  });

  it('Jovian (a genesis with config.optimism and jovianTime): operator fee gas·scalar·100 + constant', async () => {
    const r = await transferThenRead(context(genesisRules(opGenesis({ jovianTime: 0 }))));
    expect(r.operatorVault).toBe(r.gasUsed * fee.operatorScalar * 100n + fee.operatorConstant);
    expect(r.l1Vault).toBe(fjordMinimumL1Fee());
    expect(r.sender).toBe(ETHER - 1n - r.gasUsed * (r.baseFee + r.tip) - r.l1Vault! - r.operatorVault!);
  });

  it("with validation, the base fee is the chain's EIP-1559 (denominator 250 from the base block's extraData), not Ethereum's", async () => {
    const r = await transferThenRead(context(fixedRules(1337n)), true);
    // parent gas used 0: the base fee falls by 1/denominator
    expect(r.baseFee).toBe(GWEI - GWEI / 250n);
  });

  it('a sender that can pay gas and value but not the L1 and operator fees is refused (-38014), naming have and want', async () => {
    const gasOnly = 60_000n * 5n * GWEI + 1n;
    const error = await transferThenRead(context(fixedRules(1337n), gasOnly)).catch((e: unknown) => e);
    expect((error as JsonRpcError).rpcCode).toBe(-38014);
    expect((error as JsonRpcError).message).toContain(
      `have ${gasOnly} want ${gasOnly + fjordMinimumL1Fee() + (60_000n * fee.operatorScalar) / 1_000_000n + fee.operatorConstant}`,
    );
  });

  it('a call without fees and without validation pays nothing (as eth_call), and a chain that is not OP Stack has no OP fees', async () => {
    const free = await run(
      { blockStateCalls: [{ calls: [{ from: SENDER, to: TARGET, value: '0x1' }] }, { calls: balanceReads(watched) }] },
      context(fixedRules(1337n)),
    );
    expect(free[1]!.calls.map((c) => hexToBigInt(c.returnData))).toEqual([ETHER - 1n, 0n, 0n, 0n]);
    const plain = await transferThenRead(context(fixedRules(31_337_000n)));
    expect([plain.l1Vault, plain.operatorVault, plain.baseFeeVault]).toEqual([0n, 0n, 0n]);
    expect(plain.sender).toBe(ETHER - 1n - plain.gasUsed * (plain.baseFee + plain.tip));
  });
});

describe('the bytes a call is priced by (its transaction with a stand-in signature)', () => {
  it("compress as the same transaction signed for real does, within FastLZ's one byte, and unlike its unsigned bytes", async () => {
    const common = new Common({ chain: { ...Mainnet, chainId: 8453, name: 'base' }, hardfork: Hardfork.Prague });
    const gaps: number[] = [];
    for (let i = 0; i < 60; i++) {
      const length = [0, 40, 200, 700, 3000][i % 5]!;
      // half incompressible (hashes), half repetitive
      const chunks = Array.from({ length: Math.ceil(length / 32) }, (_, j) =>
        i % 2 ? keccak256(toHex(i * 1000 + j)) : padHex(toHex(j % 5), { size: 32 }),
      );
      const data = length === 0 ? '0x' : (concat(chunks).slice(0, 2 + 2 * length) as Hex);
      const fields = {
        nonce: i,
        to: TARGET,
        value: 5n,
        gas: 90_000n,
        maxFeePerGas: 2n * GWEI,
        maxPriorityFeePerGas: 1_000n,
        data,
      } as const;
      const account = privateKeyToAccount(keccak256(stringToHex(`sender ${i}`)));
      const signed = hexToBytes(await account.signTransaction({ ...fields, chainId: 8453, type: 'eip1559' }));
      const unsigned = createTx(
        { ...fields, type: 2, chainId: 8453n, nonce: BigInt(i), gasLimit: fields.gas, v: 0n, r: 0n, s: 0n },
        { common },
      );
      gaps.push(Math.abs(fastLzSize(signed) - fastLzSize(signedForm(unsigned))));
      expect(fastLzSize(signed) - fastLzSize(unsigned.serialize())).toBeGreaterThan(60);
    }
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1);
    expect(gaps.filter((gap) => gap === 0).length).toBeGreaterThan(50);
  });
});

/** An op-geth genesis: Ethereum forks to Prague at 0, the OP forks at 0, EIP-1559 250/6. */
function opGenesis(extra: Record<string, number>) {
  const times = [
    'shanghaiTime',
    'cancunTime',
    'pragueTime',
    'regolithTime',
    'canyonTime',
    'ecotoneTime',
    'fjordTime',
    'graniteTime',
    'holoceneTime',
    'isthmusTime',
  ];
  const blocks = [
    'homesteadBlock',
    'eip150Block',
    'eip155Block',
    'eip158Block',
    'byzantiumBlock',
    'constantinopleBlock',
    'petersburgBlock',
    'istanbulBlock',
    'muirGlacierBlock',
    'berlinBlock',
    'londonBlock',
    'arrowGlacierBlock',
    'grayGlacierBlock',
    'mergeNetsplitBlock',
    'bedrockBlock',
  ];
  return {
    config: {
      chainId: 901,
      ...Object.fromEntries(blocks.map((key) => [key, 0])),
      ...Object.fromEntries(times.map((key) => [key, 0])),
      ...extra,
      terminalTotalDifficulty: 0,
      optimism: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
    },
    difficulty: '0x0',
    gasLimit: '0x1c9c380',
    extraData: '0x',
    nonce: '0x0',
    timestamp: '0x0',
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    alloc: {},
  } as never;
}
