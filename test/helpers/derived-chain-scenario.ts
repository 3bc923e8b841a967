import { encodeFunctionData, getContractAddress, parseEther, parseGwei, type Abi, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { DepositRequest, DerivedL1 } from './derived-chain-l1.ts';
import type { OpGethNode } from './op-geth.ts';

/** Where the scenario's transfers go. */
const recipient: Address = '0x0000000000000000000000000000000000c0ffee';

export interface ScenarioAccounts {
  readonly user: PrivateKeyAccount;
  readonly depositor: PrivateKeyAccount;
  readonly depositRecipient: PrivateKeyAccount;
  readonly systemConfigOwner: PrivateKeyAccount;
}

/** What the SystemConfig updates at L1 step 2 set (Jovian's two only on a Jovian chain). */
export const systemConfigUpdates = {
  gasLimit: 36_000_000n,
  feeScalars: { base: 2000, blob: 900_000 },
  eip1559: { denominator: 100, elasticity: 4 },
  operatorFee: { scalar: 9, constant: 700n },
  minBaseFee: 2_000_000n,
  daFootprintGasScalar: 500,
} as const;

/**
 * What the chain holds. On L1, by step (the n-th block the sequencer mines after the L2's L1
 * genesis): step 1, a deposit minting 3 ETH that sends 2 to an account holding nothing, and a
 * deposit creating a contract; step 2, one SystemConfig update of each kind; step 3, a deposit with
 * mint calling a contract. On L2, by block: the user's contract creation and a transfer in block 1,
 * then calls of that contract, EIP-1559 and legacy transfers, transfers from the deposit-funded
 * account once it holds its ETH, and blocks with none.
 */
export function derivedChainScenario(options: {
  readonly accounts: ScenarioAccounts;
  readonly probe: { readonly abi: readonly unknown[]; readonly bytecode: Hex };
  readonly systemConfig: { readonly address: Address; readonly abi: readonly unknown[] };
  readonly l1: DerivedL1;
  readonly l2ChainId: number;
  readonly jovian: boolean;
}) {
  const { l1, l2ChainId } = options;
  const nonces = new Map<Address, number>();
  const nonce = (account: PrivateKeyAccount) => {
    const next = nonces.get(account.address) ?? 0;
    nonces.set(account.address, next + 1);
    return next;
  };
  const { user, depositor, depositRecipient, systemConfigOwner } = options.accounts;
  // The user's first transaction creates the probe.
  const probe = getContractAddress({ from: user.address, nonce: 0n });
  const store = (value: bigint) => encodeFunctionData({ abi: options.probe.abi as Abi, functionName: 'store', args: [value] });
  const deposits = new Map<bigint, DepositRequest[]>([
    [
      1n,
      [
        { to: depositRecipient.address, mint: parseEther('3'), value: parseEther('2'), gasLimit: 100_000n, data: '0x' },
        { to: null, mint: 0n, value: 0n, gasLimit: 600_000n, data: options.probe.bytecode },
      ],
    ],
    [3n, [{ to: probe, mint: parseEther('0.5'), value: parseEther('0.1'), gasLimit: 200_000n, data: store(99n) }]],
  ]);
  const fees = { maxFeePerGas: parseGwei('5'), maxPriorityFeePerGas: 1_000_000n };
  const tx = (from: PrivateKeyAccount, fields: { to?: Address; value?: bigint; data?: Hex; gas: bigint }) =>
    from.signTransaction({ type: 'eip1559', chainId: l2ChainId, nonce: nonce(from), ...fees, ...fields });
  const update = (functionName: string, args: readonly unknown[]) =>
    encodeFunctionData({ abi: options.systemConfig.abi as Abi, functionName, args });
  const { feeScalars, eip1559, operatorFee } = systemConfigUpdates;
  const updates = new Map<bigint, Hex[]>([
    [
      2n,
      [
        update('setGasLimit', [systemConfigUpdates.gasLimit]),
        update('setGasConfigEcotone', [feeScalars.base, feeScalars.blob]),
        update('setEIP1559Params', [eip1559.denominator, eip1559.elasticity]),
        update('setOperatorFeeScalars', [operatorFee.scalar, operatorFee.constant]),
        ...(options.jovian
          ? [
              update('setMinBaseFee', [systemConfigUpdates.minBaseFee]),
              update('setDAFootprintGasScalar', [systemConfigUpdates.daFootprintGasScalar]),
            ]
          : []),
      ],
    ],
  ]);
  return {
    /** The L1 transactions of step `l1Step`: deposits, then SystemConfig updates, signed. */
    async l1TransactionsFor(l1Step: bigint): Promise<{ deposits: Hex[]; updates: Hex[] }> {
      const out = { deposits: [] as Hex[], updates: [] as Hex[] };
      let depositorNonce = await l1.nonce(depositor.address);
      for (const deposit of deposits.get(l1Step) ?? [])
        out.deposits.push(await l1.depositTransaction(depositor, depositorNonce++, deposit));
      let ownerNonce = await l1.nonce(systemConfigOwner.address);
      for (const data of updates.get(l1Step) ?? [])
        out.updates.push(await l1.signCall(systemConfigOwner, ownerNonce++, { to: options.systemConfig.address, data }));
      return out;
    },
    async userTransactionsFor(n: bigint, l2: OpGethNode): Promise<Hex[]> {
      if (n === 1n)
        return [
          await tx(user, { data: options.probe.bytecode, gas: 600_000n }),
          await tx(user, { to: recipient, value: 1n, gas: 21_000n }),
        ];
      const out: Hex[] = [];
      if (n % 3n === 0n) out.push(await tx(user, { to: probe, data: store(n), gas: 100_000n }));
      if (n % 3n === 1n) out.push(await tx(user, { to: recipient, value: n, gas: 21_000n }));
      if (n % 7n === 0n)
        out.push(
          await user.signTransaction({
            type: 'legacy',
            chainId: l2ChainId,
            nonce: nonce(user),
            gasPrice: parseGwei('5'),
            gas: 21_000n,
            to: recipient,
            value: 7n,
          }),
        );
      if (n % 5n === 4n) out.push(await tx(user, { to: depositRecipient.address, value: 1000n, gas: 21_000n }));
      if (n % 4n === 2n && BigInt(await l2.rpc<Hex>('eth_getBalance', [depositRecipient.address, 'latest'])) > parseEther('1'))
        out.push(await tx(depositRecipient, { to: recipient, value: n, gas: 21_000n }));
      return out;
    },
  };
}
