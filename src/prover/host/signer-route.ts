import { toHex, type Address } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { errorMessage, ResourceUnavailableError } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import type { EnclaveClient } from './enclave-client.ts';
import type { SignerRegistry } from './signer-registry.ts';

/**
 * Which enclave proves: the first (in configured order) whose signer the TEEProverRegistry says is
 * valid; without a registry, the first. Finding one latches the host healthy.
 */
export interface SignerRoute {
  /** The enclave to prove with; -32001 when no signer is valid. */
  route(): Promise<EnclaveClient>;
  /** Whether a valid signer was ever found. */
  readonly latched: boolean;
}

export function createSignerRoute(options: {
  readonly enclaves: readonly EnclaveClient[];
  readonly registry?: SignerRegistry | undefined;
  readonly logger?: Logger | undefined;
}): SignerRoute {
  const { enclaves, registry, logger } = options;
  let latched = false;
  const signerOf = async (enclave: EnclaveClient): Promise<Address> => publicKeyToAddress(toHex(await enclave.signerPublicKey()));

  async function route(): Promise<EnclaveClient> {
    if (!registry) return enclaves[0]!;
    const seen: string[] = [];
    let lastError: string | undefined;
    for (const enclave of enclaves) {
      let signer: Address;
      try {
        signer = await signerOf(enclave);
      } catch (error) {
        logger?.warn({ enclave: enclave.name, err: errorMessage(error) }, 'enclave signer key unavailable; skipping it');
        continue;
      }
      seen.push(signer);
      try {
        if (await registry.isValidSigner(signer)) {
          latched = true;
          return enclave;
        }
      } catch (error) {
        lastError = errorMessage(error);
        logger?.warn({ enclave: enclave.name, signer, err: lastError }, 'isValidSigner failed');
      }
    }
    throw new ResourceUnavailableError(
      lastError && seen.length > 0
        ? `no valid signer found among: [${seen.join(', ')}] (registry: ${lastError})`
        : `no valid signer found among: [${seen.join(', ')}]`,
    );
  }

  return {
    route,
    get latched() {
      return latched;
    },
  };
}
