import type { Common } from '@ethereumjs/common';
import { EVMError, getActivePrecompiles, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { createAddressFromString, type Address } from '@ethereumjs/util';
import { rip7212 } from '../ethereumjs.ts';
import type { BlockRules } from '../../op/rollup-config.ts';

type Precompile = (input: PrecompileInput) => ExecResult | Promise<ExecResult>;

const P256VERIFY = '0x0000000000000000000000000000000000000100';
const BN256_PAIRING = '0x0000000000000000000000000000000000000008';
const BLS12_G1_MSM = '0x000000000000000000000000000000000000000c';
const BLS12_G2_MSM = '0x000000000000000000000000000000000000000e';
const BLS12_PAIRING = '0x000000000000000000000000000000000000000f';

/**
 * The input caps OP Stack forks put on the variable-input precompiles, in bytes (op-geth
 * v1.101702.3 `params/protocol_params.go` and `core/vm/contracts.go`; base/base
 * `crates/common/precompiles/src/{bn254_pair,bls12_381}.rs`):
 * - Granite: bn256Pairing 112,687 (granite/exec-engine.md);
 * - Isthmus: BLS12-381 G1 MSM 513,760, G2 MSM 488,448, pairing 235,008;
 * - Jovian: bn256Pairing 81,984 (427 pairs), G1 MSM 288,960, G2 MSM 278,784, pairing 156,672;
 * - Karst (OP): bn256Pairing 57,600 (300 pairs), karst/exec-engine.md.
 * Base's Azul keeps Jovian's caps: its precompile set (base/base `crates/common/precompiles/src/provider.rs`,
 * `BasePrecompiles::azul`) is Jovian's plus Osaka's MODEXP and P256VERIFY, and no later Base
 * fork replaces bn256Pairing.
 */
export const precompileCaps = {
  granite: { [BN256_PAIRING]: 112_687 },
  isthmus: { [BLS12_G1_MSM]: 513_760, [BLS12_G2_MSM]: 488_448, [BLS12_PAIRING]: 235_008 },
  jovian: { [BN256_PAIRING]: 81_984, [BLS12_G1_MSM]: 288_960, [BLS12_G2_MSM]: 278_784, [BLS12_PAIRING]: 156_672 },
  karst: { [BN256_PAIRING]: 57_600 },
} as const satisfies Record<string, Record<string, number>>;

/** The cap on each capped precompile's input for a block's rules (newest fork wins). */
export function activeCaps(rules: BlockRules): Map<string, number> {
  const caps = new Map<string, number>();
  for (const fork of ['granite', 'isthmus', 'jovian', 'karst'] as const)
    if (rules.active(fork)) for (const [address, cap] of Object.entries(precompileCaps[fork])) caps.set(address, cap);
  return caps;
}

/**
 * A capped precompile: an input over the cap is an error before anything runs, and, as every
 * precompile error in geth's `evm.Call` (op-geth `RunPrecompiledContract`: the error of `Run`
 * after `RequiredGas` was charged; any error but a revert zeroes the remaining gas), the call
 * fails and consumes all the gas it was given.
 */
export function capped(inner: Precompile, cap: number): Precompile {
  return (input) =>
    input.data.length > cap
      ? {
          returnValue: new Uint8Array(0),
          executionGasUsed: input.gasLimit,
          exceptionError: new EVMError(EVMError.errorMessages.OUT_OF_GAS),
        }
      : inner(input);
}

/**
 * OP Stack precompiles beyond the Ethereum hardfork's: RIP-7212's P256VERIFY at 3,450 gas from
 * Fjord until the EVM is Osaka's (Karst, Azul), whose EIP-7951 P256VERIFY at 6,900 then serves
 * 0x100 as ethereumjs has it; and the input caps above, wrapped around the hardfork's own
 * precompiles.
 */
export function opPrecompiles(common: Common, rules: BlockRules) {
  const out: { address: Address; function: Precompile }[] = [];
  if (rules.active('fjord') && rules.evmHardfork !== 'osaka') out.push({ address: createAddressFromString(P256VERIFY), function: rip7212 });
  const own = getActivePrecompiles(common);
  for (const [address, cap] of activeCaps(rules)) {
    const inner = own.get(address.slice(2)) as Precompile | undefined;
    if (inner) out.push({ address: createAddressFromString(address), function: capped(inner, cap) });
  }
  return out;
}
