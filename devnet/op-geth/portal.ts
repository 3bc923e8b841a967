import { hexToBigInt, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { FlashlogError } from '../../src/errors.ts';
import { DevnetPortal } from '../contracts/bytecode.ts';
import type { L1Request } from './l1.ts';

/**
 * Deploys the devnet's deposit contract (contracts/DevnetPortal.sol: the OptimismPortal's
 * `depositTransaction` and `TransactionDeposited` event) on the L1 from `key`, and waits for it.
 * Resolves with its address and the L1 block that holds it.
 */
export async function deployPortal(
  request: L1Request,
  key: Hex,
  options: { readonly timeoutMs?: number } = {},
): Promise<{ address: Address; blockNumber: bigint; transactionHash: Hex }> {
  const account = privateKeyToAccount(key);
  const chainId = Number(hexToBigInt(await request<Hex>('eth_chainId')));
  const nonce = Number(hexToBigInt(await request<Hex>('eth_getTransactionCount', [account.address, 'pending'])));
  const latest = await request<{ baseFeePerGas?: Hex }>('eth_getBlockByNumber', ['latest', false]);
  const baseFee = latest.baseFeePerGas ? hexToBigInt(latest.baseFeePerGas) : 1_000_000_000n;
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId,
    nonce,
    gas: 1_000_000n,
    maxFeePerGas: baseFee * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    data: DevnetPortal.bytecode,
  });
  const transactionHash = await request<Hex>('eth_sendRawTransaction', [raw]);
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const receipt = await request<{ status: Hex; contractAddress: Address | null; blockNumber: Hex } | null>('eth_getTransactionReceipt', [
      transactionHash,
    ]);
    if (receipt) {
      if (receipt.status !== '0x1' || !receipt.contractAddress)
        throw new FlashlogError(
          'DEVNET_L1_FAILED',
          `the deposit contract's deployment ${transactionHash} from ${account.address} failed on the L1`,
        );
      return { address: receipt.contractAddress, blockNumber: hexToBigInt(receipt.blockNumber), transactionHash };
    }
    if (Date.now() > deadline)
      throw new FlashlogError('DEVNET_L1_FAILED', `the deposit contract's deployment ${transactionHash} was not mined in time`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
