/**
 * The op-geth oracle chain: an OP Stack chain (chain id 901) with every fork through Isthmus from
 * genesis and Jovian from block 5, and the transactions of its first nine blocks. The fixture
 * generator (generate.ts) has op-geth build these blocks; the engine test (op-geth-engine.test.ts)
 * builds blocks from the same scenario with flashlog's executor and has op-geth check them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  concat,
  type Abi,
  type EncodeFunctionDataParameters,
  encodeFunctionData,
  getContractAddress,
  keccak256,
  numberToHex,
  pad,
  parseEther,
  parseGwei,
  stringToHex,
  toFunctionSelector,
  type Hex,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { encodeDeposit, sourceHash } from '../../src/op/deposit-tx.ts';
import { l1BlockPredeploy } from '../../src/derive/l1-info-deposit.ts';
import { l1AttributesCalldata, type L1Attributes } from '../../devnet/deposit.ts';
import { forksAtGenesis } from '../../src/op/rollup-config.ts';

export const CHAIN_ID = 901;
export const GENESIS_TIME = 1_764_000_000n;
export const BLOCK_TIME = 2n;
/** Blocks 1-4 are Isthmus, block 5 is Jovian's activation block. */
export const JOVIAN_BLOCK = 5n;
export const JOVIAN_TIME = GENESIS_TIME + JOVIAN_BLOCK * BLOCK_TIME;
export const BLOCK_COUNT = 9;
export const GAS_LIMIT = 30_000_000n;
/** OP Mainnet's EIP-1559 parameters (Canyon denominator 250, elasticity 6). */
export const EIP1559 = { elasticity: 6, denominator: 50, denominatorCanyon: 250 } as const;
export const SEQUENCER_FEE_VAULT: Hex = '0x4200000000000000000000000000000000000011';
/** The depositor account (OP spec `deposits.md`): the sender of the L1-info deposit, the only caller OracleL1Block takes. */
const DEPOSITOR: Hex = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';

/** The rollup config in kona's serde form (the op-blocks fixtures' `rollupConfig`). */
export const rollupConfig = {
  l2_chain_id: CHAIN_ID,
  block_time: Number(BLOCK_TIME),
  ...forksAtGenesis('isthmus'),
  jovian_time: Number(JOVIAN_TIME),
  chain_op_config: {
    eip1559Elasticity: EIP1559.elasticity,
    eip1559Denominator: EIP1559.denominator,
    eip1559DenominatorCanyon: EIP1559.denominatorCanyon,
  },
};

/** Holocene's eip1559Params: denominator u32 ‖ elasticity u32. */
export const eip1559Params = (denominator: number, elasticity: number): Hex =>
  concat([numberToHex(denominator, { size: 4 }), numberToHex(elasticity, { size: 4 })]);

/** The chain's users: keys derived from a fixed phrase, so every run signs the same transactions. */
const user = (i: number) => privateKeyToAccount(keccak256(stringToHex(`flashlog op-geth oracle user ${i}`)));
export const users: readonly PrivateKeyAccount[] = Array.from({ length: 12 }, (_, i) => user(i));
const [A, B, C, D, E, F] = [0, 1, 2, 3, 4, 5].map((i) => users[i]!) as [
  PrivateKeyAccount,
  PrivateKeyAccount,
  PrivateKeyAccount,
  PrivateKeyAccount,
  PrivateKeyAccount,
  PrivateKeyAccount,
];

export interface CompiledContract {
  readonly abi: readonly unknown[];
  readonly bytecode: Hex;
  readonly deployedBytecode: Hex;
}

/** Compiles test/oracle/contracts/*.sol with solc (soljson, a devDependency). */
export function compileOracleContracts(): { OracleL1Block: CompiledContract; OracleProbe: CompiledContract } {
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string): string };
  const dir = join(import.meta.dirname, 'contracts');
  const sources = Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name.endsWith('.sol'))
      .map((name) => [name, { content: readFileSync(join(dir, name), 'utf8') }]),
  );
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources,
        settings: {
          optimizer: { enabled: true, runs: 200 },
          evmVersion: 'cancun',
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const get = (file: string, name: string): CompiledContract => {
    const contract = output.contracts[file]![name]!;
    return {
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    };
  };
  return { OracleL1Block: get('OracleL1Block.sol', 'OracleL1Block'), OracleProbe: get('OracleProbe.sol', 'OracleProbe') };
}

/** The L1 attributes of block `n` (one L1 origin per Isthmus block, a new one at Jovian's). */
export function l1Attributes(n: bigint): L1Attributes & { daFootprintGasScalar: number } {
  const jovian = n > JOVIAN_BLOCK;
  const origin = n <= JOVIAN_BLOCK ? n : JOVIAN_BLOCK + 1n + (n - JOVIAN_BLOCK - 1n) / 2n;
  return {
    l1Number: 20_000_000n + origin,
    l1Timestamp: GENESIS_TIME - 12n + origin * 12n,
    l1BaseFee: parseGwei('7') + origin,
    l1BlobBaseFee: 3n + origin,
    l1Hash: keccak256(stringToHex(`flashlog op-geth oracle L1 block ${origin}`)),
    sequenceNumber: n <= JOVIAN_BLOCK ? 0n : (n - JOVIAN_BLOCK - 1n) % 2n,
    batcherHash: pad('0x0a11ce', { size: 32 }),
    baseFeeScalar: 1368,
    blobBaseFeeScalar: 810_949,
    // Isthmus: gas × scalar / 1e6 + constant; Jovian: gas × scalar × 100 + constant.
    operatorFeeScalar: jovian ? 7 : 2000,
    operatorFeeConstant: jovian ? 500n : 1000n,
    // Block 7's 10000 makes its DA footprint exceed its gas used (the base fee then follows it).
    daFootprintGasScalar: n === 7n ? 10_000 : 400,
  };
}

const JOVIAN_SELECTOR = toFunctionSelector('setL1BlockValuesJovian()');

/** The L1-info deposit that opens block `n`: `setL1BlockValuesIsthmus` through Jovian's activation block, then `setL1BlockValuesJovian`. */
export function l1InfoDeposit(n: bigint): Hex {
  const attributes = l1Attributes(n);
  const isthmus = l1AttributesCalldata(attributes);
  const data =
    n > JOVIAN_BLOCK
      ? concat([JOVIAN_SELECTOR, `0x${isthmus.slice(10)}`, numberToHex(attributes.daFootprintGasScalar, { size: 2 })])
      : isthmus;
  return encodeDeposit({
    sourceHash: sourceHash(1n, attributes.l1Hash, attributes.sequenceNumber),
    from: DEPOSITOR,
    to: l1BlockPredeploy,
    mint: 0n,
    value: 0n,
    gas: 1_000_000n,
    isSystemTx: false,
    data,
  });
}

/** L1 accounts (aliased) that send user deposits. */
const DEPOSITORS = { x: '0x1111000000000000000000000000000000001111', y: '0x2222000000000000000000000000000000002222' } as const;

/** One block of the scenario: payload attributes besides the L1-info deposit, and user transactions. */
export interface ScenarioBlock {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly eip1559Params: Hex;
  /** From Jovian's activation block on. */
  readonly minBaseFee: bigint | undefined;
  /** Deposits, the L1-info deposit first. */
  readonly deposits: readonly Hex[];
  /** Signed user transactions, in the order one sender's nonces need. */
  readonly userTxs: readonly Hex[];
  /** What the block covers, for the fixture's `source`. */
  readonly covers: string;
}

/**
 * The nine blocks. Gas prices leave room above every base fee the chain reaches (minBaseFee 5
 * gwei at most), so a pool takes every transaction.
 */
export async function scenario(probe: CompiledContract): Promise<ScenarioBlock[]> {
  const nonces = new Map<Hex, number>();
  const nonce = (account: PrivateKeyAccount) => {
    const next = nonces.get(account.address) ?? 0;
    nonces.set(account.address, next + 1);
    return next;
  };
  const fees = { maxFeePerGas: parseGwei('40'), maxPriorityFeePerGas: parseGwei('1') };
  const tx = (from: PrivateKeyAccount, fields: { to?: Hex; value?: bigint; data?: Hex; gas: bigint }) =>
    from.signTransaction({ type: 'eip1559', chainId: CHAIN_ID, nonce: nonce(from), ...fees, ...fields });
  const legacy = (from: PrivateKeyAccount, fields: { to: Hex; value: bigint }) =>
    from.signTransaction({ type: 'legacy', chainId: CHAIN_ID, nonce: nonce(from), gasPrice: parseGwei('40'), gas: 21_000n, ...fields });
  const call = (name: 'store' | 'clear' | 'fail', args: readonly unknown[] = []) =>
    encodeFunctionData({ abi: probe.abi as Abi, functionName: name, args } as EncodeFunctionDataParameters);
  const depositNonces = new Map<string, bigint>();
  let logIndex = 0n;
  const deposit = (n: bigint, from: Hex, fields: { to: Hex | null; mint: bigint; value: bigint; gas: bigint; data?: Hex }) => {
    depositNonces.set(from, (depositNonces.get(from) ?? 0n) + 1n);
    return encodeDeposit({
      sourceHash: sourceHash(0n, l1Attributes(n).l1Hash, logIndex++),
      from,
      isSystemTx: false,
      data: '0x',
      ...fields,
    });
  };
  const create = (from: PrivateKeyAccount) => {
    const address = getContractAddress({ from: from.address, nonce: BigInt(nonces.get(from.address) ?? 0) });
    return { address, tx: tx(from, { data: probe.bytecode, gas: 600_000n }) };
  };
  /** An EIP-7702 transaction from `sender` setting `authority`'s code to a delegation to `target`, then calling `authority`. */
  const setCode = async (sender: PrivateKeyAccount, authority: PrivateKeyAccount, target: Hex, data: Hex) => {
    const txNonce = nonce(sender);
    const authorization = await authority.signAuthorization({ chainId: CHAIN_ID, address: target, nonce: nonce(authority) });
    return sender.signTransaction({
      type: 'eip7702',
      chainId: CHAIN_ID,
      nonce: txNonce,
      ...fees,
      gas: 200_000n,
      to: authority.address,
      data,
      authorizationList: [authorization],
    });
  };
  const at = (n: bigint) => GENESIS_TIME + n * BLOCK_TIME;
  const holocene = eip1559Params(EIP1559.denominatorCanyon, EIP1559.elasticity);
  const blocks: ScenarioBlock[] = [];
  const add = (
    n: bigint,
    block: Omit<ScenarioBlock, 'number' | 'timestamp' | 'deposits' | 'eip1559Params' | 'minBaseFee'> & Partial<ScenarioBlock>,
  ) =>
    blocks.push({
      number: n,
      timestamp: at(n),
      eip1559Params: holocene,
      minBaseFee: n >= JOVIAN_BLOCK ? parseGwei('2') : undefined,
      ...block,
      deposits: [l1InfoDeposit(n), ...(block.deposits ?? [])],
    });

  const probeA = create(A);
  add(1n, {
    covers: 'Isthmus: a deposit with mint and value, a contract creation, EIP-1559 and legacy transfers',
    deposits: [deposit(1n, DEPOSITORS.x, { to: B.address, mint: parseEther('5'), value: parseEther('1'), gas: 100_000n })],
    userTxs: [
      await probeA.tx,
      await tx(B, { to: C.address, value: parseEther('0.1'), gas: 21_000n }),
      await legacy(C, { to: D.address, value: 12_345n }),
    ],
  });
  const depositProbe = getContractAddress({ from: DEPOSITORS.y, nonce: 0n });
  add(2n, {
    covers: 'Isthmus: a deposit calling a contract with mint, a deposit creating a contract, a reverting call, an EIP-7702 delegation',
    deposits: [
      deposit(2n, DEPOSITORS.x, { to: probeA.address, mint: parseEther('1'), value: 0n, gas: 200_000n, data: call('store', [42n]) }),
      deposit(2n, DEPOSITORS.y, { to: null, mint: parseEther('0.1'), value: 0n, gas: 600_000n, data: probe.bytecode }),
    ],
    userTxs: [
      await tx(A, { to: probeA.address, data: call('store', [1n]), gas: 100_000n }),
      await tx(C, { to: probeA.address, data: call('fail'), gas: 100_000n }),
      await setCode(B, D, probeA.address, call('store', [5n])),
    ],
  });
  add(3n, {
    covers: 'Isthmus: a reverting deposit with mint, a storage deletion, a call to a delegated account',
    deposits: [
      deposit(3n, DEPOSITORS.x, { to: depositProbe, mint: parseEther('2'), value: parseEther('0.5'), gas: 100_000n, data: call('fail') }),
    ],
    userTxs: [
      await tx(A, { to: probeA.address, data: call('clear'), gas: 100_000n }),
      await tx(E, { to: D.address, data: call('store', [9n]), gas: 100_000n }),
      await tx(F, { to: E.address, value: 1n, gas: 21_000n }),
    ],
  });
  add(4n, {
    covers: 'Isthmus: the parent of the Jovian activation block',
    userTxs: [
      await tx(C, { to: depositProbe, data: call('store', [3n]), gas: 100_000n }),
      await tx(D, { to: A.address, value: 7n, gas: 60_000n }),
    ],
  });
  add(5n, {
    covers: 'Jovian activation block: deposits only, the Isthmus L1-info form, minBaseFee 2 gwei in extraData',
    deposits: [deposit(5n, DEPOSITORS.y, { to: F.address, mint: parseEther('3'), value: parseEther('0.25'), gas: 100_000n })],
    userTxs: [],
  });
  const probeF = create(F);
  add(6n, {
    covers: 'Jovian: setL1BlockValuesJovian, base fee clamped to minBaseFee, operator fee (×100), creation, revert, EIP-7702',
    userTxs: [
      await tx(A, { to: probeA.address, data: call('store', [7n]), gas: 100_000n }),
      await tx(C, { to: probeA.address, data: call('fail'), gas: 100_000n }),
      await probeF.tx,
      await setCode(E, B, depositProbe, call('store', [11n])),
    ],
  });
  add(7n, {
    covers: 'Jovian: DA footprint above gas used (scalar 10000), so blobGasUsed sets the next base fee',
    userTxs: await Promise.all(users.slice(4, 12).map((from, i) => tx(from, { to: A.address, value: BigInt(i + 1), gas: 21_000n }))),
  });
  add(8n, {
    covers: 'Jovian: the base fee raised by the parent DA footprint, new EIP-1559 parameters, minBaseFee 5 gwei',
    eip1559Params: eip1559Params(100, 4),
    minBaseFee: parseGwei('5'),
    deposits: [
      deposit(8n, DEPOSITORS.x, {
        to: probeF.address,
        mint: parseEther('1'),
        value: parseEther('0.5'),
        gas: 200_000n,
        data: call('store', [8n]),
      }),
    ],
    userTxs: [
      await tx(B, { to: probeF.address, data: call('store', [1n]), gas: 100_000n }),
      await tx(A, { to: probeF.address, data: call('fail'), gas: 100_000n }),
      await tx(C, { to: D.address, value: 1n, gas: 60_000n }),
    ],
  });
  add(9n, {
    covers: 'Jovian: the base fee held at minBaseFee 5 gwei',
    eip1559Params: eip1559Params(100, 4),
    minBaseFee: parseGwei('5'),
    userTxs: [await tx(A, { to: probeF.address, data: call('clear'), gas: 100_000n })],
  });
  if (blocks.length !== BLOCK_COUNT) throw new Error('scenario: block count');
  return blocks;
}

/** The payload attributes of a scenario block, as op-geth's engine API takes them. */
export function payloadAttributes(
  block: ScenarioBlock,
  transactions: readonly Hex[],
  noTxPool: boolean,
  feeRecipient = SEQUENCER_FEE_VAULT,
) {
  return {
    timestamp: numberToHex(block.timestamp),
    prevRandao: keccak256(stringToHex(`prevRandao ${block.number}`)),
    suggestedFeeRecipient: feeRecipient,
    withdrawals: [] as never[],
    parentBeaconBlockRoot: keccak256(stringToHex(`beacon root ${block.number}`)),
    transactions,
    noTxPool,
    gasLimit: numberToHex(GAS_LIMIT),
    eip1559Params: block.eip1559Params,
    // op-geth v1.101702.3 reads minBaseFee as a JSON number (a plain uint64, not a hex quantity).
    ...(block.minBaseFee === undefined ? {} : { minBaseFee: Number(block.minBaseFee) }),
  };
}
