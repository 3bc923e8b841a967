/**
 * The L2 genesis of an op-geth devnet and the rollup config that derives it: an OP chain config
 * for op-geth's `geth init` with every fork through Isthmus (and Jovian, by choice) at time 0, the
 * OP predeploys from EDR's `opGenesisState` with a given L1Block (one that takes the L1-info
 * setters the chain's forks use) and its storage, the EIP-4788 and EIP-2935 system contracts as
 * op-geth's own `--dev` genesis carries them, and funded accounts; and the rollup config in
 * op-node's rollup.json form (which src/op/rollup-config.ts reads).
 */
import { execFileSync } from 'node:child_process';
import { FlashlogError } from '../../src/errors.ts';
import { bytesToHex, concat, keccak256, numberToHex, pad, stringToHex, type Address, type Hex } from 'viem';
import { l1BlockPredeploy } from '../../src/derive/l1-info-deposit.ts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import { l1BlockStorage, type L1Attributes } from '../deposit.ts';
import { forksAtGenesis } from '../../src/op/rollup-config.ts';
import { messagePasserAddress, proxyAdminAddress } from '../../src/op/predeploys.ts';

interface GenesisAccount {
  balance: Hex;
  nonce?: Hex;
  code?: Hex;
  storage?: Record<Hex, Hex>;
}

const messagePasser = messagePasserAddress;
const proxyAdmin: Hex = proxyAdminAddress;
const systemContracts = ['0x000f3df6d732807ef1319fb7b8bb8522d0beac02', '0x0000f90827f1c53a10cb7a02335b175320002935'];
/** OP Mainnet's EIP-1559 parameters. */
export const eip1559 = { elasticity: 6, denominator: 50, denominatorCanyon: 250 } as const;

export interface L2GenesisOptions {
  readonly chainId: number;
  readonly timestamp: bigint;
  /** Jovian's activation time; undefined: no Jovian. At the genesis time the genesis extraData takes Jovian's form. */
  readonly jovianTime?: bigint | undefined;
  readonly gasLimit: bigint;
  /** The L1Block predeploy's code and its storage at genesis. */
  readonly l1Block: Hex;
  readonly l1Attributes: L1Attributes;
  readonly minBaseFee: bigint;
  readonly funded: readonly { readonly address: Address; readonly balance: bigint }[];
}

/**
 * op-geth's genesis (the `geth init` JSON): the OP chain config (every fork through Isthmus at 0,
 * Jovian at `jovianTime`), the OP predeploys from EDR's `opGenesisState` with the given L1Block code
 * and storage at 0x4200…0015, the EIP-4788 and EIP-2935 system contracts as op-geth's own `--dev`
 * genesis carries them, and the funded accounts. `flashlog devnet --op-geth`, the derived test chain and
 * the oracle chain (test/oracle/genesis.ts) start from it.
 */
export async function l2Genesis(opGeth: string, options: L2GenesisOptions): Promise<Record<string, unknown>> {
  const alloc: Record<string, GenesisAccount> = {};
  const word = (value: bigint) => pad(numberToHex(value), { size: 32 });
  const edr = await import('@nomicfoundation/edr');
  for (const account of edr.opGenesisState(edr.OpHardfork.Isthmus)) {
    const address = bytesToHex(account.address);
    const isL1Block = address === l1BlockPredeploy;
    const storage = isL1Block ? l1BlockStorage(options.l1Attributes) : (account.storage ?? []);
    alloc[address] = {
      balance: numberToHex(account.balance ?? 0n),
      ...(account.nonce ? { nonce: numberToHex(account.nonce) } : {}),
      code: isL1Block ? options.l1Block : bytesToHex(account.code ?? new Uint8Array()),
      ...(storage.length ? { storage: Object.fromEntries(storage.map((slot) => [word(slot.index), word(slot.value)])) } : {}),
    };
  }
  const dev = JSON.parse(execFileSync(opGeth, ['--dev', 'dumpgenesis'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as {
    alloc: Record<string, GenesisAccount>;
  };
  for (const address of systemContracts) {
    const account = Object.entries(dev.alloc).find(([key]) => `0x${key.replace(/^0x/, '')}`.toLowerCase() === address)?.[1];
    if (!account?.code) throw new FlashlogError('DEVNET_SETUP_FAILED', `op-geth --dev dumpgenesis: no code at ${address}`);
    alloc[address] = account;
  }
  // As on a live chain , the L2ToL1MessagePasser has
  // storage, so an Isthmus header's withdrawalsRoot (its storage root) is not the empty root, which
  // op-geth's engine API leaves out of an execution payload and then requires.
  const adminSlot = word(BigInt(keccak256(stringToHex('eip1967.proxy.admin'))) - 1n);
  alloc[messagePasser] = { ...alloc[messagePasser]!, storage: { [adminSlot]: pad(proxyAdmin, { size: 32 }) } };
  for (const account of options.funded) alloc[account.address.toLowerCase()] = { balance: numberToHex(account.balance) };
  const params = concat([numberToHex(eip1559.denominatorCanyon, { size: 4 }), numberToHex(eip1559.elasticity, { size: 4 })]);
  return {
    config: {
      chainId: options.chainId,
      ...Object.fromEntries(
        [
          'homestead',
          'eip150',
          'eip155',
          'eip158',
          'byzantium',
          'constantinople',
          'petersburg',
          'istanbul',
          'muirGlacier',
          'berlin',
          'london',
          'arrowGlacier',
          'grayGlacier',
          'mergeNetsplit',
          'bedrock',
        ].map((fork) => [`${fork}Block`, 0]),
      ),
      ...Object.fromEntries(
        ['shanghai', 'cancun', 'prague', 'regolith', 'canyon', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus'].map((fork) => [
          `${fork}Time`,
          0,
        ]),
      ),
      ...(options.jovianTime === undefined ? {} : { jovianTime: Number(options.jovianTime) }),
      terminalTotalDifficulty: 0,
      depositContractAddress: '0x0000000000000000000000000000000000000000',
      optimism: {
        eip1559Elasticity: eip1559.elasticity,
        eip1559Denominator: eip1559.denominator,
        eip1559DenominatorCanyon: eip1559.denominatorCanyon,
      },
    },
    nonce: '0x0',
    timestamp: numberToHex(options.timestamp),
    // Holocene (and Jovian) from genesis: block 1's base fee reads its parent's parameters here.
    extraData:
      options.jovianTime !== undefined && options.jovianTime <= options.timestamp
        ? concat(['0x01', params, numberToHex(options.minBaseFee, { size: 8 })])
        : concat(['0x00', params]),
    gasLimit: numberToHex(options.gasLimit),
    difficulty: '0x0',
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    baseFeePerGas: numberToHex(1_000_000_000n),
    number: '0x0',
    gasUsed: '0x0',
    parentHash: `0x${'00'.repeat(32)}`,
    alloc,
  };
}

/** The rollup config fields `rollupJson` takes beyond the fork times. */
export interface RollupJsonOptions {
  readonly l2ChainId: number;
  readonly l1ChainId: number;
  readonly blockTime: number;
  readonly jovian: boolean;
  readonly genesis: { readonly l1: { hash: Hex; number: bigint }; readonly l2: { hash: Hex; number: bigint }; readonly l2Time: bigint };
  readonly systemConfig: SystemConfig;
  readonly batchInbox: Address;
  readonly portal: Address;
  readonly l1SystemConfig: Address;
  readonly seqWindowSize: number;
  readonly maxSequencerDrift: number;
  readonly channelTimeout: number;
}

/** The rollup config in op-node's rollup.json form (which src/op/rollup-config.ts reads). */
export function rollupJson(options: RollupJsonOptions) {
  const config = options.systemConfig;
  return {
    genesis: {
      l1: { hash: options.genesis.l1.hash, number: Number(options.genesis.l1.number) },
      l2: { hash: options.genesis.l2.hash, number: Number(options.genesis.l2.number) },
      l2_time: Number(options.genesis.l2Time),
      system_config: {
        batcherAddr: config.batcher,
        overhead: config.overhead,
        scalar: config.scalar,
        gasLimit: Number(config.gasLimit),
        eip1559Params: config.eip1559Params,
        operatorFeeParams: config.operatorFeeParams,
        ...(options.jovian ? { minBaseFee: Number(config.minBaseFee), daFootprintGasScalar: config.daFootprintGasScalar } : {}),
      },
    },
    block_time: options.blockTime,
    max_sequencer_drift: options.maxSequencerDrift,
    seq_window_size: options.seqWindowSize,
    channel_timeout: options.channelTimeout,
    l1_chain_id: options.l1ChainId,
    l2_chain_id: options.l2ChainId,
    ...forksAtGenesis(options.jovian ? 'jovian' : 'isthmus'),
    batch_inbox_address: options.batchInbox,
    deposit_contract_address: options.portal,
    l1_system_config_address: options.l1SystemConfig,
    chain_op_config: {
      eip1559Elasticity: eip1559.elasticity,
      eip1559Denominator: eip1559.denominator,
      eip1559DenominatorCanyon: eip1559.denominatorCanyon,
    },
  };
}
export type DerivedRollupJson = ReturnType<typeof rollupJson>;
