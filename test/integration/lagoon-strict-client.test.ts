import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { extendBlock, startBlock, type AssembledBlock } from '../../src/chain/assemble.ts';
import { encodePostExecTx } from '../../src/op/post-exec.ts';
import { createMetadataExecutor } from '../../src/execute/metadata.ts';
import type { RpcReceipt } from '../../src/records/blocks.ts';
import { formatPostExecTransaction } from '../../src/rpc/post-exec.ts';
import { flashblockSchema } from '../../src/schemas/flashblock.ts';
import { withOpGasRefunds } from '../../src/view/post-exec.ts';
import { sharedPath } from '../helpers/shared.ts';
import { goPrograms } from '../helpers/strict-clients.ts';

/**
 * A strict client nobody here wrote reads Lagoon's answers: op-geth's own `core/types`
 * (ethereum-optimism/op-geth v1.101702.3, the strict client's go-ethereum; its `post_exec_tx.go`
 * knows type 0x7D) decodes flashlog's JSON for a post-exec transaction, recomputes its hash and
 * EIP-2718 bytes with its own code and reads its sender as the zero address; and decodes a receipt
 * carrying `opGasRefund` (a field it does not know, so it must ignore it).
 */
let strictclient: string;
beforeAll(() => {
  strictclient = goPrograms().strictclient;
}, 1_500_000);

const decode = (...json: unknown[]) =>
  JSON.parse(execFileSync(strictclient, ['decode', ...json.map((value) => JSON.stringify(value))], { encoding: 'utf8' })) as Record<
    string,
    any
  >;

describe("op-geth's types read flashlog's Lagoon answers", () => {
  it('a post-exec transaction: the same hash and bytes by its own encoder, the zero sender', () => {
    const tx = encodePostExecTx({
      version: 1,
      blockNumber: 35_535_698n,
      gasRefundEntries: [
        { index: 1, gasRefund: 500n },
        { index: 4, gasRefund: 70_000n },
      ],
    });
    for (const blockHash of [null, `0x${'ab'.repeat(32)}`]) {
      const json = formatPostExecTransaction(tx, {
        blockHash,
        blockTimestamp: '0x10',
        blockNumber: 35_535_698n,
        position: 6,
        baseFeePerGas: 252n,
      });
      expect(decode(json)).toEqual({ type: 0x7d, hash: tx.hash, raw: tx.raw, from: '0x0000000000000000000000000000000000000000' });
    }
  });

  it('a refunded receipt with opGasRefund, from a real feed with a post-exec transaction added', async () => {
    const messages = (
      JSON.parse(readFileSync(sharedPath('fixtures/flashblocks/unichain-sepolia-35535698-with-receipts.json'), 'utf8')) as unknown[]
    ).map((m) => flashblockSchema.parse(m));
    const executor = createMetadataExecutor();
    const receipts: RpcReceipt[] = [];
    let block: AssembledBlock | undefined;
    for (const message of messages) {
      block = block ? extendBlock(block, message) : startBlock(message);
      receipts.push(...(await executor.execute(block)).receipts);
    }
    const postExec = encodePostExecTx({ version: 1, blockNumber: block!.blockNumber, gasRefundEntries: [{ index: 1, gasRefund: 500n }] });
    const refunded = withOpGasRefunds(receipts, { hash: postExec.hash, raw: postExec.raw }, false)[1]!;
    expect(refunded.opGasRefund).toBe('0x1f4');
    const postExecJson = formatPostExecTransaction(postExec, {
      blockHash: null,
      blockTimestamp: '0x10',
      blockNumber: block!.blockNumber,
      position: 6,
      baseFeePerGas: 252n,
    });
    const read = decode(postExecJson, refunded);
    expect(read.hash).toBe(postExec.hash);
    expect(read.receipt).toEqual({ type: Number(refunded.type), status: 1, cumulativeGasUsed: Number(refunded.cumulativeGasUsed) });
  });
});
