import { createBlock } from '@ethereumjs/block';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createTxFromRLP } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes, keccak256, numberToHex, parseTransaction, sha256, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serializeTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { schemaErrors } from '../../test/helpers/openrpc-schema.ts';
import { headerHash, headerToRpc, type BlockHeader } from '../../src/op/header.ts';
import { goEthereumSize, pendingBlockAsLatest, shapeHeader, shapeTransaction } from './op-geth-shape.ts';

/**
 * The devnet's answers in op-geth's shape: transactions as EDR shapes them (built here from
 * transactions signed by viem) held against the execution-apis schemas and op-geth's rules, and
 * the block size against @ethereumjs/block's serialisation (an implementation that, like
 * go-ethereum, counts a typed transaction's RLP string header).
 */
const CHAIN_ID = 1337;
const account = privateKeyToAccount(generatePrivateKey());
const other = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex;
const blockHash = keccak256(toHex('a block'));
const BLOCK_TIMESTAMP = numberToHex(1_780_000_000);
type Json = Record<string, unknown>;

async function signed(request: Record<string, unknown>): Promise<Hex> {
  return account.signTransaction({ to: other, value: 7n, gas: 50_000n, nonce: 3, ...request } as never);
}

/** A transaction object as EDR answers it: no `yParity`, no `chainId` on legacy, no `blockTimestamp`. */
function asEdr(raw: Hex, mined = true): Json {
  const tx = parseTransaction(raw) as Record<string, unknown> & { type: string };
  const type = { legacy: '0x0', eip2930: '0x1', eip1559: '0x2' }[tx.type]!;
  const out: Json = {
    hash: keccak256(raw),
    nonce: numberToHex(tx.nonce as number),
    blockHash: mined ? blockHash : null,
    blockNumber: mined ? '0x4' : null,
    transactionIndex: mined ? '0x1' : null,
    from: account.address.toLowerCase(),
    to: tx.to,
    value: numberToHex(tx.value as bigint),
    gasPrice: numberToHex((tx.gasPrice as bigint | undefined) ?? 1_000_000n),
    gas: numberToHex(tx.gas as bigint),
    input: '0x',
    type,
  };
  if (type !== '0x0') Object.assign(out, { chainId: numberToHex(CHAIN_ID), accessList: tx.accessList ?? [] });
  if (type === '0x2') Object.assign(out, { maxFeePerGas: numberToHex(tx.maxFeePerGas as bigint), maxPriorityFeePerGas: '0x3e8' });
  out.v = type === '0x0' ? numberToHex(tx.v as bigint) : numberToHex(tx.yParity as number);
  out.r = numberToHex(BigInt(tx.r as Hex));
  out.s = numberToHex(BigInt(tx.s as Hex));
  return out;
}

function deposit(mint: bigint, isSystemTx: boolean): { raw: Hex; edr: Json } {
  const fields = {
    type: 'deposit' as const,
    sourceHash: keccak256(toHex(`source ${mint}`)),
    from: account.address,
    to: other,
    mint,
    value: 0n,
    gas: 1_000_000n,
    isSystemTx,
    data: '0x' as Hex,
  };
  const raw = serializeTransaction(fields);
  const edr: Json = {
    hash: keccak256(raw),
    nonce: '0x0',
    blockHash,
    blockNumber: '0x4',
    transactionIndex: '0x0',
    from: account.address.toLowerCase(),
    to: other,
    value: '0x0',
    gasPrice: '0x0',
    gas: numberToHex(fields.gas),
    input: '0x',
    type: '0x7e',
    accessList: [],
    maxFeePerGas: '0x0',
    maxPriorityFeePerGas: '0x0',
    sourceHash: fields.sourceHash,
    mint: numberToHex(mint),
    isSystemTx,
  };
  return { raw, edr };
}

describe('shapeTransaction (op-geth newRPCTransaction)', () => {
  it('a deposit: v, r, s, gasPrice 0x0, no fee-market fields, no zero mint or false isSystemTx, nonce and version from its receipt', () => {
    const { edr } = deposit(0n, false);
    expect(schemaErrors('eth_getTransactionByHash', edr)).not.toEqual([]);
    const shaped = shapeTransaction(edr, {
      blockTimestamp: BLOCK_TIMESTAMP,
      depositReceipt: { depositNonce: '0x5', depositReceiptVersion: '0x1' },
    });
    expect(schemaErrors('eth_getTransactionByHash', shaped)).toEqual([]);
    expect(shaped).toMatchObject({ v: '0x0', r: '0x0', s: '0x0', gasPrice: '0x0', nonce: '0x5', depositReceiptVersion: '0x1' });
    expect(shaped.blockTimestamp).toBe(BLOCK_TIMESTAMP);
    for (const field of ['accessList', 'maxFeePerGas', 'maxPriorityFeePerGas', 'chainId', 'yParity', 'mint', 'isSystemTx'])
      expect(shaped, field).not.toHaveProperty(field);
  });

  it('a deposit that mints, or a system deposit, keeps mint and isSystemTx: true', () => {
    const shaped = shapeTransaction(deposit(10n ** 18n, true).edr);
    expect(shaped.mint).toBe(numberToHex(10n ** 18n));
    expect(shaped.isSystemTx).toBe(true);
    expect(schemaErrors('eth_getTransactionByHash', { ...shaped, blockTimestamp: BLOCK_TIMESTAMP })).toEqual([]);
  });

  it('typed transactions get yParity equal to v; a mined one its blockTimestamp', async () => {
    for (const request of [
      { type: 'eip2930', chainId: CHAIN_ID, gasPrice: 10n ** 9n, accessList: [{ address: other, storageKeys: [] }] },
      { type: 'eip1559', chainId: CHAIN_ID, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1000n },
    ]) {
      const edr = asEdr(await signed(request));
      expect(schemaErrors('eth_getTransactionByHash', edr)).not.toEqual([]);
      const shaped = shapeTransaction(edr, { blockTimestamp: BLOCK_TIMESTAMP });
      expect(shaped.yParity).toBe(edr.v);
      expect(shaped.blockTimestamp).toBe(BLOCK_TIMESTAMP);
      expect(schemaErrors('eth_getTransactionByHash', shaped)).toEqual([]);
    }
  });

  it('a legacy transaction has chainId when signed under EIP-155 (from v), none when signed before it', async () => {
    const protectedTx = shapeTransaction(asEdr(await signed({ type: 'legacy', chainId: CHAIN_ID, gasPrice: 10n ** 9n })), {
      blockTimestamp: BLOCK_TIMESTAMP,
    });
    expect(protectedTx.chainId).toBe(numberToHex(CHAIN_ID));
    expect(protectedTx).not.toHaveProperty('yParity');
    expect(schemaErrors('eth_getTransactionByHash', protectedTx)).toEqual([]);
    const unprotected = shapeTransaction(asEdr(await signed({ type: 'legacy', gasPrice: 10n ** 9n })), { blockTimestamp: BLOCK_TIMESTAMP });
    expect(['0x1b', '0x1c']).toContain(unprotected.v);
    expect(unprotected).not.toHaveProperty('chainId');
  });

  it('a fee-market transaction not yet in a block: gasPrice is maxFeePerGas, no blockTimestamp', async () => {
    const edr = asEdr(await signed({ type: 'eip1559', chainId: CHAIN_ID, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1000n }), false);
    const shaped = shapeTransaction(edr, { blockTimestamp: BLOCK_TIMESTAMP });
    expect(shaped.gasPrice).toBe(numberToHex(10n ** 10n));
    expect(shaped).not.toHaveProperty('blockTimestamp');
    expect(shaped.yParity).toBe(edr.v);
  });
});

describe('goEthereumSize', () => {
  const common = new Common({ chain: { ...Mainnet, chainId: CHAIN_ID, name: 'devnet' }, hardfork: Hardfork.Prague });
  const header: BlockHeader = {
    parentHash: keccak256(toHex('parent')),
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    miner: other,
    stateRoot: keccak256(toHex('state')),
    transactionsRoot: keccak256(toHex('transactions')),
    receiptsRoot: keccak256(toHex('receipts')),
    logsBloom: bytesToHex(new Uint8Array(256)),
    difficulty: 0n,
    number: 4n,
    gasLimit: 60_000_000n,
    gasUsed: 123_456n,
    timestamp: 1_780_000_000n,
    extraData: '0x00000000fa00000006',
    mixHash: keccak256(toHex('randao')),
    nonce: '0x0000000000000000',
    baseFeePerGas: 1_000_000n,
    withdrawalsRoot: keccak256(toHex('withdrawals')),
    blobGasUsed: 0n,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: keccak256(toHex('beacon')),
    requestsHash: sha256('0x'),
  };

  it("is @ethereumjs/block's serialised length (typed transactions as byte strings, their string header counted)", async () => {
    const raws = [
      await signed({ type: 'legacy', chainId: CHAIN_ID, gasPrice: 10n ** 9n, nonce: 1 }),
      await signed({
        type: 'eip2930',
        chainId: CHAIN_ID,
        gasPrice: 10n ** 9n,
        nonce: 2,
        accessList: [{ address: other, storageKeys: [] }],
      }),
      await signed({ type: 'eip1559', chainId: CHAIN_ID, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1000n, nonce: 3 }),
      await signed({ type: 'eip1559', chainId: CHAIN_ID, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1000n, nonce: 4 }),
    ];
    const block = {
      ...headerToRpc(header),
      hash: headerHash(header),
      size: '0x1',
      totalDifficulty: '0x0',
      uncles: [],
      withdrawals: [],
      transactions: raws.map((raw) => asEdr(raw)),
    };
    const reference = createBlock(
      {
        header: {
          ...headerToRpc(header),
          coinbase: header.miner,
          uncleHash: header.sha3Uncles,
          transactionsTrie: header.transactionsRoot,
          receiptTrie: header.receiptsRoot,
        },
        transactions: raws.map((raw) => createTxFromRLP(hexToBytes(raw), { common })),
        withdrawals: [],
      } as never,
      { common, skipConsensusFormatValidation: true },
    );
    expect(bytesToHex(reference.hash())).toBe(block.hash); // the same header on both sides
    const size = goEthereumSize(block);
    expect(size).toBe(numberToHex(reference.serialize().length));
    // The same shaped (what the devnet answers) rebuilds to the same size.
    expect(goEthereumSize({ ...block, transactions: block.transactions.map((tx) => shapeTransaction(tx)) })).toBe(size);
  });

  it('gives nothing (EDR size kept) for a block whose header does not hash to its hash, or with transaction hashes only', async () => {
    const raw = await signed({ type: 'eip1559', chainId: CHAIN_ID, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1000n });
    const base = { ...headerToRpc(header), withdrawals: [], transactions: [asEdr(raw)] };
    expect(goEthereumSize({ ...base, hash: keccak256(toHex('another')) })).toBeUndefined();
    expect(goEthereumSize({ ...base, hash: headerHash(header), transactions: [keccak256(raw)] })).toBeUndefined();
  });
});

describe('shapeHeader', () => {
  it("is go-ethereum's newHeads header: no body, size or totalDifficulty", () => {
    const header = shapeHeader({
      number: '0x4',
      hash: blockHash,
      size: '0x10',
      totalDifficulty: '0x0',
      uncles: [],
      withdrawals: [],
      transactions: [],
    });
    expect(header).toEqual({ number: '0x4', hash: blockHash });
  });
});

describe('pendingBlockAsLatest', () => {
  it("reads the latest block where a block is read at pending (op-geth's default), and leaves state reads alone", () => {
    expect(pendingBlockAsLatest('eth_getBlockByNumber', ['pending', true])).toEqual(['latest', true]);
    expect(pendingBlockAsLatest('eth_getBlockReceipts', ['pending'])).toEqual(['latest']);
    expect(pendingBlockAsLatest('eth_getTransactionByBlockNumberAndIndex', ['pending', '0x0'])).toEqual(['latest', '0x0']);
    expect(pendingBlockAsLatest('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'pending' }])).toEqual([
      { fromBlock: '0x1', toBlock: 'latest' },
    ]);
    expect(pendingBlockAsLatest('eth_getTransactionCount', [other, 'pending'])).toEqual([other, 'pending']);
    expect(pendingBlockAsLatest('eth_getBlockByNumber', ['0x4', false])).toEqual(['0x4', false]);
  });
});
