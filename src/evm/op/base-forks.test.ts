import { createBlock } from '@ethereumjs/block';
import { Common, Mainnet } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import { bytesToHex, concatHex, encodeFunctionData, hexToBytes, keccak256, numberToHex, padHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { serializeTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { BASE_TIME_IMPLEMENTATION, BASE_TIME_PREDEPLOY, DEPOSITOR_ACCOUNT, baseTimeAbi } from '../../op/basetime.ts';
import { DevnetBaseTime } from '../../../devnet/contracts/bytecode.ts';
import { B20_ACTIVATION_REGISTRY, B20_FACTORY, B20_POLICY_REGISTRY, refuseB20 } from './b20.ts';
import { baseMainnetRollupConfig } from '../../op/chains.ts';
import { afterDenimBlock, baseTimeDepositMillis, storedBaseTimeMillisPart, beforeDenimBlock } from './denim.ts';
import { slotKey } from '../../op/l1-cost.ts';
import { parseRollupConfig, rulesAt, type RollupConfig } from '../../op/rollup-config.ts';
import { runDeposit } from './transactions.ts';

const base = baseMainnetRollupConfig;
const beryl = base.beryl_time!;
const denim = base.denim_time!;
/** A B20 token address: 0xb2 ‖ 9 zero bytes ‖ variant 1 ‖ 9 bytes of a hash (base/base `b20_factory/variant.rs`). */
const token = concatHex(['0xb2', padHex('0x', { size: 9 }), '0x01', keccak256('0x1234').slice(0, 20) as Hex]);

async function evmAt(config: RollupConfig, time: number) {
  const rules = rulesAt(config, BigInt(time));
  const common = new Common({ chain: { ...Mainnet, chainId: rules.chainId, name: 'base' }, hardfork: rules.evmHardfork });
  const evm = await createEVM({ common });
  refuseB20(evm, rules);
  return { evm, rules, common };
}
const call = (evm: Awaited<ReturnType<typeof evmAt>>['evm'], to: Hex, value = 0n) =>
  evm.runCall({ to: createAddressFromString(to), gasLimit: 1_000_000n, value, skipBalance: true });

describe('B20 (Beryl, Cobalt): refused, naming the address and the fork', () => {
  it('a call to the factory, either registry or a token address is refused from Beryl on, and runs as an empty account before', async () => {
    const { evm } = await evmAt(base, beryl);
    for (const address of [B20_FACTORY, B20_ACTIVATION_REGISTRY, B20_POLICY_REGISTRY, token])
      await expect(call(evm, address)).rejects.toThrow(`a call to the B20 precompile ${address} (Base Beryl)`);
    await expect(call((await evmAt(base, base.cobalt_time!)).evm, token)).rejects.toThrow('(Base Cobalt)');
    const before = await call((await evmAt(base, beryl - 1)).evm, B20_FACTORY);
    expect(before.execResult.exceptionError).toBeUndefined();
    // Not a B20 address: 0xb2 with a non-zero byte in 1..9, or 0x8453…0003.
    const { evm: at } = await evmAt(base, beryl);
    const notToken = concatHex(['0xb2', padHex('0x01', { size: 9 }), padHex('0x', { size: 10 })]);
    expect((await call(at, notToken)).execResult.exceptionError).toBeUndefined();
    expect((await call(at, '0x8453000000000000000000000000000000000003')).execResult.exceptionError).toBeUndefined();
  });

  it('a plain value transfer to a token and a CALL from inside a contract are refused', async () => {
    const { evm } = await evmAt(base, beryl);
    await expect(call(evm, token, 1n)).rejects.toThrow(token);
    // A contract doing STATICCALL(gas, token, 0, 0, 0, 0): PUSH0 ×4, PUSH20 token, GAS, STATICCALL, STOP.
    const caller = createAddressFromString('0x00000000000000000000000000000000000c0de1');
    await evm.stateManager.putAccount(caller, new Account());
    await evm.stateManager.putCode(caller, hexToBytes(concatHex(['0x5f5f5f5f73', token, '0x5afa00'])));
    await expect(call(evm, caller.toString() as Hex)).rejects.toThrow(`B20 precompile ${token}`);
  });

  it('a deposit that reaches B20 refuses the block instead of being taken for a failed deposit', async () => {
    const { rules, common } = await evmAt(base, beryl);
    const state = new MerkleStateManager();
    const vm = await createVM({ common, stateManager: state });
    refuseB20(vm.evm, rules);
    const block = createBlock({ header: { timestamp: BigInt(beryl), gasLimit: 30_000_000n, baseFeePerGas: 0n } }, { common });
    const deposit = serializeTransaction({
      type: 'deposit',
      sourceHash: `0x${'02'.repeat(32)}`,
      from: '0x00000000000000000000000000000000000000aa',
      to: B20_FACTORY,
      mint: 0n,
      value: 0n,
      gas: 100_000n,
      isSystemTx: false,
      data: '0x',
    });
    await expect(runDeposit(vm, state, common, deposit, block, rules)).rejects.toMatchObject({ code: 'FORK_UNSUPPORTED' });
  });
});

/** Base's BaseTime deposit of `millis`, with `over` fields changed. */
const baseTimeDeposit = (millis: number, over: Record<string, unknown> = {}): Hex =>
  serializeTransaction({
    type: 'deposit',
    sourceHash: `0x${'03'.repeat(32)}`,
    from: DEPOSITOR_ACCOUNT,
    to: BASE_TIME_PREDEPLOY,
    mint: 0n,
    value: 0n,
    gas: 1_000_000n,
    isSystemTx: false,
    data: encodeFunctionData({ abi: baseTimeAbi, functionName: 'setTimestampMillisPart', args: [millis] }),
    ...over,
  } as never);
const l1Info = serializeTransaction({
  type: 'deposit',
  sourceHash: `0x${'04'.repeat(32)}`,
  from: DEPOSITOR_ACCOUNT,
  to: '0x4200000000000000000000000000000000000015',
  gas: 1_000_000n,
  isSystemTx: false,
  data: '0x',
} as never);

describe('Denim (Base): tx[1] the BaseTime deposit, 200 ms steps, BaseTime installed at activation', () => {
  it("accepts Base's deposit and names the block and the field of every malformed one", async () => {
    expect(baseTimeDepositMillis([l1Info, baseTimeDeposit(400)], 7n)).toBe(400);
    const refused = (transactions: Hex[]) => () => baseTimeDepositMillis(transactions, 7n);
    expect(refused([l1Info])).toThrow('Denim block 7: tx[1] is missing');
    expect(refused([l1Info, l1Info])).toThrow(
      'Denim block 7: tx[1] (the BaseTime deposit): to is 0x4200000000000000000000000000000000000015',
    );
    expect(refused([l1Info, baseTimeDeposit(0, { from: '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0002' })])).toThrow('from is 0xdead');
    expect(refused([l1Info, baseTimeDeposit(0, { gas: 999_999n })])).toThrow('gas is 999999, expected 1000000');
    expect(refused([l1Info, baseTimeDeposit(0, { mint: 1n })])).toThrow('mint is 1, expected 0');
    expect(refused([l1Info, baseTimeDeposit(0, { value: 1n })])).toThrow('value is 1, expected 0');
    expect(refused([l1Info, baseTimeDeposit(0, { isSystemTx: true })])).toThrow('isSystemTx is true, expected false');
    expect(refused([l1Info, baseTimeDeposit(300)])).toThrow('sets the millisecond part 300, expected one of 0, 200, 400, 600, 800');
    const dirty = concatHex(['0x86bdf394', padHex('0x010000c8', { size: 32 })]); // non-zero padding above the uint16
    expect(refused([l1Info, baseTimeDeposit(0, { data: dirty })])).toThrow('tx[1] calldata');
    expect(
      refused([
        l1Info,
        baseTimeDeposit(0, {
          data: concatHex([encodeFunctionData({ abi: baseTimeAbi, functionName: 'setTimestampMillisPart', args: [200] }), '0x00']),
        }),
      ]),
    ).toThrow('tx[1]');
    const signedUserTx =
      '0x02f86a0a808080809400000000000000000000000000000000000000008080c001a0' + '11'.repeat(32) + 'a0' + '22'.repeat(32);
    expect(refused([l1Info, signedUserTx as Hex])).toThrow('tx[1] is not a deposit (type 0x7e)');
  });

  /** A Base-ladder devnet at Denim 1000 with its own BaseTime code, the proxy in place (admin the ProxyAdmin). */
  async function denimChain(config: RollupConfig) {
    const state = new MerkleStateManager();
    const proxy = createAddressFromString(BASE_TIME_PREDEPLOY);
    await state.putAccount(proxy, new Account());
    await state.putCode(proxy, hexToBytes(DevnetBaseTime.deployedBytecode));
    await state.putStorage(proxy, hexToBytes(adminSlot), hexToBytes('0x4200000000000000000000000000000000000018'));
    return { state, proxy, config };
  }
  const adminSlot: Hex = '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103';
  const implementationSlot: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
  const devnet = parseRollupConfig({
    ...base,
    l2_chain_id: 9_100_004,
    denim_time: 1000,
    base_time_implementation_code: DevnetBaseTime.deployedBytecode,
  });
  const block = (config: RollupConfig, state: MerkleStateManager, timestamp: number, parentTimestamp: number, millis: number) =>
    beforeDenimBlock({
      state,
      config,
      rules: rulesAt(config, BigInt(timestamp), BigInt(parentTimestamp)),
      number: 42n,
      parentTimestamp: BigInt(parentTimestamp),
      transactions: [l1Info, baseTimeDeposit(millis)],
    });

  it('activation: installs the config’s BaseTime code at 0xc0D3…0030 and links the proxy, before any transaction', async () => {
    const { state, proxy } = await denimChain(devnet);
    expect(await block(devnet, state, 1000, 998, 0)).toBe(0);
    const implementation = createAddressFromString(BASE_TIME_IMPLEMENTATION);
    expect(bytesToHex(await state.getCode(implementation))).toBe(DevnetBaseTime.deployedBytecode);
    expect(bytesToHex(await state.getStorage(proxy, hexToBytes(implementationSlot)))).toBe(BASE_TIME_IMPLEMENTATION);
    await expect(block(devnet, state, 1000, 998, 200)).rejects.toThrow(
      "Denim block 42: the first Denim block's millisecond part is 200, expected 0",
    );
  });

  it("Base mainnet's activation block is refused, naming the missing BaseTime code and its hash; foreign code is refused", async () => {
    const { state } = await denimChain(base);
    await expect(block(base, state, denim, denim - 2, 0)).rejects.toThrow(
      `Denim block 42 (activation): installs the BaseTime implementation at ${BASE_TIME_IMPLEMENTATION} (runtime code hash 0x9c4c8a497a69d0b8f2ba67be0bee7a1373186055978c3be6ec3068e0ec27f32a`,
    );
    const foreign = parseRollupConfig({ ...base, base_time_implementation_code: DevnetBaseTime.deployedBytecode });
    await expect(block(foreign, state, denim, denim - 2, 0)).rejects.toMatchObject({ code: 'ROLLUP_CONFIG_INVALID' });
  });

  it('each block is its parent + 200 ms: five blocks share a second, a skipped or repeated step is refused', async () => {
    const { state, proxy } = await denimChain(devnet);
    const setMillis = (millis: number) => state.putStorage(proxy, hexToBytes(slotKey(0n)), hexToBytes(numberToHex(millis)));
    await setMillis(800);
    expect(await block(devnet, state, 1001, 1000, 0)).toBe(0);
    await setMillis(200);
    expect(await block(devnet, state, 1001, 1001, 400)).toBe(400); // the same header timestamp as the parent
    await expect(block(devnet, state, 1001, 1001, 600)).rejects.toThrow(
      "Denim block 42: its time 1001600 ms (timestamp 1001, millisecond part 600) is not its parent's 1001200 ms + 200",
    );
    await expect(block(devnet, state, 1002, 1001, 400)).rejects.toThrow('is not its parent');
  });

  it("the depositor's setter call appears only as tx[1] of a Denim block (base/base validate_child_transactions)", async () => {
    const { state, proxy } = await denimChain(devnet);
    await state.putStorage(proxy, hexToBytes(slotKey(0n)), hexToBytes(numberToHex(800)));
    const run = (config: RollupConfig, timestamp: number, parentTimestamp: number, transactions: Hex[]) =>
      beforeDenimBlock({
        state,
        config,
        rules: rulesAt(config, BigInt(timestamp), BigInt(parentTimestamp)),
        number: 5n,
        parentTimestamp: BigInt(parentTimestamp),
        transactions,
      });
    await expect(run(devnet, 1001, 1000, [l1Info, baseTimeDeposit(0), baseTimeDeposit(200)])).rejects.toThrow(
      'Denim block 5: tx[2] is a depositor call of setTimestampMillisPart besides tx[1]',
    );
    await expect(run(devnet, 998, 996, [l1Info, baseTimeDeposit(0)])).rejects.toThrow(
      'block 5: tx[1] is a depositor call of setTimestampMillisPart before Denim',
    );
    const { azul_time: _a, beryl_time: _b, cobalt_time: _c, denim_time: _d, ...opLadder } = devnet;
    expect(await run(parseRollupConfig(opLadder), 998, 996, [l1Info, baseTimeDeposit(0)])).toBeUndefined(); // not a Base chain: not checked
  });

  it('after the block: the deposit succeeded and BaseTime holds its millisecond part', async () => {
    const { state, proxy } = await denimChain(devnet);
    await state.putStorage(proxy, hexToBytes(slotKey(0n)), hexToBytes(numberToHex(400)));
    expect(await storedBaseTimeMillisPart(state)).toBe(400);
    await expect(afterDenimBlock(state, 9n, 400, 1)).resolves.toBeUndefined();
    await expect(afterDenimBlock(state, 9n, 400, 0)).rejects.toThrow('Denim block 9: the BaseTime deposit (tx[1]) failed');
    await expect(afterDenimBlock(state, 9n, 600, 1)).rejects.toThrow(
      'BaseTime holds the millisecond part 400 after the block, its deposit set 600',
    );
    await expect(afterDenimBlock(state, 9n, undefined, undefined)).resolves.toBeUndefined();
  });
});
