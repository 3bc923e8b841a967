/**
 * The oracle chain's genesis, as op-geth's `geth init` takes it: the OP chain config (every fork
 * through Isthmus at 0, Jovian at JOVIAN_TIME), the OP predeploys from EDR's `opGenesisState` with
 * OracleL1Block at 0x4200…0015 (its storage: block 0's L1 attributes), the EIP-4788 and EIP-2935
 * system contracts as op-geth's own `--dev` genesis carries them, and the funded users.
 */
import { parseEther } from 'viem';
import { l2Genesis } from '../helpers/derived-chain-genesis.ts';
import { CHAIN_ID, GAS_LIMIT, GENESIS_TIME, JOVIAN_TIME, l1Attributes, users, type CompiledContract } from './chain.ts';

export async function oracleGenesis(opGeth: string, l1Block: CompiledContract): Promise<Record<string, unknown>> {
  return l2Genesis(opGeth, {
    chainId: CHAIN_ID,
    timestamp: GENESIS_TIME,
    jovianTime: JOVIAN_TIME,
    gasLimit: GAS_LIMIT,
    l1Block: l1Block.deployedBytecode,
    l1Attributes: l1Attributes(0n),
    minBaseFee: 0n,
    funded: users.map((user) => ({ address: user.address, balance: parseEther('1000') })),
  });
}
