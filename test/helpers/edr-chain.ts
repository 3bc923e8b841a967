import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, encodeFunctionData, hexToBytes, numberToHex, parseAbi, toFunctionSelector, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { edrContext as sharedEdrContext } from '../../src/evm/edr.ts';

/**
 * A local chain: EDR's provider (real EVM, real block hashes, eth_getProof) served over JSON-RPC
 * HTTP, with a tiny signer-registry contract deployed by a transaction.
 *
 * The registry is hand-assembled EVM (no Solidity compiler here). Its runtime:
 *   isValidSigner(address) -> storage[address] != 0 as bool     (selector 0x8b… from viem)
 *   any other selector: storage[calldata[4:36]] = calldata[36:68] (test-only setter, no owner)
 */
const isValidSignerSelector = toFunctionSelector('isValidSigner(address)');
export const registryRuntime: Hex = concat([
  '0x600435', // PUSH1 4 CALLDATALOAD                 [arg]
  '0x600035' /* PUSH1 0 CALLDATALOAD */,
  '0x60e01c' /* PUSH1 0xe0 SHR */, // [arg, selector]
  `0x63${isValidSignerSelector.slice(2)}14` as Hex, // PUSH4 sel EQ  [arg, eq]
  '0x601857', // PUSH1 0x18 JUMPI                      [arg]
  '0x6024359055', // PUSH1 0x24 CALLDATALOAD SWAP1 SSTORE  (set storage[arg] = value)
  '0x00', // STOP
  '0x5b', // 0x18: JUMPDEST                          [arg]
  '0x54', // SLOAD                                   [value]
  '0x15156000526020' /* ISZERO ISZERO PUSH1 0 MSTORE PUSH1 0x20 */,
  '0x6000f3', // PUSH1 0 RETURN
]);

/** Creation code: copies the runtime into memory and returns it (12-byte constructor). */
export const registryInitcode: Hex = concat([
  `0x60${numberToHex(hexToBytes(registryRuntime).length, { size: 1 }).slice(2)}600c60003960${numberToHex(hexToBytes(registryRuntime).length, { size: 1 }).slice(2)}6000f3` as Hex,
  registryRuntime,
]);
const setterAbi = parseAbi(['function setValidSigner(address signer, bool valid)']);
/** Hardhat/Anvil dev key #9: funded at genesis, deploys and administers the registry. */
const deployer = privateKeyToAccount('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6');

export interface EdrChain {
  readonly url: string;
  readonly chainId: number;
  readonly registry: Address;
  request(method: string, params?: unknown[]): Promise<unknown>;
  /** Sends a signed transaction from the funded deployer account; resolves once mined. */
  send(tx: { to?: Address; data: Hex }): Promise<void>;
  /** Marks a signer valid or not in the registry, by a transaction to its setter. */
  setValidSigner(signer: Address, valid: boolean): Promise<void>;
  close(): Promise<void>;
}

let l1Registered: Promise<void> | undefined;
/** The process's one EDR context (src/execute/edr.ts), with the L1 chain type registered once more. */
const edrContext = async () => {
  const { edr, context: ctx } = await sharedEdrContext();
  l1Registered ??= ctx.registerProviderFactory(edr.L1_CHAIN_TYPE, edr.l1ProviderFactory());
  await l1Registered;
  return { edr, ctx };
};

export interface GenesisAccount {
  readonly address: Address;
  readonly storage?: readonly { index: bigint; value: bigint }[];
  readonly code?: Hex;
  readonly balance?: bigint;
}

export async function startEdrChain(options: { chainId?: number; genesis?: readonly GenesisAccount[] } = {}): Promise<EdrChain> {
  const { edr, ctx } = await edrContext();
  const chainId = options.chainId ?? 900;
  const provider = await ctx.createProvider(
    edr.L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: false,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: false,
      bailOnTransactionFailure: false,
      chainId: BigInt(chainId),
      coinbase: hexToBytes('0x0000000000000000000000000000000000000000'),
      defaultTransactionGasLimit: 30_000_000n,
      genesisState: [
        ...edr.l1GenesisState(edr.l1HardforkFromString('prague')),
        { address: hexToBytes(deployer.address), balance: 10n ** 21n },
        ...(options.genesis ?? []).map((account) => ({
          address: hexToBytes(account.address),
          nonce: 1n,
          ...(account.balance ? { balance: account.balance } : {}),
          storage: [...(account.storage ?? [])],
          ...(account.code ? { code: hexToBytes(account.code) } : {}),
        })),
      ],
      hardfork: 'prague',
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: edr.MineOrdering.Priority } },
      network: { genesisBlockGasLimit: 30_000_000n },
      networkId: BigInt(chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => undefined },
    { subscriptionCallback: () => undefined },
    new edr.ContractDecoder(),
  );
  let id = 0;
  const raw = async (body: string): Promise<string> => {
    const response = await provider.handleRequest(body);
    return typeof response.data === 'string' ? response.data : JSON.stringify(response.data);
  };
  const request = async (method: string, params: unknown[] = []) => {
    const out = JSON.parse(await raw(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }))) as {
      result?: unknown;
      error?: { message: string };
    };
    if (out.error) throw new Error(`EDR ${method}: ${out.error.message}`);
    return out.result;
  };
  let nonce = 0;
  /** Sends a signed transaction from the deployer and waits for its receipt (automine). */
  const transact = async (tx: { to?: Address; data: Hex }) => {
    const raw = await deployer.signTransaction({
      chainId,
      type: 'eip1559',
      nonce: nonce++,
      gas: 200_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      ...tx,
    });
    const hash = (await request('eth_sendRawTransaction', [raw])) as Hex;
    const receipt = (await request('eth_getTransactionReceipt', [hash])) as { status: Hex; contractAddress: Address | null };
    if (receipt.status !== '0x1') throw new Error(`EDR transaction ${hash} reverted`);
    return receipt;
  };
  // The registry is deployed by a real transaction; then a few blocks so the L1 head is not genesis.
  const registry = (await transact({ data: registryInitcode })).contractAddress!;
  for (let i = 0; i < 3; i++) await request('evm_mine');
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    req.on('end', () => {
      raw(text).then(
        (out) => res.writeHead(200, { 'content-type': 'application/json' }).end(out),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    chainId,
    registry,
    request,
    async send(tx) {
      await transact(tx);
    },
    async setValidSigner(signer, valid) {
      await transact({ to: registry, data: encodeFunctionData({ abi: setterAbi, functionName: 'setValidSigner', args: [signer, valid] }) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
