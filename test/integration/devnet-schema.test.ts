import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { rpc, until } from '../helpers/devnet-feed.ts';
import { schemaErrors } from '../helpers/openrpc-schema.ts';

/**
 * The devnet stands in for an OP node, so its own answers must be an OP node's: every answer of
 * both devnets (flashblocks and Denim, under load) held against the execution-apis schemas, with
 * op-geth's OP Stack fields (test/helpers/openrpc-schema.ts). The load sends every kind of
 * transaction the devnet has (deposits, legacy, EIP-2930, EIP-1559), and each kind must be seen.
 * Mempool transactions (no block number) are not in the schemas and are not asked for.
 */
type Json = Record<string, unknown>;
const devnets: Devnet[] = [];
afterAll(async () => {
  for (const devnet of devnets) await devnet.close();
});

interface Checked {
  readonly answers: number;
  readonly violations: string[];
  readonly transactionTypes: Set<string>;
}

async function checkAnswers(devnet: Devnet, blocks: number): Promise<Checked> {
  const violations: string[] = [];
  const transactionTypes = new Set<string>();
  let answers = 0;
  const ask = async <T = unknown>(method: string, params: unknown[]): Promise<T> => {
    const result = await rpc<T>(devnet.rpcUrl, method, params);
    const errors = schemaErrors(method, result);
    answers++;
    if (errors && errors.length > 0) violations.push(`${method} ${JSON.stringify(params).slice(0, 90)}: ${errors.slice(0, 4).join('; ')}`);
    return result;
  };
  const head = BigInt(await ask<string>('eth_blockNumber', []));
  for (let number = head - BigInt(blocks) + 1n; number <= head; number++) {
    const tag = `0x${number.toString(16)}`;
    const block = await ask<Json & { hash: string; transactions: Json[] }>('eth_getBlockByNumber', [tag, true]);
    await ask('eth_getBlockByNumber', [tag, false]);
    await ask('eth_getBlockByHash', [block.hash, true]);
    await ask('eth_getBlockTransactionCountByNumber', [tag]);
    await ask('eth_getBlockTransactionCountByHash', [block.hash]);
    await ask('eth_getBlockReceipts', [tag]);
    await ask('eth_getLogs', [{ fromBlock: tag, toBlock: tag }]);
    for (const [index, tx] of block.transactions.entries()) {
      if (transactionTypes.has(tx.type as string) && index > 2) continue;
      transactionTypes.add(tx.type as string);
      await ask('eth_getTransactionByHash', [tx.hash]);
      await ask('eth_getTransactionByBlockHashAndIndex', [block.hash, `0x${index.toString(16)}`]);
      await ask('eth_getTransactionByBlockNumberAndIndex', [tag, `0x${index.toString(16)}`]);
      await ask('eth_getTransactionReceipt', [tx.hash]);
      await ask('eth_getBalance', [tx.from, tag]);
      await ask('eth_getTransactionCount', [tx.from, tag]);
      if (typeof tx.to === 'string') {
        await ask('eth_getCode', [tx.to, tag]);
        await ask('eth_getStorageAt', [tx.to, '0x0', tag]);
      }
    }
  }
  for (const tag of ['latest', 'pending', 'safe', 'finalized']) {
    await ask('eth_getBlockByNumber', [tag, true]);
    await ask('eth_getBlockByNumber', [tag, false]);
  }
  await ask('eth_chainId', []);
  await ask('eth_gasPrice', []);
  await ask('eth_feeHistory', ['0x4', 'latest', [25, 75]]);
  const call = { from: devnet.accounts[9]!.address, to: devnet.accounts[8]!.address, value: '0x1' };
  await ask('eth_estimateGas', [call]);
  await ask('eth_call', [call, 'latest']);
  return { answers, violations, transactionTypes };
}

describe.concurrent('the devnets answer as an OP node (execution-apis schemas)', () => {
  it('flashblocks devnet: every answer under load, with reorgs, is valid', async () => {
    const devnet = await createDevnet({ load: 20, reorgEvery: 3 });
    devnets.push(devnet);
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    const checked = await checkAnswers(devnet, 3);
    expect(checked.violations).toEqual([]);
    expect([...checked.transactionTypes].sort()).toEqual(['0x0', '0x1', '0x2', '0x7e']);
    expect(checked.answers).toBeGreaterThan(50);
  }, 60_000);

  it('Denim devnet: every answer, and every newHeads header over its WebSocket, is valid', async () => {
    const devnet = await createDevnet({ denim: true, load: 20, reorgEvery: 4 });
    devnets.push(devnet);
    const heads: unknown[] = [];
    const socket = new WebSocket(devnet.wsUrl);
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { params?: { result: unknown } };
      if (message.params) heads.push(message.params.result);
    });
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    await until(() => heads.length >= 15, 20_000);
    socket.close();
    const checked = await checkAnswers(devnet, 10);
    expect(checked.violations).toEqual([]);
    expect([...checked.transactionTypes].sort()).toEqual(['0x0', '0x1', '0x2', '0x7e']);
    const headViolations = heads.flatMap((head) => schemaErrors('newHeads', head) ?? []);
    expect(headViolations).toEqual([]);
    for (const head of heads)
      for (const field of ['size', 'totalDifficulty', 'transactions', 'uncles']) expect(head).not.toHaveProperty(field);
  }, 60_000);
});
