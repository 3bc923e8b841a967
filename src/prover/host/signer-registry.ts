import { createPublicClient, http, parseAbi, type Address } from 'viem';

/** The signer registry's one call the host needs (`TEEProverRegistry.isValidSigner`). */
export interface SignerRegistry {
  readonly address: Address;
  isValidSigner(signer: Address): Promise<boolean>;
}

export const signerRegistryAbi = parseAbi(['function isValidSigner(address signer) view returns (bool)']);

/** Reads `isValidSigner` on L1 at the latest block; each call gives up after `timeoutMs` (10 s). */
export function createSignerRegistry(options: { address: Address; l1RpcUrl: string; timeoutMs?: number }): SignerRegistry {
  const client = createPublicClient({ transport: http(options.l1RpcUrl, { timeout: options.timeoutMs ?? 10_000, retryCount: 1 }) });
  return {
    address: options.address,
    isValidSigner: (signer) =>
      client.readContract({ address: options.address, abi: signerRegistryAbi, functionName: 'isValidSigner', args: [signer] }),
  };
}
