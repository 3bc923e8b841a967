import type { Common } from '@ethereumjs/common';
import { getActivePrecompiles, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { createAddressFromString, type Address } from '@ethereumjs/util';
import { rip7212 } from '../simulate/chain-rules.ts';
import type { BlockRules } from './rollup-config.ts';

const P256VERIFY = '0x0000000000000000000000000000000000000100';
const BN256_PAIRING = '0x0000000000000000000000000000000000000008';
/** Granite's cap on bn256Pairing input (427 pairs), OP Stack granite/exec-engine.md. */
const GRANITE_PAIRING_MAX_BYTES = 112_687;

/** OP Stack precompiles beyond the Ethereum hardfork's: RIP-7212 from Fjord, Granite's pairing cap. */
export function opPrecompiles(common: Common, rules: BlockRules) {
  const out: { address: Address; function: (input: PrecompileInput) => ExecResult | Promise<ExecResult> }[] = [];
  if (rules.active('fjord')) out.push({ address: createAddressFromString(P256VERIFY), function: rip7212 });
  if (rules.active('granite')) {
    const pairing = getActivePrecompiles(common).get(BN256_PAIRING.slice(2)) as (
      input: PrecompileInput,
    ) => ExecResult | Promise<ExecResult>;
    out.push({
      address: createAddressFromString(BN256_PAIRING),
      function: (input) =>
        input.data.length > GRANITE_PAIRING_MAX_BYTES
          ? {
              returnValue: new Uint8Array(0),
              executionGasUsed: input.gasLimit,
              exceptionError: { error: 'out of gas', errorType: 'EVMError' } as never,
            }
          : pairing(input),
    });
  }
  return out;
}
