import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { flashblockSchema } from '../../src/schemas/flashblock.ts';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { assemble, caughtUp, rpc, sealedBlocks, subscribe, until, type RpcBlock } from '../helpers/devnet-feed.ts';
import { spawnFlashlog } from '../helpers/flashlog-process.ts';

/**
 * The devnet under its own load generator, and as the `flashlog devnet` command: the feed a
 * consumer sees (decoded, validated, assembled with the project's own code) is the chain the
 * devnet's JSON-RPC serves, block for block; and the load has the mix the issue asks for.
 */
interface Receipt {
  transactionHash: Hex;
  type: Hex;
  status: Hex;
  contractAddress: Hex | null;
  logs: { topics: Hex[] }[];
  l1Fee?: Hex;
}
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

let devnet: Devnet | undefined;
afterEach(async () => {
  await devnet?.close();
  devnet = undefined;
});

describe('devnet with --load', () => {
  it('every block pre-confirmed under load is the sealed block, with deposits, reverts, deployments, ERC-20 and log-heavy calls', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 100, load: 40 });
    const feed = await subscribe(devnet.wsUrl);
    await until(() => feed.frames.some((frame) => frame.flashblock.index === 0));
    const numbers = await sealedBlocks(devnet, 7);
    await caughtUp(feed, numbers.at(-1)!);
    feed.close();
    expect(feed.failures).toEqual([]);
    for (const frame of feed.frames) expect(flashblockSchema.safeParse(frame.json).success).toBe(true);

    const blocks = assemble(feed.frames);
    const all: Receipt[] = [];
    let checked = 0;
    for (const [number, { block, frames }] of blocks) {
      const canonical = await rpc<RpcBlock | null>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      if (!canonical) continue;
      checked += 1;
      expect(block.transactions.map((tx) => tx.hash)).toEqual(canonical.transactions);
      const last = frames.at(-1)!.diff;
      expect({ gas: last.gas_used, receipts: last.receipts_root, bloom: last.logs_bloom, hash: last.block_hash }).toEqual({
        gas: canonical.gasUsed,
        receipts: canonical.receiptsRoot,
        bloom: canonical.logsBloom,
        hash: canonical.hash,
      });
      // Index 0 holds only deposits, the L1-attributes one first; later indices hold no deposit.
      expect(frames[0]!.diff.transactions.every((raw) => raw.startsWith('0x7e'))).toBe(true);
      expect(frames.slice(1).every((frame) => frame.diff.transactions.every((raw) => !raw.startsWith('0x7e')))).toBe(true);
      const receipts = await rpc<Receipt[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [canonical.number]);
      expect(receipts.map((receipt) => receipt.transactionHash)).toEqual(canonical.transactions);
      all.push(...receipts);
      if (number > 2n) expect(canonical.transactions.length).toBeGreaterThanOrEqual(20);
    }
    expect(checked).toBeGreaterThanOrEqual(5);
    const user = all.filter((receipt) => receipt.type !== '0x7e');
    const userDeposits = all.filter((receipt) => receipt.type === '0x7e').length - checked; // less one L1-attributes deposit a block
    expect(userDeposits).toBeGreaterThan(0);
    expect(user.filter((receipt) => receipt.status === '0x0').length).toBeGreaterThan(0);
    expect(user.filter((receipt) => receipt.contractAddress !== null).length).toBeGreaterThan(0);
    expect(user.filter((receipt) => receipt.logs.some((log) => log.topics[0] === TRANSFER_TOPIC)).length).toBeGreaterThan(0);
    expect(user.filter((receipt) => receipt.logs.length >= 4).length).toBeGreaterThan(0);
    expect(user.filter((receipt) => receipt.logs.length === 0 && receipt.status === '0x1').length).toBeGreaterThan(0); // plain transfers
    // EDR leaves the OP fee fields out of legacy (type 0x0) receipts; every other user receipt has an L1 fee.
    expect(user.filter((receipt) => receipt.type !== '0x0').every((receipt) => BigInt(receipt.l1Fee ?? '0x0') > 0n)).toBe(true);
    expect(user.some((receipt) => receipt.type === '0x0')).toBe(true);
    const counts = devnet.load!.counts();
    for (const kind of ['transfer', 'erc20', 'logs', 'revert', 'deploy', 'deposit']) expect(counts[kind] ?? 0).toBeGreaterThan(0);

    // The node methods a consumer needs, on the same chain.
    const head = await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
    const token = devnet.load!.token;
    const logs = await rpc<{ transactionHash: Hex; logIndex: Hex }[]>(devnet.rpcUrl, 'eth_getLogs', [
      { fromBlock: '0x1', toBlock: head.number, address: token, topics: [TRANSFER_TOPIC] },
    ]);
    const fromReceipts = all.flatMap((receipt) =>
      receipt.logs
        .filter((log) => log.topics[0] === TRANSFER_TOPIC && (log as { address?: string }).address?.toLowerCase() === token.toLowerCase())
        .map(() => receipt.transactionHash),
    );
    expect(logs.length).toBeGreaterThanOrEqual(fromReceipts.length);
    for (const hash of fromReceipts) expect(logs.some((log) => log.transactionHash === hash)).toBe(true);
    const balanceCall = await rpc<Hex>(devnet.rpcUrl, 'eth_call', [
      { to: token, data: `0x70a08231${devnet.accounts[1]!.address.slice(2).toLowerCase().padStart(64, '0')}` },
      'latest',
    ]);
    expect(BigInt(balanceCall)).toBeGreaterThan(0n);
    expect(await rpc<Hex>(devnet.rpcUrl, 'eth_getCode', [token, 'latest'])).toMatch(/^0x[0-9a-f]{100,}$/);
    expect(BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_getTransactionCount', [devnet.accounts[0]!.address, 'latest']))).toBeGreaterThan(10n);
    expect(await rpc<Hex>(devnet.rpcUrl, 'eth_getStorageAt', [token, '0x0', 'latest'])).toBe(
      `0x${(10n ** 27n).toString(16).padStart(64, '0')}`,
    ); // totalSupply
    expect(
      BigInt(
        await rpc<Hex>(devnet.rpcUrl, 'eth_estimateGas', [
          { from: devnet.accounts[2]!.address, to: devnet.accounts[3]!.address, value: '0x1' },
        ]),
      ),
    ).toBeGreaterThanOrEqual(21_000n);
    // Isthmus: the header's withdrawalsRoot is the L2ToL1MessagePasser's storage root.
    const proof = await rpc<{ storageHash: Hex }>(devnet.rpcUrl, 'eth_getProof', [
      '0x4200000000000000000000000000000000000016',
      [],
      head.number,
    ]);
    expect(proof.storageHash).toBe(head.withdrawalsRoot);
    expect((await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByHash', [head.hash, false])).number).toBe(head.number);
  });

  it('with --reorg-every under load, the K-th blocks differ from their pre-confirmations and the others do not', async () => {
    devnet = await createDevnet({ blockTimeMs: 800, flashblockMs: 100, load: 30, reorgEvery: 3 });
    const feed = await subscribe(devnet.wsUrl);
    await until(() => feed.frames.some((frame) => frame.flashblock.index === 0));
    const numbers = await sealedBlocks(devnet, 7);
    await caughtUp(feed, numbers.at(-1)!);
    feed.close();
    let reorged = 0;
    let kept = 0;
    for (const [number, { block }] of assemble(feed.frames)) {
      const canonical = await rpc<RpcBlock | null>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      if (!canonical) continue;
      const pre = block.transactions.map((tx) => tx.hash);
      // The transaction a K-th block leaves out: its last user (not deposit) transaction. A K-th
      // block with none (a loaded machine's load generator sent nothing before its tail's hold,
      // devnet/edr/reorg-hold.ts) is sealed as pre-confirmed, as the devnet logs.
      const left = block.transactions.filter((tx) => !tx.raw.startsWith('0x7e')).at(-1)?.hash;
      if (number % 3n === 0n && left) {
        reorged += 1;
        expect(canonical.transactions).toEqual(pre.filter((hash) => hash !== left));
        expect(canonical.hash).not.toBe(block.header.flashblockHash);
        // The left-out transaction is mined later (in the next block, once that is sealed), not lost.
        if (number < numbers.at(-1)!) expect(await rpc(devnet.rpcUrl, 'eth_getTransactionReceipt', [left])).not.toBeNull();
      } else {
        kept += 1;
        expect(canonical.transactions).toEqual(pre);
        expect(canonical.hash).toBe(block.header.flashblockHash);
      }
    }
    expect(reorged).toBeGreaterThanOrEqual(1);
    expect(kept).toBeGreaterThanOrEqual(3);
  });
});

describe('flashlog devnet (the command)', () => {
  it('prints chain ID, keys and ports, serves RPC and a brotli feed, and exits 0 on SIGINT', async () => {
    const child = spawnFlashlog([
      'devnet',
      '--devnet-port',
      '0',
      '--devnet-ws-port',
      '0',
      '--metrics-port',
      '0',
      '--block-time-ms',
      '500',
      '--flashblock-ms',
      '100',
    ]);
    let banner = '';
    child.child.stderr!.on('data', (chunk: Buffer) => {
      banner += chunk.toString('utf8');
    });
    try {
      const started = await child.waitFor((line) => line.msg === 'devnet started', 30_000);
      expect(started.chainId).toBe(1337);
      await until(() => banner.includes('(9) '), 5000);
      expect(banner).toContain('chain ID 1337');
      expect(banner).toContain('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'); // account 0's key
      expect(banner).toContain(String(started.rpc));
      expect(await rpc(String(started.rpc), 'eth_chainId')).toBe('0x539');
      const feed = await subscribe(String(started.ws));
      await until(() => feed.frames.length >= 3, 5000);
      feed.close();
      expect(feed.failures).toEqual([]);
      expect(feed.frames.every((frame) => frame.binary)).toBe(true);
      const metricsLine = await child.waitFor((line) => line.msg === 'metrics listening');
      const metrics = await (await fetch(String(metricsLine.url))).text();
      expect(Number(/^flashlog_devnet_flashblocks_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
      expect(metrics).toMatch(/^flashlog_devnet_flashblock_build_seconds_count \d+/m);
    } finally {
      expect(await child.stop('SIGINT')).toBe(0);
    }
  });

  it('names the flag when its port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const child = spawnFlashlog(['devnet', '--devnet-port', '0', '--devnet-ws-port', String(taken), '--metrics-port', '0']);
      let stderr = '';
      child.child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      expect(await child.exited).toBe(2);
      expect(stderr).toContain(`--devnet-ws-port (FLASHLOG_DEVNET_WS_PORT): 127.0.0.1:${taken} is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('refuses a flashblock interval longer than the block time, naming the flag', async () => {
    const child = spawnFlashlog([
      'devnet',
      '--devnet-port',
      '0',
      '--devnet-ws-port',
      '0',
      '--metrics-port',
      '0',
      '--block-time-ms',
      '100',
      '--flashblock-ms',
      '200',
    ]);
    let stderr = '';
    child.child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    expect(await child.exited).toBe(2);
    expect(stderr).toContain('--flashblock-ms');
  });
});
