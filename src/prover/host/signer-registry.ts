import { createPublicClient, custom, parseAbi, type Address } from 'viem';
import { createUpstream } from '../../jsonrpc/upstream.ts';

/** The signer registry's one call the host needs (`TEEProverRegistry.isValidSigner`). */
export interface SignerRegistry {
  readonly address: Address;
  isValidSigner(signer: Address): Promise<boolean>;
}

export const signerRegistryAbi = parseAbi(['function isValidSigner(address signer) view returns (bool)']);

/**
 * Reads `isValidSigner` on L1 at the latest block; each call gives up after `timeoutMs` (10 s) and
 * is tried once more after a failure that may pass. viem encodes the call and decodes the answer;
 * the project's one upstream client carries it (viem's `custom` transport).
 */
export function createSignerRegistry(options: { address: Address; l1RpcUrl: string; timeoutMs?: number }): SignerRegistry {
  const l1 = createUpstream(options.l1RpcUrl, { timeoutMs: options.timeoutMs ?? 10_000, retries: 1, namedErrors: true });
  const client = createPublicClient({
    transport: custom({ request: ({ method, params }) => l1.call(method, (params ?? []) as readonly unknown[]) }, { retryCount: 0 }),
  });
  return {
    address: options.address,
    isValidSigner: (signer) =>
      client.readContract({ address: options.address, abi: signerRegistryAbi, functionName: 'isValidSigner', args: [signer] }),
  };
}
