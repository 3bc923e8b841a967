import { afterEach, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { flashblockSchema } from '../../src/schemas/flashblock.ts';
import { assemble, caughtUp, rpc, sealedBlocks, sendTransfers, subscribe, until, type RpcBlock } from '../helpers/devnet-feed.ts';
import { keccak256, toHex } from 'viem';
import { fromRpcReceipt, logsBloom, receiptsRoot, type RpcConsensusReceipt } from '../../src/evm/receipts.ts';
import { encodeDeposit } from '../../src/op/deposit-tx.ts';
import { rpcHeaderHash, type HeaderFields } from '../../devnet/edr/block-building.ts';
import { createDevnet, type Devnet, type DevnetOptions } from '../../devnet/edr/devnet.ts';

/**
 * The devnet against the real parts: EDR underneath, its HTTP and WebSocket servers, the
 * project's own frame decoder, schema and assembler. Blocks are short (600 ms, 100 ms
 * flashblocks) so a test sees several blocks in a few seconds.
 */
const FAST: DevnetOptions = { blockTimeMs: 600, flashblockMs: 100 };
let devnet: Devnet | undefined;
afterEach(async () => {
  await devnet?.close();
  devnet = undefined;
});

describe('flashlog devnet', () => {
  it('streams brotli flashblocks that validate and assemble to exactly the sealed blocks', async () => {
    devnet = await createDevnet(FAST);
    const feed = await subscribe(devnet.wsUrl);
    await until(() => feed.frames.some((frame) => frame.flashblock.index === 0));
    const sealed = sealedBlocks(devnet, 4);
    const sent = await sendTransfers(devnet, 0, 12, 90);
    await caughtUp(feed, (await sealed).at(-1)!);
    feed.close();
    expect(feed.failures).toEqual([]);
    expect(feed.frames.length).toBeGreaterThan(8);
    expect(feed.frames.every((frame) => frame.binary)).toBe(true);
    for (const frame of feed.frames) {
      expect(flashblockSchema.safeParse(frame.json).success).toBe(true);
      expect(frame.json.metadata).toEqual({ block_number: Number(frame.flashblock.metadata.block_number), access_list: null });
    }
    const blocks = assemble(feed.frames);
    let complete = 0;
    const preconfirmed: Hex[] = [];
    for (const [number, { block, frames }] of blocks) {
      const canonical = await rpc<RpcBlock | null>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      if (!canonical) continue; // still open
      complete += 1;
      expect(frames.map((frame) => frame.index)).toEqual([0, 1, 2, 3, 4, 5, 6]); // index 0, then one per 100 ms
      expect(frames[0]!.base).toBeTruthy();
      expect(block.transactions[0]!.raw.startsWith('0x7e')).toBe(true);
      expect(block.transactions.map((tx) => tx.hash)).toEqual(canonical.transactions);
      const last = frames.at(-1)!.diff;
      expect(last.gas_used).toBe(canonical.gasUsed);
      expect(last.receipts_root).toBe(canonical.receiptsRoot);
      expect(last.logs_bloom).toBe(canonical.logsBloom);
      expect(last.state_root).toBe(canonical.stateRoot);
      expect(last.withdrawals_root).toBe(canonical.withdrawalsRoot);
      expect(last.block_hash).toBe(canonical.hash);
      expect(rpcHeaderHash(canonical as unknown as HeaderFields), 'the header hash the middle flashblocks use, checked on EDR').toBe(
        canonical.hash,
      );
      // Every flashblock's receipts_root, gas_used and logs_bloom are those of the block so far (the
      // middle ones are computed, not mined: block-building.ts); a middle one with new transactions carries state_root zero.
      const receipts = await rpc<RpcConsensusReceipt[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [canonical.number]);
      let count = 0;
      for (const frame of frames) {
        count += frame.diff.transactions.length;
        expect(frame.diff.receipts_root).toBe(await receiptsRoot(receipts.slice(0, count).map(fromRpcReceipt)));
        expect(BigInt(frame.diff.gas_used)).toBe(count === 0 ? 0n : BigInt(receipts[count - 1]!.cumulativeGasUsed));
        expect(frame.diff.logs_bloom).toBe(logsBloom(receipts.slice(0, count).flatMap((receipt) => receipt.logs)));
        if (frame.index > 0 && frame !== frames.at(-1) && frame.diff.transactions.length > 0)
          expect(frame.diff.state_root).toBe(`0x${'0'.repeat(64)}`);
      }
      expect(block.header.parentHash).toBe(
        (await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${(number - 1n).toString(16)}`, false])).hash,
      );
      // gas_used is running: it never decreases within a block.
      const gas = frames.map((frame) => BigInt(frame.diff.gas_used));
      expect(gas).toEqual([...gas].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      preconfirmed.push(...block.transactions.map((tx) => tx.hash));
    }
    expect(complete).toBeGreaterThanOrEqual(3);
    // The EVM holds trial blocks beyond the sealed head between flashblocks; JSON-RPC never shows them.
    const head = await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
    expect(await rpc<Hex>(devnet.rpcUrl, 'eth_blockNumber', [])).toBe(head.number);
    expect(await rpc(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${(BigInt(head.number) + 1n).toString(16)}`, false])).toBeNull();
    // Every transfer sent was pre-confirmed in some flashblock (they are all sealed by now, and an
    // index 0 was received before the first was sent).
    expect(sent.filter((hash) => !preconfirmed.includes(hash))).toEqual([]);
    // The transfers arrive ~1 per flashblock: they are spread over several indices, not one.
    const indicesWithUserTxs = feed.frames.filter((frame) => frame.flashblock.index > 0 && frame.flashblock.diff.transactions.length > 0);
    expect(indicesWithUserTxs.length).toBeGreaterThan(3);
  });

  it('keeps log and block filters as of the sealed head: every log once, none from a trial block', async () => {
    devnet = await createDevnet({ ...FAST, load: 40 });
    const logFilter = await rpc<Hex>(devnet.rpcUrl, 'eth_newFilter', [{}]);
    const blockFilter = await rpc<Hex>(devnet.rpcUrl, 'eth_newBlockFilter', []);
    const created = BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_blockNumber'));
    const logs: { blockNumber: Hex; blockHash: Hex; logIndex: Hex }[] = [];
    const hashes: Hex[] = [];
    let polledUpTo = created;
    for (let polls = 0; polls < 60 && (polls < 40 || logs.length === 0); polls++) {
      polledUpTo = BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_blockNumber'));
      logs.push(...(await rpc<typeof logs>(devnet.rpcUrl, 'eth_getFilterChanges', [logFilter])));
      hashes.push(...(await rpc<Hex[]>(devnet.rpcUrl, 'eth_getFilterChanges', [blockFilter])));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(logs.length, 'the load emits Transfer logs').toBeGreaterThan(0);
    const key = (log: (typeof logs)[number]) => `${log.blockHash}:${BigInt(log.logIndex)}`;
    expect(new Set(logs.map(key)).size, 'each log once').toBe(logs.length);
    for (const log of logs) {
      const block = await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', [log.blockNumber, false]);
      expect(log.blockHash, 'a sealed block, not a trial one').toBe(block.hash);
    }
    // Every log of the blocks sealed after the filter, up to the last poll's head, was reported.
    const expected = await rpc<typeof logs>(devnet.rpcUrl, 'eth_getLogs', [
      { fromBlock: `0x${(created + 1n).toString(16)}`, toBlock: `0x${polledUpTo.toString(16)}` },
    ]);
    expect(logs.filter((log) => BigInt(log.blockNumber) <= polledUpTo).map(key)).toEqual(expected.map(key));
    expect(hashes.length).toBeGreaterThan(0);
    for (const [i, hash] of hashes.entries()) {
      const block = await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${(created + 1n + BigInt(i)).toString(16)}`, false]);
      expect(hash, 'block filter: consecutive sealed blocks').toBe(block.hash);
    }
    expect(await rpc(devnet.rpcUrl, 'eth_uninstallFilter', [logFilter])).toBe(true);
    await expect(rpc(devnet.rpcUrl, 'eth_getFilterChanges', [logFilter])).rejects.toThrow(/filter not found/);
  });

  it('serves eth_getBlockReceipts as the receipts of the block, in order', async () => {
    devnet = await createDevnet(FAST);
    const sealed = sealedBlocks(devnet, 3);
    await sendTransfers(devnet, 1, 4, 50);
    await sealed;
    const head = await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
    let withTxs: RpcBlock | undefined;
    for (let n = BigInt(head.number); n > 0n && !withTxs; n--) {
      const block = await rpc<RpcBlock>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
      if (block.transactions.length > 1) withTxs = block;
    }
    expect(withTxs).toBeTruthy();
    const byNumber = await rpc<{ transactionHash: Hex; cumulativeGasUsed: Hex; l1Fee?: Hex }[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [
      withTxs!.number,
    ]);
    const byHash = await rpc<unknown[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [withTxs!.hash]);
    expect(byNumber.map((receipt) => receipt.transactionHash)).toEqual(withTxs!.transactions);
    expect(byHash).toEqual(byNumber);
    for (const [i, hash] of withTxs!.transactions.entries()) {
      expect(byNumber[i]).toEqual(await rpc(devnet.rpcUrl, 'eth_getTransactionReceipt', [hash]));
    }
    expect(byNumber.at(-1)!.cumulativeGasUsed).toBe(withTxs!.gasUsed);
    // The OP fields: user transactions pay an L1 data fee.
    expect(BigInt(byNumber.at(-1)!.l1Fee ?? '0x0')).toBeGreaterThan(0n);
    expect(await rpc(devnet.rpcUrl, 'eth_getBlockReceipts', ['0xffffff'])).toBeNull();
  });

  it('sends text frames with --plain, and type-tagged receipts with --metadata-receipts', async () => {
    devnet = await createDevnet({ ...FAST, plain: true, metadataReceipts: true });
    const feed = await subscribe(devnet.wsUrl);
    const sealed = sealedBlocks(devnet, 2);
    const sent = await sendTransfers(devnet, 2, 3, 100);
    await caughtUp(feed, (await sealed).at(-1)!);
    feed.close();
    expect(feed.failures).toEqual([]);
    expect(feed.frames.length).toBeGreaterThan(0);
    expect(feed.frames.every((frame) => !frame.binary)).toBe(true);
    const receipts = Object.assign({}, ...feed.frames.map((frame) => frame.flashblock.metadata.receipts ?? {})) as Record<
      string,
      { type: string; status: unknown; cumulativeGasUsed: string }
    >;
    for (const hash of sent) {
      const canonical = await rpc<{ type: Hex; status: Hex; cumulativeGasUsed: Hex }>(devnet.rpcUrl, 'eth_getTransactionReceipt', [hash]);
      expect(receipts[hash]).toMatchObject({
        type: canonical.type,
        status: canonical.status,
        cumulativeGasUsed: canonical.cumulativeGasUsed,
      });
    }
    const deposit = feed.frames.find((frame) => frame.flashblock.index === 0)!;
    const depositReceipt = Object.values(deposit.flashblock.metadata.receipts ?? {})[0] as
      { type: string; depositNonce?: string } | undefined;
    expect(depositReceipt?.type).toBe('0x7e');
    expect(depositReceipt?.depositNonce).toBeDefined();
  });

  it('with --reorg-every seals a block without one of its pre-confirmed transactions, then includes it later', async () => {
    devnet = await createDevnet({ ...FAST, reorgEvery: 2 });
    const feed = await subscribe(devnet.wsUrl);
    const dropped: Hex[] = [];
    devnet.onSealed((block) => {
      if (block.dropped) dropped.push(block.dropped);
    });
    const sealed = sealedBlocks(devnet, 5);
    await sendTransfers(devnet, 3, 24, 100);
    await sealed;
    await new Promise((resolve) => setTimeout(resolve, 700)); // the last dropped tx lands one block later
    feed.close();
    expect(dropped.length).toBeGreaterThan(0);
    const blocks = assemble(feed.frames);
    let reorgs = 0;
    for (const [number, { block, frames }] of blocks) {
      const canonical = await rpc<RpcBlock | null>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      if (!canonical) continue;
      const pre = block.transactions.map((tx) => tx.hash);
      if (number % 2n === 0n) {
        // The second half of a block to be replaced takes no new transaction (600 ms blocks of six
        // 100 ms flashblocks: indexes 3 to 6), so the one it leaves out was pre-confirmed at least
        // 300 ms before the seal: a gateway serves the version it withdraws for that long.
        expect(frames.filter((frame) => frame.index >= 3 && frame.diff.transactions.length > 0).map((frame) => frame.index)).toEqual([]);
      }
      if (number % 2n === 0n && pre.length > 1) {
        reorgs += 1;
        expect(canonical.transactions).toEqual(pre.slice(0, -1));
        expect(canonical.hash).not.toBe(block.header.flashblockHash);
        expect(dropped).toContain(pre.at(-1));
      } else {
        expect(canonical.transactions).toEqual(pre);
      }
    }
    expect(reorgs).toBeGreaterThan(0);
    // A left-out transaction is not lost: it is mined in a later block.
    const receipt = await rpc<{ status: Hex; blockNumber: Hex } | null>(devnet.rpcUrl, 'eth_getTransactionReceipt', [dropped[0]]);
    expect(receipt?.status).toBe('0x1');
  });

  it('queues a deposit sent with eth_sendRawTransaction for index 0 of the next block, and refuses a malformed one', async () => {
    devnet = await createDevnet(FAST);
    const feed = await subscribe(devnet.wsUrl);
    const from: Hex = '0x00000000000000000000000000000000000d0e05';
    const raw = encodeDeposit({
      sourceHash: keccak256(toHex('test deposit')),
      from,
      to: devnet.accounts[0]!.address,
      mint: 10n ** 18n,
      value: 0n,
      gas: 100_000n,
      isSystemTx: false,
      data: '0x',
    });
    const hash = await rpc<Hex>(devnet.rpcUrl, 'eth_sendRawTransaction', [raw]);
    await until(() => feed.frames.some((frame) => frame.flashblock.diff.transactions.includes(raw)), 3000);
    const carrying = feed.frames.find((frame) => frame.flashblock.diff.transactions.includes(raw))!;
    feed.close();
    expect(carrying.flashblock.index).toBe(0);
    expect(carrying.flashblock.diff.transactions.indexOf(raw)).toBe(1); // after the L1-attributes deposit
    const sealedAt = BigInt(carrying.flashblock.metadata.block_number);
    const receipt = await (async () => {
      for (let i = 0; i < 100; i++) {
        const found = await rpc<{ type: Hex; status: Hex; blockNumber: Hex } | null>(devnet!.rpcUrl, 'eth_getTransactionReceipt', [hash]);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return null;
    })();
    expect(receipt).toMatchObject({ type: '0x7e', status: '0x1', blockNumber: `0x${sealedAt.toString(16)}` });
    expect(BigInt(await rpc<Hex>(devnet.rpcUrl, 'eth_getBalance', [from, 'latest']))).toBe(10n ** 18n); // minted
    await expect(rpc(devnet.rpcUrl, 'eth_sendRawTransaction', ['0x7e0102'])).rejects.toThrow(/deposit \(0x7e\)/);
    const again = encodeDeposit({
      sourceHash: keccak256(toHex('test deposit 2')),
      from,
      to: null,
      mint: 0n,
      value: 0n,
      gas: 100_000n,
      isSystemTx: false,
      data: '0x',
    });
    await expect(rpc(devnet.rpcUrl, 'eth_sendRawTransaction', [again])).rejects.toThrow(
      /has nonce 1; the devnet \(EDR\) takes deposits only from accounts with nonce 0/,
    );
  });

  it('keeps the L1-attributes deposit first when a full block leaves transactions in the mempool', async () => {
    // A 1M-gas block holds the L1-attributes deposit (~50k gas used) and about 45 transfers: 80
    // sent at once overflow into the next block.
    devnet = await createDevnet({ ...FAST, blockGasLimit: 1_000_000n });
    const feed = await subscribe(devnet.wsUrl);
    await until(() => feed.frames.some((frame) => frame.flashblock.index === 0));
    const sent = await sendTransfers(devnet, 5, 80, 0);
    const numbers = await sealedBlocks(devnet, 4);
    await caughtUp(feed, numbers.at(-1)!);
    feed.close();
    const mined: Hex[] = [];
    const blockSizes: number[] = [];
    for (const [number, { block }] of assemble(feed.frames)) {
      const canonical = await rpc<RpcBlock | null>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      if (!canonical) continue;
      expect(block.transactions.map((tx) => tx.hash)).toEqual(canonical.transactions);
      expect(block.transactions[0]!.raw.startsWith('0x7e')).toBe(true);
      expect(block.transactions.slice(1).every((tx) => !tx.raw.startsWith('0x7e'))).toBe(true);
      mined.push(...canonical.transactions);
      blockSizes.push(canonical.transactions.length);
    }
    expect(blockSizes.filter((size) => size > 30).length).toBeGreaterThanOrEqual(2); // it did overflow
    expect(sent.every((hash) => mined.includes(hash))).toBe(true);
  });

  it('refuses to replace a pre-confirmed transaction, and the sealed block keeps the pre-confirmed one in its place', async () => {
    devnet = await createDevnet(FAST);
    const feed = await subscribe(devnet.wsUrl);
    await until(() => feed.frames.some((frame) => frame.flashblock.index === 0));
    const account = privateKeyToAccount(devnet.accounts[6]!.privateKey);
    const other = privateKeyToAccount(devnet.accounts[7]!.privateKey);
    const sign = (signer: typeof account, nonce: number, tip: bigint) =>
      signer.signTransaction({
        chainId: 1337,
        type: 'eip1559',
        nonce,
        to: devnet!.accounts[0]!.address,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 10n ** 10n + tip * 20n,
        maxPriorityFeePerGas: tip,
      }); // a higher tip also raises the fee cap, as a replacement must
    const first = await rpc<Hex>(devnet.rpcUrl, 'eth_sendRawTransaction', [await sign(account, 0, 1n)]);
    const neighbour = await rpc<Hex>(devnet.rpcUrl, 'eth_sendRawTransaction', [await sign(other, 0, 1n)]);
    const preconfirmed = () => feed.frames.flatMap((frame) => frame.flashblock.diff.transactions);
    await until(() => preconfirmed().length >= 3, 3000); // the deposit, then both
    await expect(rpc(devnet.rpcUrl, 'eth_sendRawTransaction', [await sign(account, 0, 10n ** 9n)])).rejects.toThrow(
      /replacement transaction refused: 0x[0-9a-f]{64} has the same sender and nonce and is already pre-confirmed/,
    );
    const after = await rpc<Hex>(devnet.rpcUrl, 'eth_sendRawTransaction', [await sign(account, 1, 1n)]);
    // A transaction not yet pre-confirmed may be replaced, as in any mempool. The flashblock
    // boundary is controlled, not raced: both are sent just after a flashblock went out, and the
    // devnet's answer says which side of the next one the replacement fell on. Refused, the candidate
    // must be pre-confirmed by then (a loaded machine let a tick in between): again, next nonce.
    const nextFlashblock = () =>
      new Promise<void>((resolve) => {
        const stop = devnet!.onFlashblock(() => {
          stop();
          resolve();
        });
      });
    let waiting: Hex | undefined;
    let replacement: Hex | undefined;
    for (let nonce = 1; replacement === undefined; nonce++) {
      expect(nonce, 'the replacement fell behind a flashblock every time').toBeLessThanOrEqual(5);
      await nextFlashblock();
      const candidate = await rpc<Hex>(devnet.rpcUrl, 'eth_sendRawTransaction', [await sign(other, nonce, 1n)]);
      try {
        replacement = await rpc<Hex>(devnet.rpcUrl, 'eth_sendRawTransaction', [await sign(other, nonce, 10n ** 9n)]);
        waiting = candidate;
      } catch (error) {
        // Pre-confirmed in the block being built, or already sealed with it (then its nonce is too low).
        expect(String(error)).toMatch(
          /replacement transaction refused: 0x[0-9a-f]{64} has the same sender and nonce and is already pre-confirmed|nonce too low/,
        );
        await until(() => preconfirmed().some((raw) => keccak256(raw as Hex) === candidate), 3000);
      }
    }
    const numbers = await sealedBlocks(devnet, 2);
    await caughtUp(feed, numbers.at(-1)!);
    feed.close();
    const mined: Hex[] = [];
    for (const [number, { block }] of assemble(feed.frames)) {
      const canonical = await rpc<RpcBlock | null>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      if (!canonical) continue;
      expect(block.transactions.map((tx) => tx.hash)).toEqual(canonical.transactions);
      mined.push(...canonical.transactions);
    }
    const user = mined.filter((hash) => [first, neighbour, after, waiting!, replacement].includes(hash));
    expect(user.slice(0, 2)).toEqual([first, neighbour]);
    expect(user).toContain(after);
    expect(user).toContain(replacement);
    expect(user).not.toContain(waiting);
  });

  it('answers JSON-RPC with jsonrpc and id, batches, and clear errors', async () => {
    devnet = await createDevnet(FAST);
    const post = async (body: string) => {
      const response = await fetch(devnet!.rpcUrl, { method: 'POST', body });
      return { status: response.status, body: await response.text() };
    };
    expect(JSON.parse((await post('{"jsonrpc":"2.0","id":"abc","method":"eth_chainId","params":[]}')).body)).toEqual({
      jsonrpc: '2.0',
      id: 'abc',
      result: '0x539',
    });
    const batch = JSON.parse(
      (
        await post(
          '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]},{"jsonrpc":"2.0","id":3,"method":"evm_mine","params":[]}]',
        )
      ).body,
    ) as { id: number; result?: unknown; error?: { code: number; message: string } }[];
    expect(batch.map((item) => item.id)).toEqual([1, 2, 3]);
    expect(batch[0]!.result).toBe('0x539');
    expect(batch[1]!.result).toMatch(/^0x[0-9a-f]+$/);
    expect(batch[2]!.error).toMatchObject({ code: -32601, message: expect.stringContaining('evm_mine is not served by the devnet') });
    expect(JSON.parse((await post('{not json')).body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(JSON.parse((await post('{"jsonrpc":"2.0","id":5,"method":"eth_sendRawTransaction","params":["0xzz"]}')).body)).toMatchObject({
      id: 5,
      error: { code: -32602, message: expect.stringContaining('params[0]') },
    });
    expect(JSON.parse((await post('{"jsonrpc":"2.0","id":6,"method":"eth_getBlockReceipts","params":["soon"]}')).body)).toMatchObject({
      id: 6,
      error: { code: -32602 },
    });
    const badNonce = JSON.parse(
      (
        await post(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 7,
            method: 'eth_sendRawTransaction',
            params: [
              await privateKeyToAccount(devnet.accounts[4]!.privateKey).signTransaction({
                chainId: 1337,
                type: 'eip1559',
                nonce: 5,
                to: devnet.accounts[0]!.address,
                gas: 21_000n,
                maxFeePerGas: 10n ** 10n,
                maxPriorityFeePerGas: 1n,
              }),
            ],
          }),
        )
      ).body,
    );
    // A nonce gap is accepted into the mempool (held until the gap fills), as on a node.
    expect(badNonce).toMatchObject({ jsonrpc: '2.0', id: 7, result: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const wrongChain = JSON.parse(
      (
        await post(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 8,
            method: 'eth_sendRawTransaction',
            params: [
              await privateKeyToAccount(devnet.accounts[4]!.privateKey).signTransaction({
                chainId: 8453,
                type: 'eip1559',
                nonce: 0,
                to: devnet.accounts[0]!.address,
                gas: 21_000n,
                maxFeePerGas: 10n ** 10n,
                maxPriorityFeePerGas: 1n,
              }),
            ],
          }),
        )
      ).body,
    );
    expect(wrongChain).toMatchObject({ jsonrpc: '2.0', id: 8, error: { message: expect.any(String) } });
    expect((await fetch(devnet.rpcUrl)).status).toBe(405);
  });
});
