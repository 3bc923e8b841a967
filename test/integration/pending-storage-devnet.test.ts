import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  http,
  keccak256,
  numberToHex,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parseConfig } from '../../src/config/settings.ts';
import { DevnetToken, DevnetWorkload } from '../../devnet/contracts/bytecode.ts';
import { eventually } from '../helpers/context.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';

/**
 * Pending storage on a flashblocks source, held against the node: devnet flashblocks (with the
 * built-in load) -> ingest (local executor, the state diff `--state-diff` defaults to) -> view ->
 * gateway. A pre-confirmed transaction changes storage of contracts sealed before (an ERC-20
 * balance, the workload contract's counter and a slot keyed by it); while the node's `latest` lacks
 * the block, the gateway's `eth_getStorageAt(pending)` and `eth_call(pending)` of the view functions
 * reading those slots must equal the node's answers at that block once sealed. Only this test's own
 * transactions write these contracts, so the partial pending block and the sealed one agree on them.
 */
const defaults = parseConfig([], {}, []).config;
let setup: DevnetGateway;

type Reply = { result?: unknown; error?: { code: number; message: string } };
async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await response.json()) as Reply;
  if (body.error) throw new Error(`${method} ${JSON.stringify(params)}: ${body.error.message}`);
  return body.result;
}
/** Slot of `key` in the mapping at `slot` (Solidity layout). */
const mappingSlot = (type: 'address' | 'uint256', key: Hex | bigint, slot: bigint) =>
  keccak256(encodeAbiParameters([{ type }, { type: 'uint256' }], [key as never, slot]));

beforeAll(async () => {
  setup = await startDevnetGateway({ blockTimeMs: 3000, flashblockMs: 200, load: 5 }, { stateDiff: defaults.stateDiff });
}, 60_000);

afterAll(async () => {
  await setup?.close();
}, 60_000);

describe(`pending storage with the default --state-diff (${defaults.stateDiff}), against the node`, () => {
  it('eth_getStorageAt(pending) and eth_call(pending) of a view reading it equal the node at that block once sealed', async () => {
    const { devnet, serve } = setup;
    const gateway = serve.gateway.url;
    const owner = privateKeyToAccount(devnet.accounts[9]!.privateKey);
    const holder = privateKeyToAccount(`0x${'7a'.repeat(32)}`).address;
    const node = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
    const wallet = createWalletClient({ account: owner, transport: http(devnet.rpcUrl) });
    const fees = { chain: null, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000n };

    // Sealed first: the token (supply to the owner) and a workload contract.
    const nonce = await node.getTransactionCount({ address: owner.address });
    const token = getContractAddress({ from: owner.address, nonce: BigInt(nonce) });
    const workload = getContractAddress({ from: owner.address, nonce: BigInt(nonce + 1) });
    const supply = encodeAbiParameters([{ type: 'uint256' }], [10n ** 24n]).slice(2);
    await wallet.sendTransaction({ ...fees, nonce, gas: 1_500_000n, data: `${DevnetToken.bytecode}${supply}` as Hex });
    await wallet.sendTransaction({ ...fees, nonce: nonce + 1, gas: 1_500_000n, data: DevnetWorkload.bytecode });
    await wallet.sendTransaction({
      ...fees,
      nonce: nonce + 2,
      gas: 200_000n,
      to: workload,
      data: encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'emitMany', args: [2n, '0x01'] }),
    });
    await eventually(
      async () => ((await node.getTransactionCount({ address: owner.address })) === nonce + 3 ? true : undefined),
      20_000,
      'sealed setup',
    );

    // Pre-confirmed: a token transfer to a fresh holder and one more workload call, in one block.
    await setup.afterSeal();
    const amount = 12_345n;
    const hashes = [
      await wallet.sendTransaction({
        ...fees,
        nonce: nonce + 3,
        gas: 100_000n,
        to: token,
        data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'transfer', args: [holder, amount] }),
      }),
      await wallet.sendTransaction({
        ...fees,
        nonce: nonce + 4,
        gas: 300_000n,
        to: workload,
        data: encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'emitMany', args: [3n, '0x02'] }),
      }),
    ];
    const block = await eventually(
      async () => {
        const pending = (await rpc(gateway, 'eth_getBlockByNumber', ['pending', false])) as { number: Hex; transactions: Hex[] } | null;
        return pending && hashes.every((hash) => pending.transactions.includes(hash)) ? BigInt(pending.number) : undefined;
      },
      5000,
      'both transactions pre-confirmed',
    );

    // What a user reads while the block is pending: storage slots and the views that read them.
    const reads: { what: string; method: string; params: (at: string) => unknown[] }[] = [];
    const storage = (what: string, address: Hex, slot: Hex) =>
      reads.push({ what, method: 'eth_getStorageAt', params: (at: string) => [address, slot, at] });
    const view = (what: string, to: Hex, data: Hex) => reads.push({ what, method: 'eth_call', params: (at: string) => [{ to, data }, at] });
    const counter = 5n; // two calls sealed, three pre-confirmed
    storage('token balance of the holder', token, mappingSlot('address', holder, 1n));
    storage('token balance of the owner', token, mappingSlot('address', owner.address, 1n));
    storage('workload counter (slot 0)', workload, numberToHex(0, { size: 32 }));
    storage('workload slots[5]', workload, mappingSlot('uint256', counter, 1n));
    view('balanceOf(holder)', token, encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [holder] }));
    view('balanceOf(owner)', token, encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [owner.address] }));
    view('counter()', workload, encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'counter' }));
    view('slots(5)', workload, encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'slots', args: [counter] }));
    const pending = await Promise.all(reads.map((read) => rpc(gateway, read.method, read.params('pending'))));
    const latest = await Promise.all(reads.map((read) => rpc(gateway, read.method, read.params('latest'))));
    expect(await node.getBlockNumber(), 'answered while the node had not sealed the block').toBeLessThan(block);

    await eventually(async () => ((await node.getBlockNumber()) >= block ? true : undefined), 15_000, `block ${block} sealed`);
    const sealed = await Promise.all(reads.map((read) => rpc(devnet.rpcUrl, read.method, read.params(numberToHex(block)))));
    const table = (answers: unknown[]) => Object.fromEntries(reads.map((read, i) => [read.what, answers[i]]));
    expect(table(pending), `gateway (pending) vs node at block ${block}`).toEqual(table(sealed));
    // The block changed every one of them: the stale (sealed parent) answers differ.
    for (const [i, read] of reads.entries()) expect(latest[i], read.what).not.toEqual(sealed[i]);
    expect(BigInt(sealed[0] as Hex)).toBe(amount);
    expect(BigInt(sealed[7] as Hex)).toBe(block);
  }, 90_000);
});
