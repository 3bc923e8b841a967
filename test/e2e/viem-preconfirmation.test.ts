import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  concat,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  http,
  pad,
  parseAbi,
  toEventSelector,
  toHex,
  webSocket,
  type Hex,
  type Log,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { eventually } from '../helpers/context.ts';
import { startDevnetGateway, type DevnetGateway } from '../helpers/devnet-gateway.ts';

/**
 * viem end to end against the gateway, with the chain defined the way viem defines its
 * pre-confirmation chains (Base: `experimental_preconfirmationTime`, so the client's
 * `experimental_blockTag` is `'pending'`), over HTTP and over WebSocket, on the devnet:
 * getBalance, call, estimateGas, getBlock, sendRawTransactionSync, waitForTransactionReceipt,
 * watchBlocks and watchContractEvent.
 */
const abi = parseAbi(['event Ping(uint256 value)', 'function ping(uint256 value) returns (uint256)']);
const pingTopic = toEventSelector('Ping(uint256)');
// The Pinger, assembled here because it is 49 bytes: any call emits Ping(calldata word 0) and
// returns that word. Runtime: CALLDATALOAD(0) MSTORE(0) LOG1(0, 32, topic) RETURN(0, 32).
const runtime = concat(['0x600035600052', '0x7f', pingTopic, '0x60206000a1', '0x60206000f3']);
// Initcode: CODECOPY(0, 12, 49) RETURN(0, 49), then the runtime.
const initcode = concat(['0x6031600c60003960316000f3', runtime]);

let setup: DevnetGateway;

beforeAll(async () => {
  setup = await startDevnetGateway({ blockTimeMs: 1000, flashblockMs: 200 });
}, 60_000);

afterAll(async () => {
  await setup?.close();
}, 60_000);

describe.each([
  ['HTTP', 2],
  ['WebSocket', 5],
] as const)('viem over %s with a pre-confirmation chain', (transportName, accountIndex) => {
  it('reads pending state, sends synchronously, waits for receipts, and watches blocks and events', async () => {
    const { devnet, serve } = setup;
    const chain = defineChain({
      id: devnet.chainId,
      name: 'flashlog devnet',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [serve.gateway.url], webSocket: [serve.gateway.wsUrl] } },
      experimental_preconfirmationTime: 200,
    });
    const transport = transportName === 'HTTP' ? http(serve.gateway.url) : webSocket(serve.gateway.wsUrl);
    const client = createPublicClient({ chain, transport, pollingInterval: 200 });
    expect(client.experimental_blockTag).toBe('pending');
    const account = privateKeyToAccount(devnet.accounts[accountIndex]!.privateKey);
    const wallet = createWalletClient({ chain, transport, account });
    const node = createPublicClient({ transport: http(devnet.rpcUrl) });
    const recipient = privateKeyToAccount(pad(toHex(1000 + accountIndex), { size: 32 })).address;

    // Watches first: blocks, and the Pinger's events once it exists.
    const blocks: bigint[] = [];
    const unwatchBlocks = client.watchBlocks({
      onBlock: (block) => {
        if (block?.number !== null && block?.number !== undefined) blocks.push(block.number);
      },
      onError: () => {},
    });

    await setup.afterSeal();
    const fees = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000n };
    let nonce = await client.getTransactionCount({ address: account.address });
    expect(nonce).toBe(await node.getTransactionCount({ address: account.address, blockTag: 'pending' }));

    // sendRawTransactionSync: a transfer, answered with its pre-confirmed receipt.
    const transfer = await wallet.signTransaction({ to: recipient, value: 12_345n, gas: 21_000n, nonce: nonce++, ...fees });
    const transferReceipt = await wallet.sendRawTransactionSync({ serializedTransaction: transfer });
    expect(transferReceipt.status).toBe('success');
    // getBalance (pending by the chain's default): the pre-confirmed transfer counts.
    expect(await client.getBalance({ address: recipient })).toBe(12_345n);

    const deploy = await wallet.signTransaction({ data: initcode, gas: 200_000n, nonce: nonce++, ...fees });
    const deployReceipt = await wallet.sendRawTransactionSync({ serializedTransaction: deploy });
    const pinger = deployReceipt.contractAddress!;
    expect(pinger).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const events: Log[] = [];
    const unwatchEvents = client.watchContractEvent({
      address: pinger,
      abi,
      eventName: 'Ping',
      onLogs: (logs) => {
        events.push(...logs);
      },
      onError: () => {},
    });

    // call and estimateGas run on the pending state, where the Pinger already has its code.
    const word = 0xabcdefn;
    const data = concat(['0x12345678', encodeAbiParameters([{ type: 'uint256' }], [word])]);
    const called = await client.call({ to: pinger, data: encodeAbiParameters([{ type: 'uint256' }], [word]) });
    expect(called.data).toBe(pad(toHex(word), { size: 32 }));
    // viem sends eth_estimateGas without a block unless asked (the node's default, latest, as on
    // Base), so pending is named here.
    expect(await client.estimateGas({ account: account.address, to: pinger, data, blockTag: 'pending' })).toBeGreaterThan(22_000n);

    // getBlock: the pending block by default.
    // Right after a seal the next block's first flashblock may not be in yet (the pending block is
    // then the sealed one); once it is, the default block is above the node's head.
    const above = await eventually(
      async () => {
        const [pendingBlock, sealed] = await Promise.all([client.getBlock(), node.getBlockNumber()]);
        return pendingBlock.number !== null && pendingBlock.number > sealed ? pendingBlock.number : undefined;
      },
      20_000,
      "a pending block above the node's head",
    );
    expect(above).toBeGreaterThan(0n);

    // waitForTransactionReceipt on a transaction sent the ordinary way.
    const ping = await wallet.signTransaction({
      to: pinger,
      data: encodeAbiParameters([{ type: 'uint256' }], [7n]),
      gas: 100_000n,
      nonce: nonce++,
      ...fees,
    });
    const pingHash = await wallet.sendRawTransaction({ serializedTransaction: ping });
    const pingReceipt = await client.waitForTransactionReceipt({ hash: pingHash, pollingInterval: 100 });
    expect(pingReceipt.status).toBe('success');
    expect(pingReceipt.logs[0]?.topics[0]).toBe(pingTopic);

    await eventually(
      () => (events.some((log) => (log as Log & { args: { value: bigint } }).args.value === 7n) ? true : undefined),
      20_000,
      'the Ping event',
    );
    await eventually(() => (blocks.length >= 2 ? true : undefined), 20_000, 'two blocks');
    expect(blocks[blocks.length - 1]!).toBeGreaterThan(blocks[0]!);
    unwatchEvents();
    unwatchBlocks();
    if (transportName === 'WebSocket')
      await (await (transport({ chain }) as ReturnType<ReturnType<typeof webSocket>>).value?.getRpcClient())?.close();
  }, 60_000);
});
