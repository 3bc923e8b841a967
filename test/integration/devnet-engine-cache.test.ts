import { describe, expect, it } from 'vitest';
import { numberToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEngine } from '../../devnet/edr/edr-chain.ts';
import { devnetAccounts } from '../../devnet/edr/devnet.ts';
import { l1AttributesFor } from '../../devnet/edr/producer.ts';

/**
 * The devnet's engine bounds EDR's block state cache (DEVNET_MAX_CACHED_STATES): a state that
 * falls out of it is recomputed from genesis when asked for. Here the bound is 2 states, so every
 * read below of an older block, and every revert to a parent snapshot after trial blocks, goes
 * through that recomputation, and must answer exactly what the chain held.
 */
describe('devnet engine with a bounded state cache', () => {
  it('answers balances at old blocks, blocks and receipts, and reverts past evicted states, exactly', async () => {
    const accounts = devnetAccounts(2);
    const genesisTime = BigInt(Math.floor(Date.now() / 1000));
    const engine = await createEngine({
      chainId: 901n,
      coinbase: '0x4200000000000000000000000000000000000011',
      blockGasLimit: 30_000_000n,
      sameTimestampBlocks: true,
      initialBaseFeePerGas: 1_000_000n,
      genesisTime,
      genesisL1Attributes: l1AttributesFor(0n, genesisTime),
      funded: accounts.map((account) => ({ address: account.address, balance: 10n ** 21n })),
      maxCachedStates: 2,
    });
    expect(process.env.__EDR_MAX_CACHED_STATES, 'the bound is set for the provider only').toBeUndefined();
    const sender = privateKeyToAccount(accounts[0]!.privateKey);
    const recipient = accounts[1]!.address;
    const transfer = (nonce: number, value: bigint) =>
      sender.signTransaction({
        chainId: 901,
        type: 'eip1559',
        to: recipient,
        value,
        gas: 21_000n,
        nonce,
        maxFeePerGas: 10_000_000_000n,
        maxPriorityFeePerGas: 1n,
      });

    const balances: bigint[] = [];
    const hashes: Hex[] = [];
    for (let block = 1; block <= 8; block++) {
      // The devnet's pattern (block-building.ts): trial blocks on top of a snapshot at the parent,
      // dropped by evm_revert, then the block for good.
      for (let trial = 0; trial < 3; trial++) {
        const parent = await engine.call<Hex>('evm_snapshot');
        await engine.call('eth_sendRawTransaction', [await transfer(block - 1, 10n ** 18n)]);
        await engine.call('evm_mine');
        await engine.call('evm_mine');
        expect(await engine.call<boolean>('evm_revert', [parent]), 'back to the parent').toBe(true);
      }
      hashes.push(await engine.call<Hex>('eth_sendRawTransaction', [await transfer(block - 1, BigInt(block))]));
      await engine.call('evm_mine');
      balances.push(BigInt(await engine.call<Hex>('eth_getBalance', [recipient, 'latest'])));
    }

    expect(BigInt(await engine.call<Hex>('eth_blockNumber')), 'reverted trial blocks left no block behind').toBe(8n);
    for (let block = 1; block <= 8; block++) {
      // Each block sent `block` wei: a trial block's 1 ETH never stayed.
      expect(balances[block - 1]! - 10n ** 21n, `balance after block ${block}`).toBe(BigInt((block * (block + 1)) / 2));
      const atBlock = await engine.call<Hex>('eth_getBalance', [recipient, numberToHex(block)]);
      expect(BigInt(atBlock), `eth_getBalance at block ${block}, recomputed`).toBe(balances[block - 1]);
      const nonce = await engine.call<Hex>('eth_getTransactionCount', [sender.address, numberToHex(block)]);
      expect(BigInt(nonce), `nonce at block ${block}`).toBe(BigInt(block));
      const mined = await engine.call<{ transactions: Hex[] }>('eth_getBlockByNumber', [numberToHex(block), false]);
      expect(mined.transactions).toEqual([hashes[block - 1]]);
      const receipt = await engine.call<{ status: Hex; blockNumber: Hex }>('eth_getTransactionReceipt', [hashes[block - 1]]);
      expect(receipt).toMatchObject({ status: '0x1', blockNumber: numberToHex(block) });
    }
  });
});
