import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hexToBytes, keccak256, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { parseBlockFixture, type BlockFixture } from '../../src/prover/host/fixture.ts';
import { encodeHeader, headerFromRpc } from '../../src/op/header.ts';
import { decodePostExecTx, encodePostExecTx } from '../../src/op/post-exec.ts';
import { orderedTrieNodes } from '../../src/evm/receipts.ts';
import { reexecuteBlock } from '../../src/prover/enclave/reexecute.ts';
import { crossL2Inbox } from '../../src/evm/op/interop.ts';
import { parseTransaction } from 'viem';
import { CHAIN_ID, user } from '../helpers/lagoon-chain.ts';

/**
 * The Lagoon chain flashlog's engine built (test/fixtures/lagoon-chain, SOURCE.md there), re-executed
 * to its hashes by `flashlog execute-block` and by the enclave's re-execute check (the block's own
 * header and the transactions under its transactionsRoot, the 0x7d one among them); and altered
 * blocks of that chain refused, naming the block rule they break. The chain is the engine's own:
 * no Lagoon client runs here and no upstream Lagoon block vectors were found.
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dir = fileURLToPath(new URL('../fixtures/lagoon-chain/', import.meta.url));
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort((a, b) => Number(a.match(/(\d+)\.json$/)![1]) - Number(b.match(/(\d+)\.json$/)![1]));
const raw = (n: number) => JSON.parse(readFileSync(join(dir, `lagoon-chain-${n}.json`), 'utf8')) as Record<string, any>;
const fixture = (n: number): BlockFixture => parseBlockFixture(raw(n), `lagoon-chain-${n}.json`);

async function executeAltered(n: number, alter: (transactions: Hex[]) => Hex[]) {
  const { block } = fixture(n);
  return executeBlock({ ...block, attributes: { ...block.attributes, transactions: alter([...block.attributes.transactions]) } });
}
const refused = (reason: RegExp) => expect.objectContaining({ code: 'BLOCK_INVALID', message: expect.stringMatching(reason) });

describe('the engine-built Lagoon chain, re-executed', () => {
  it('has six blocks, Lagoon from block 3, post-exec transactions in blocks 4-6', () => {
    expect(files).toEqual(Array.from({ length: 6 }, (_, i) => `lagoon-chain-${i + 1}.json`));
    expect(BigInt(raw(3).payload.timestamp)).toBe(BigInt(raw(3).rollupConfig.lagoon_time));
    const lastTypes = files.map((_, i) => (raw(i + 1).payload.transactions as string[]).at(-1)!.slice(0, 4));
    expect(lastTypes).toEqual(['0x02', '0x02', '0x02', '0x7d', '0x7d', '0x7d']);
  });

  it.each(files)(
    'flashlog execute-block %s reproduces the block hash',
    (name) => {
      const out = spawnSync(process.execPath, [bin, 'execute-block', join(dir, name), '--json'], { encoding: 'utf8' });
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      const n = Number(name.match(/(\d+)\.json$/)![1]);
      expect(JSON.parse(out.stdout)).toMatchObject({
        matches: true,
        differing: [],
        hash: raw(n).expected.blockHash,
        fork: n < 3 ? 'karst' : 'lagoon',
      });
    },
    30_000,
  );

  it("the enclave's re-execute check rebuilds every block from its header and transactions trie, 0x7d included", async () => {
    for (const name of files) {
      const n = Number(name.match(/(\d+)\.json$/)![1]);
      const { block } = fixture(n);
      const parentRlp = encodeHeader(headerFromRpc(raw(n).parentHeader));
      const rlp = encodeHeader(headerFromRpc(raw(n).expected.header));
      expect(keccak256(rlp)).toBe(raw(n).expected.blockHash);
      const witness = new Map(block.witness);
      for (const node of await orderedTrieNodes(block.attributes.transactions)) witness.set(keccak256(node), hexToBytes(node));
      const reexecuted = await reexecuteBlock(block.config, parentRlp, rlp, witness);
      expect(reexecuted.hash).toBe(raw(n).expected.blockHash);
    }
  });

  it('refuses altered Lagoon blocks by rule: a refund changed, the 0x7d dropped or moved, a refund above the EVM gas', async () => {
    const expected = raw(4).expected.blockHash;
    const payload = (txs: Hex[]) => decodePostExecTx(txs.at(-1)!);
    // Another refund amount executes, to another block (the refund is consensus data).
    const other = await executeAltered(4, (txs) => {
      const entries = payload(txs).gasRefundEntries.map((entry) => ({ ...entry, gasRefund: entry.gasRefund + 1n }));
      return [...txs.slice(0, -1), encodePostExecTx({ version: 1, blockNumber: 4n, gasRefundEntries: entries }).raw];
    });
    expect(other.hash).not.toBe(expected);
    expect((await executeAltered(4, (txs) => txs.slice(0, -1))).hash).not.toBe(expected);
    await expect(executeAltered(4, (txs) => [txs[0]!, txs.at(-1)!, ...txs.slice(1, -1)])).rejects.toThrow(refused(/not the last of/));
    await expect(
      executeAltered(6, (txs) => [
        ...txs.slice(0, -1),
        encodePostExecTx({ version: 1, blockNumber: 6n, gasRefundEntries: [{ index: 1, gasRefund: 10n ** 9n }] }).raw,
      ]),
    ).rejects.toThrow(refused(/^transaction 1: SDM refund 1000000000 exceeds the gas the EVM used/));
    // Before Lagoon (block 2) a post-exec transaction is refused.
    await expect(
      executeAltered(2, (txs) => [
        ...txs,
        encodePostExecTx({ version: 1, blockNumber: 2n, gasRefundEntries: [{ index: 1, gasRefund: 1n }] }).raw,
      ]),
    ).rejects.toThrow(refused(/before Lagoon/));
  });

  it('the enclave refuses by name a Lagoon block that executes a cross-chain message (a CrossL2Inbox access-list entry)', async () => {
    const n = 4;
    const { block } = fixture(n);
    // Block 4 with its tx 2 signed again, same nonce and call, declaring an executing message in its access list.
    const original = parseTransaction(block.attributes.transactions[2]!) as { nonce: number; to: Hex; data: Hex; gas: bigint };
    const declared = await user.signTransaction({
      type: 'eip1559',
      chainId: CHAIN_ID,
      nonce: original.nonce,
      to: original.to,
      data: original.data,
      gas: original.gas,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1_000n,
      accessList: [{ address: crossL2Inbox, storageKeys: [`0x03${'22'.repeat(31)}`] }],
    });
    const transactions = block.attributes.transactions.map((tx, i) => (i === 2 ? declared : tx));
    const executed = await executeBlock({ ...block, attributes: { ...block.attributes, transactions } });
    const witness = new Map(block.witness);
    for (const node of await orderedTrieNodes(transactions)) witness.set(keccak256(node), hexToBytes(node));
    const parentRlp = encodeHeader(headerFromRpc(raw(n).parentHeader));
    await expect(reexecuteBlock(block.config, parentRlp, encodeHeader(executed.header), witness)).rejects.toThrow(
      /^L2 block 4: transaction 2 executes a cross-chain message \(CrossL2Inbox access list\)/,
    );
  });
});
