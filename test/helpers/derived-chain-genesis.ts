/**
 * The derived test chain's L2 genesis and rollup config (test/helpers/derived-chain.ts), built by
 * devnet/op-geth/genesis.ts (which `flashlog devnet --op-geth` uses too): an OP
 * chain config for op-geth's `geth init` with every fork through Isthmus (and Jovian, by choice)
 * at time 0, the OP predeploys from EDR's `opGenesisState` with the oracle chain's L1Block
 * (test/oracle/contracts/OracleL1Block.sol, which takes the Isthmus and Jovian L1-info setters),
 * the EIP-4788 and EIP-2935 system contracts as op-geth's own `--dev` genesis carries them, and
 * the funded accounts; and the rollup config in op-node's rollup.json form that derives it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Hex } from 'viem';
export {
  eip1559,
  l2Genesis,
  rollupJson,
  type DerivedRollupJson,
  type L2GenesisOptions,
  type RollupJsonOptions,
} from '../../devnet/op-geth/genesis.ts';

export interface CompiledContract {
  readonly abi: readonly unknown[];
  readonly bytecode: Hex;
  readonly deployedBytecode: Hex;
}

/** Compiles one Solidity file of test/helpers/contracts with solc (soljson, a devDependency). */
export function compileHelperContract(file: string, name: string): CompiledContract {
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(join(import.meta.dirname, 'contracts', file), 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const contract = output.contracts[file]?.[name];
  if (!contract) throw new Error(`solc: no contract ${name} in ${file}`);
  return {
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
}
