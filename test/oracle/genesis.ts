/**
 * The oracle chain's genesis, as op-geth's `geth init` takes it: the OP chain config (every fork
 * through Isthmus at 0, Jovian at JOVIAN_TIME), the OP predeploys from EDR's `opGenesisState` with
 * OracleL1Block at 0x4200…0015 (its storage: block 0's L1 attributes), the EIP-4788 and EIP-2935
 * system contracts as op-geth's own `--dev` genesis carries them, and the funded users.
 */
import { execFileSync } from 'node:child_process';
import { bytesToHex, keccak256, numberToHex, pad, parseEther, parseGwei, stringToHex, type Hex } from 'viem';
import { l1BlockPredeploy } from '../../src/derive/l1-info-deposit.ts';
import { l1BlockStorage } from '../../src/devnet/deposit.ts';
import {
  CHAIN_ID,
  EIP1559,
  GAS_LIMIT,
  GENESIS_TIME,
  JOVIAN_TIME,
  eip1559Params,
  l1Attributes,
  users,
  type CompiledContract,
} from './chain.ts';

interface GenesisAccount {
  balance: Hex;
  nonce?: Hex;
  code?: Hex;
  storage?: Record<Hex, Hex>;
}

const MESSAGE_PASSER = '0x4200000000000000000000000000000000000016';
const PROXY_ADMIN: Hex = '0x4200000000000000000000000000000000000018';
const systemContracts = ['0x000f3df6d732807ef1319fb7b8bb8522d0beac02', '0x0000f90827f1c53a10cb7a02335b175320002935'];

export async function oracleGenesis(opGeth: string, l1Block: CompiledContract): Promise<Record<string, unknown>> {
  const alloc: Record<string, GenesisAccount> = {};
  const edr = await import('@nomicfoundation/edr');
  for (const account of edr.opGenesisState(edr.OpHardfork.Isthmus)) {
    const address = bytesToHex(account.address);
    const isL1Block = address === l1BlockPredeploy;
    const storage = isL1Block ? l1BlockStorage(l1Attributes(0n)) : (account.storage ?? []);
    alloc[address] = {
      balance: numberToHex(account.balance ?? 0n),
      ...(account.nonce ? { nonce: numberToHex(account.nonce) } : {}),
      code: isL1Block ? l1Block.deployedBytecode : bytesToHex(account.code ?? new Uint8Array()),
      ...(storage.length
        ? {
            storage: Object.fromEntries(
              storage.map((slot) => [pad(numberToHex(slot.index), { size: 32 }), pad(numberToHex(slot.value), { size: 32 })]),
            ),
          }
        : {}),
    };
  }
  const dev = JSON.parse(execFileSync(opGeth, ['--dev', 'dumpgenesis'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as {
    alloc: Record<string, GenesisAccount>;
  };
  for (const address of systemContracts) {
    const account = Object.entries(dev.alloc).find(([key]) => `0x${key.replace(/^0x/, '')}`.toLowerCase() === address)?.[1];
    if (!account?.code) throw new Error(`op-geth --dev dumpgenesis: no code at ${address}`);
    alloc[address] = account;
  }
  // As on a live chain, the L2ToL1MessagePasser (a proxy) has storage, so an Isthmus header's
  // withdrawalsRoot (its storage root) is not the empty root, which op-geth's engine API leaves out
  // of an execution payload and then requires: its EIP-1967 admin slot names the ProxyAdmin.
  const adminSlot = pad(numberToHex(BigInt(keccak256(stringToHex('eip1967.proxy.admin'))) - 1n), { size: 32 });
  alloc[MESSAGE_PASSER] = { ...alloc[MESSAGE_PASSER]!, storage: { [adminSlot]: pad(PROXY_ADMIN, { size: 32 }) } };
  for (const user of users) alloc[user.address.toLowerCase()] = { balance: numberToHex(parseEther('1000')) };
  return {
    config: {
      chainId: CHAIN_ID,
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      muirGlacierBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      arrowGlacierBlock: 0,
      grayGlacierBlock: 0,
      mergeNetsplitBlock: 0,
      shanghaiTime: 0,
      cancunTime: 0,
      pragueTime: 0,
      bedrockBlock: 0,
      regolithTime: 0,
      canyonTime: 0,
      ecotoneTime: 0,
      fjordTime: 0,
      graniteTime: 0,
      holoceneTime: 0,
      isthmusTime: 0,
      jovianTime: Number(JOVIAN_TIME),
      terminalTotalDifficulty: 0,
      depositContractAddress: '0x0000000000000000000000000000000000000000',
      optimism: {
        eip1559Elasticity: EIP1559.elasticity,
        eip1559Denominator: EIP1559.denominator,
        eip1559DenominatorCanyon: EIP1559.denominatorCanyon,
      },
    },
    nonce: '0x0',
    timestamp: numberToHex(GENESIS_TIME),
    // Holocene from genesis: the first block's base fee reads its parent's EIP-1559 parameters here.
    extraData: `0x00${eip1559Params(EIP1559.denominatorCanyon, EIP1559.elasticity).slice(2)}`,
    gasLimit: numberToHex(GAS_LIMIT),
    difficulty: '0x0',
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    baseFeePerGas: numberToHex(parseGwei('1')),
    number: '0x0',
    gasUsed: '0x0',
    parentHash: `0x${'00'.repeat(32)}`,
    alloc,
  };
}
