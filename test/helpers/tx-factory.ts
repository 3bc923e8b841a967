import { getContractAddress, pad, type Hex } from 'viem';
import type { HDAccount } from 'viem/accounts';
import { accounts, encodeDeposit, loggerInitcode } from './op-upstream.ts';
import { keccak256, numberToHex } from 'viem';

/**
 * Signs a realistic mix of transactions for executor tests: ETH transfers, contract deployments,
 * log-heavy calls (logger contract: a storage write and a LOG1), reverting calls and user
 * deposits (type 0x7e, mint 0). Nonces are tracked per account.
 */
export function createTxFactory(chainId: bigint) {
  const nonces = new Map<string, number>();
  let depositSeq = 0n;
  const next = (account: HDAccount) => {
    const nonce = nonces.get(account.address) ?? 0;
    nonces.set(account.address, nonce + 1);
    return nonce;
  };
  const sign = (account: HDAccount, tx: { to?: Hex | null; value?: bigint; data?: Hex; gas?: bigint }) =>
    account.signTransaction({
      type: 'eip1559',
      chainId: Number(chainId),
      nonce: next(account),
      to: tx.to ?? null,
      value: tx.value ?? 0n,
      data: tx.data ?? '0x',
      gas: tx.gas ?? 300_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
  return {
    /** Sets an account's next nonce (read from the chain). */
    setNonce: (from: number, nonce: number) => {
      nonces.set(accounts[from]!.address, nonce);
    },
    transfer: (from: number, to: Hex, value = 1_000n) => sign(accounts[from]!, { to, value, gas: 21_000n }),
    /** Deploys the logger; returns the raw tx and the contract's address. */
    async deploy(from: number): Promise<{ raw: Hex; address: Hex }> {
      const account = accounts[from]!;
      const nonce = nonces.get(account.address) ?? 0;
      const raw = await sign(account, { data: loggerInitcode, gas: 200_000n });
      return { raw, address: getContractAddress({ from: account.address, nonce: BigInt(nonce) }) };
    },
    log: (from: number, contract: Hex, word: bigint) => sign(accounts[from]!, { to: contract, data: pad(numberToHex(word), { size: 32 }) }),
    revert: (from: number, contract: Hex) => sign(accounts[from]!, { to: contract, data: `0xff${'00'.repeat(31)}` }),
    /**
     * A user deposit from a fresh sender: EDR's mempool takes a deposit only from a sender whose
     * nonce is 0 (NomicFoundation/edr#1578), so every deposit gets its own L1-alias-like sender.
     */
    deposit: (contract: Hex, word: bigint): Hex => {
      const seq = depositSeq++;
      return encodeDeposit({
        sourceHash: keccak256(numberToHex(1_000_000n + seq)),
        from: `0x${keccak256(numberToHex(seq + BigInt(chainId))).slice(26)}`,
        to: contract,
        mint: 0n,
        value: 0n,
        gas: 200_000n,
        data: pad(numberToHex(word), { size: 32 }),
      });
    },
  };
}
