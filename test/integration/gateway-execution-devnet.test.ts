import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeErrorResult,
  encodeFunctionData,
  getContractAddress,
  http,
  pad,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DevnetToken } from '../../devnet/contracts/bytecode.ts';
import { TRANSFER_TOPIC } from '../../src/simulate/transfers.ts';
import type { Devnet } from '../../devnet/edr/devnet.ts';
import type { Serve } from '../../streams/serve.ts';
import { eventually } from '../helpers/context.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';
import { validatingFetch } from '../helpers/openrpc-schema.ts';

/**
 * eth_call, eth_estimateGas and eth_simulateV1 with `pending` on the devnet: devnet flashblocks -> ingest (local
 * EDR executor, full state diff) -> embedded log -> view -> gateway, the devnet node as upstream
 * (it executes eth_call / eth_estimateGas with the pending diff as state overrides; eth_simulateV1
 * runs on flashlog's engine over the node's state with the diff laid over it). The transactions are sent
 * right after a seal, so every pending answer below comes while the node's `latest` lacks them.
 */
// Runtime: return SLOAD(0). Initcode: SSTORE(0, 42), then return the 11-byte runtime.
const runtime = '0x60005460005260206000f3' as Hex;
const initcode = `0x602a600055600b6011600039600b6000f3${runtime.slice(2)}` as Hex;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const GAS_CAP = 1_000_000;

let devnet: Devnet;
let serve: Serve;
let setup: DevnetGateway;

type Reply = { result?: any; error?: { code: number; message: string; data?: unknown } };
const raw = async (url: string, method: string, params: unknown[]): Promise<Reply> => {
  const response = await validatingFetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) });
  return (await response.json()) as Reply;
};
const afterSeal = () => setup.afterSeal();

beforeAll(async () => {
  setup = await startDevnetGateway({ blockTimeMs: 6000, flashblockMs: 200 }, { callGasCap: GAS_CAP, callTimeoutMs: 5000 });
  ({ devnet, serve } = setup);
}, 60_000);

afterAll(async () => {
  await setup?.close();
}, 60_000);

describe('eth_call and eth_estimateGas on pre-confirmed state (devnet)', () => {
  it('call and estimate see a pre-confirmed deployment and balance; caller overrides lie over the pending state; the estimate is the least gas that succeeds', async () => {
    const account = privateKeyToAccount(devnet.accounts[3]!.privateKey);
    const fresh = privateKeyToAccount(`0x${'77'.repeat(32)}`).address;
    const node = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
    const wallet = createWalletClient({ account, transport: http(devnet.rpcUrl) });
    const gateway = serve.gateway.url;

    await afterSeal();
    const sealedBefore = await node.getBlockNumber();
    const nonce = await node.getTransactionCount({ address: account.address });
    const contract = getContractAddress({ from: account.address, nonce: BigInt(nonce + 1) });
    const fees = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000n };
    await wallet.sendTransaction({ chain: null, to: fresh, value: 10n ** 18n, nonce, gas: 21_000n, ...fees });
    await wallet.sendTransaction({ chain: null, data: initcode, nonce: nonce + 1, gas: 200_000n, ...fees });
    await eventually(
      async () => ((await raw(gateway, 'eth_getCode', [contract, 'pending'])).result === runtime ? true : undefined),
      4000,
      'pre-confirmed deployment',
    );

    const call = { to: contract, data: '0x' };
    const pendingCall = await raw(gateway, 'eth_call', [call, 'pending']);
    const latestCall = await raw(gateway, 'eth_call', [call, 'latest']);
    const overridden = await raw(gateway, 'eth_call', [call, 'pending', { [contract]: { stateDiff: { [word(0)]: word(7) } } }]);
    const transfer = { from: fresh, to: account.address, value: '0x1' };
    const pendingTransfer = await raw(gateway, 'eth_estimateGas', [transfer, 'pending']);
    const latestTransfer = await raw(gateway, 'eth_estimateGas', [transfer, 'latest']);
    const estimate = await raw(gateway, 'eth_estimateGas', [{ from: fresh, to: contract, data: '0x12345678' }, 'pending']);
    const gas = BigInt(estimate.result as string);
    const atEstimate = await raw(gateway, 'eth_call', [
      { from: fresh, to: contract, data: '0x12345678', gas: `0x${gas.toString(16)}` },
      'pending',
    ]);
    const below = await raw(gateway, 'eth_call', [
      { from: fresh, to: contract, data: '0x12345678', gas: `0x${(gas - 1n).toString(16)}` },
      'pending',
    ]);
    // All of it was answered before the node sealed the block.
    expect(await node.getBlockNumber()).toBe(sealedBefore);

    expect(pendingCall).toEqual({ jsonrpc: '2.0', id: 7, result: word(42) });
    expect(latestCall.result).toBe('0x'); // no code there yet
    expect(overridden.result).toBe(word(7));
    expect(pendingTransfer.result).toBe('0x5208');
    expect(latestTransfer.error, 'the fresh account has no ETH at latest').toBeDefined();
    expect(gas).toBeGreaterThan(21_000n);
    expect(atEstimate.result).toBe(word(42));
    expect(below.error?.code, 'one gas less than the estimate fails').toBe(-32000);
  }, 40_000);

  it('a pre-confirmed ERC-20 transfer changes balanceOf on pending, not on latest; a transfer that depends on it estimates on pending and reverts on latest', async () => {
    const owner = privateKeyToAccount(devnet.accounts[4]!.privateKey);
    const holder = privateKeyToAccount(`0x${'78'.repeat(32)}`);
    const node = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
    const wallet = createWalletClient({ account: owner, transport: http(devnet.rpcUrl) });
    const fees = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000n };
    // Sealed first: the token, and ETH for the holder's gas.
    const nonce = await node.getTransactionCount({ address: owner.address });
    const token = getContractAddress({ from: owner.address, nonce: BigInt(nonce) });
    await wallet.sendTransaction({
      chain: null,
      nonce,
      gas: 1_500_000n,
      ...fees,
      data: `${DevnetToken.bytecode}${encodeAbiParameters([{ type: 'uint256' }], [10n ** 24n]).slice(2)}` as Hex,
    });
    await wallet.sendTransaction({ chain: null, nonce: nonce + 1, gas: 21_000n, ...fees, to: holder.address, value: 10n ** 17n });
    await eventually(
      async () => ((await node.getBalance({ address: holder.address })) > 0n ? true : undefined),
      15_000,
      'the sealed setup',
    );

    // Pre-confirmed: tokens to the holder.
    await afterSeal();
    const sealedBefore = await node.getBlockNumber();
    const amount = 12_345n;
    await wallet.sendTransaction({
      chain: null,
      nonce: nonce + 2,
      gas: 80_000n,
      ...fees,
      to: token,
      data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'transfer', args: [holder.address, amount] }),
    });
    const balanceOf = { to: token, data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [holder.address] }) };
    const decode = (data: unknown) => decodeFunctionResult({ abi: DevnetToken.abi, functionName: 'balanceOf', data: data as Hex });
    await eventually(
      async () => ((await raw(serve.gateway.url, 'eth_call', [balanceOf, 'pending'])).result !== word(0) ? true : undefined),
      4000,
      'the pre-confirmed token transfer',
    );
    const pendingBalance = await raw(serve.gateway.url, 'eth_call', [balanceOf, 'pending']);
    const latestBalance = await raw(serve.gateway.url, 'eth_call', [balanceOf, 'latest']);
    const onward = {
      from: holder.address,
      to: token,
      data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'transfer', args: [owner.address, amount] }),
    };
    const pendingEstimate = await raw(serve.gateway.url, 'eth_estimateGas', [onward, 'pending']);
    const latestEstimate = await raw(serve.gateway.url, 'eth_estimateGas', [onward, 'latest']);
    expect(await node.getBlockNumber(), 'answered before the seal').toBe(sealedBefore);

    expect(decode(pendingBalance.result)).toBe(amount);
    expect(decode(latestBalance.result)).toBe(0n);
    expect(BigInt(pendingEstimate.result as string)).toBeGreaterThan(21_000n);
    expect(latestEstimate.error?.code, JSON.stringify(latestEstimate)).toBe(3);
    expect(latestEstimate.error?.message).toMatch(/^execution reverted/);
  }, 60_000);

  it('eth_simulateV1 on pending with traceTransfers: ETH received in a pre-confirmed transaction moves on, shown as an ERC-7528 transfer log; on latest the sender has nothing', async () => {
    const owner = privateKeyToAccount(devnet.accounts[5]!.privateKey);
    const fresh = privateKeyToAccount(`0x${'79'.repeat(32)}`);
    const node = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
    const wallet = createWalletClient({ account: owner, transport: http(devnet.rpcUrl) });
    await afterSeal();
    const sealedBefore = await node.getBlockNumber();
    await wallet.sendTransaction({
      chain: null,
      gas: 21_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
      to: fresh.address,
      value: 10n ** 16n,
    });
    await eventually(
      async () => ((await raw(serve.gateway.url, 'eth_getBalance', [fresh.address, 'pending'])).result !== '0x0' ? true : undefined),
      4000,
      'the pre-confirmed transfer',
    );
    const payload = {
      blockStateCalls: [{ calls: [{ from: fresh.address, to: owner.address, value: '0x38d7ea4c68000' }] }],
      traceTransfers: true,
    };
    const pending = await raw(serve.gateway.url, 'eth_simulateV1', [payload, 'pending']);
    const latest = await raw(serve.gateway.url, 'eth_simulateV1', [payload, 'latest']);
    expect(await node.getBlockNumber(), 'answered before the seal').toBe(sealedBefore);

    const [block] = pending.result as [
      { number: string; calls: { status: string; logs: { address: string; topics: string[]; data: string }[] }[] },
    ];
    expect(BigInt(block.number)).toBe(sealedBefore + 1n);
    expect(block.calls[0]!.status, JSON.stringify(pending)).toBe('0x1');
    expect(block.calls[0]!.logs).toHaveLength(1);
    const [transfer] = block.calls[0]!.logs;
    expect(transfer!.address).toBe('0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee');
    const word32 = (address: Hex) => pad(address.toLowerCase() as Hex, { size: 32 });
    expect(transfer!.topics).toEqual([TRANSFER_TOPIC, word32(fresh.address), word32(owner.address)]);
    expect(BigInt(transfer!.data)).toBe(10n ** 15n);
    expect(latest.error?.code, JSON.stringify(latest)).toBe(-38014);
  }, 60_000);

  it('a revert answers code 3 with its reason and data; the gas cap bounds the estimate; bad params name the field', async () => {
    const reverter = '0x00000000000000000000000000000000000000aa';
    const reason = encodeErrorResult({
      abi: [{ type: 'error', name: 'Error', inputs: [{ type: 'string' }] }],
      errorName: 'Error',
      args: ['boom'],
    });
    // Code: CODECOPY the revert data from behind the 14 bytes of code, then REVERT with it.
    const size = ((reason.length - 2) / 2).toString(16).padStart(4, '0');
    const revertCode = `0x61${size}600e60003961${size}6000fd${reason.slice(2)}`;
    const loop = '0x5b600056'; // JUMPDEST PUSH1 0 JUMP: runs until the gas is gone
    await eventually(
      async () =>
        (await raw(serve.gateway.url, 'eth_getBlockByNumber', ['pending', false])).result?.hash === `0x${'0'.repeat(64)}`
          ? true
          : undefined,
      8000,
      'a pre-confirmed block',
    );

    const call = await raw(serve.gateway.url, 'eth_call', [{ to: reverter }, 'pending', { [reverter]: { code: revertCode } }]);
    const estimate = await raw(serve.gateway.url, 'eth_estimateGas', [{ to: reverter }, 'pending', { [reverter]: { code: revertCode } }]);
    const endless = await raw(serve.gateway.url, 'eth_estimateGas', [{ to: reverter }, 'pending', { [reverter]: { code: loop } }]);
    const badOverride = await raw(serve.gateway.url, 'eth_call', [{ to: reverter }, 'pending', { [reverter]: { balance: 'lots' } }]);
    const badCall = await raw(serve.gateway.url, 'eth_estimateGas', [{ to: 'nowhere' }, 'pending']);

    expect(call.error).toEqual({ code: 3, message: 'execution reverted: boom', data: reason });
    expect(estimate.error).toEqual({ code: 3, message: 'execution reverted: boom', data: reason });
    expect(endless.error).toEqual({ code: -32000, message: `gas required exceeds allowance (${GAS_CAP})` });
    expect(badOverride.error?.code).toBe(-32602);
    expect(badOverride.error?.message).toContain(`params[2].${reverter}.balance`);
    expect(badCall.error?.code).toBe(-32602);
    expect(badCall.error?.message).toContain('params[0].to');
  }, 30_000);
});
