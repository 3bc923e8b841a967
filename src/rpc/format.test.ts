import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { bytesToHex, hexToBigInt, hexToNumber, keccak256, numberToHex, sha256, type Hex } from 'viem';
import { base } from 'viem/chains';
import { parseTransaction, serializeTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { apply, initialViewState, type PendingBlock } from '../view/state.ts';
import { headerFromRpc, headerHash } from '../op/header.ts';
import { orderedTrieRoot } from '../evm/receipts.ts';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';
import { assertSchemaValid, schemaErrors } from '../../test/helpers/openrpc-schema.ts';
import { sharedPath } from '../../test/helpers/shared.ts';
import { createTransactionFormatter, formatPendingBlock, formatTransaction, type ParsedTransaction } from './format.ts';
import { rebuildHeaderFields } from './header-fields.ts';

/** A pending block of the view holding `count` signed transfers. */
async function pendingBlock(number: bigint, count: number, nonce: number): Promise<PendingBlock> {
  const records = blockBuilder(number).flashblock(await signedTransfers(count, nonce));
  const state = apply(initialViewState(), { type: 'record', record: { ...records[0]!, partition: 0, offset: 0n, timestamp: 0 } });
  return state.blocks[0]!;
}

describe('the transaction formatter', () => {
  it('keeps the transactions it formatted for the last few block numbers only (issue 19: its cache grew the heap)', async () => {
    const formatter = createTransactionFormatter(2);
    const blocks = await Promise.all([10n, 11n, 12n].map((number, i) => pendingBlock(number, 2, i * 2)));
    const first = await formatter.transaction(blocks[0]!, 1);
    expect(first).toMatchObject({ blockNumber: '0xa', transactionIndex: '0x1', hash: blocks[0]!.transactions[1]!.hash });
    // Asked again while block 10 is among the last two: the same object, from the cache.
    await formatter.transaction(blocks[1]!, 0);
    expect(await formatter.transaction(blocks[0]!, 1)).toBe(first);
    const eleven = await formatter.transaction(blocks[1]!, 0);
    // Block 12 makes block 10 the third newest: its entries are dropped, block 11's kept.
    await formatter.transaction(blocks[2]!, 0);
    const again = await formatter.transaction(blocks[0]!, 1);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(await formatter.transaction(blocks[1]!, 0)).toBe(eleven);
  });
});

/** A random 1..32-byte signature scalar: small ones are the leading-zero cases (1 in 16 has a leading zero nibble at 32 bytes). */
const scalar = fc
  .bigInt({ min: 1n, max: (1n << 256n) - 1n })
  .chain((max) => fc.bigInt({ min: 1n, max }))
  .map((value) => numberToHex(value, { size: 32 }));
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => bytesToHex(bytes));
const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bytesToHex(bytes));
const uint = (max: bigint) => fc.bigInt({ min: 0n, max });
const chainId = fc.integer({ min: 1, max: 2 ** 32 });

/** A tip above the fee cap is refused by viem's serializer: clamp it. */
const withValidTip = (fields: Record<string, unknown>): Record<string, unknown> =>
  typeof fields.maxFeePerGas === 'bigint' && (fields.maxPriorityFeePerGas as bigint) > fields.maxFeePerGas
    ? { ...fields, maxPriorityFeePerGas: fields.maxFeePerGas }
    : fields;

const typedTransaction = fc
  .oneof(
    fc.record({ type: fc.constant('eip2930' as const), gasPrice: uint(10n ** 12n), accessList: fc.constant([]) }),
    fc.record({ type: fc.constant('eip1559' as const), maxFeePerGas: uint(10n ** 12n), maxPriorityFeePerGas: uint(10n ** 9n) }),
    fc.record({
      type: fc.constant('eip4844' as const),
      maxFeePerGas: uint(10n ** 12n),
      maxPriorityFeePerGas: uint(10n ** 9n),
      maxFeePerBlobGas: uint(10n ** 9n),
      blobVersionedHashes: fc.array(
        hash.map((h) => `0x01${h.slice(4)}` as Hex),
        { minLength: 1, maxLength: 2 },
      ),
    }),
    fc.record({
      type: fc.constant('eip7702' as const),
      maxFeePerGas: uint(10n ** 12n),
      maxPriorityFeePerGas: uint(10n ** 9n),
      authorizationList: fc.array(
        fc.record({ chainId, address, nonce: fc.nat(), yParity: fc.integer({ min: 0, max: 1 }), r: scalar, s: scalar }),
        { minLength: 1, maxLength: 2 },
      ),
    }),
  )
  .map((fields) => withValidTip(fields as Record<string, unknown>));

const place = (blockHash: Hex | null) => ({
  hash: `0x${'ab'.repeat(32)}`,
  from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  blockHash,
  blockTimestamp: '0x6b08511e',
  blockNumber: 12n,
  position: 3,
  baseFeePerGas: 1_000_000n,
});

describe('formatTransaction over random signatures', () => {
  it('typed transactions (1-4): r and s minimal quantities, v equal to yParity, valid by the execution-apis schema and by viem', () => {
    fc.assert(
      fc.property(
        typedTransaction,
        chainId,
        scalar,
        scalar,
        fc.integer({ min: 0, max: 1 }),
        fc.boolean(),
        (fields, id, r, s, yParity, sealed) => {
          const serialized = serializeTransaction(
            { ...fields, chainId: id, nonce: 7, gas: 21_000n, to: '0x4200000000000000000000000000000000000016' } as never,
            { r, s, yParity },
          );
          const object = formatTransaction(
            parseTransaction(serialized) as ParsedTransaction,
            place(sealed ? `0x${'cd'.repeat(32)}` : null),
          );
          expect(object.r).toBe(numberToHex(hexToBigInt(r)));
          expect(object.s).toBe(numberToHex(hexToBigInt(s)));
          expect(object.yParity).toBe(numberToHex(yParity));
          expect(object.v).toBe(object.yParity);
          for (const auth of (object.authorizationList ?? []) as { r: string; s: string }[])
            expect(auth.r).toMatch(/^0x(0|[1-9a-f][0-9a-f]*)$/);
          assertSchemaValid('eth_getTransactionByHash', object);
          // viem reads it back to the transaction that was serialized.
          const read = base.formatters.transaction.format(object as never) as {
            r: Hex;
            s: Hex;
            yParity: number;
            v: bigint;
            chainId: number;
          };
          expect([hexToBigInt(read.r), hexToBigInt(read.s), read.yParity, read.chainId]).toEqual([
            hexToBigInt(r),
            hexToBigInt(s),
            yParity,
            id,
          ]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('legacy transactions: v as signed (27/28, or chainId * 2 + 35 + yParity under EIP-155), no yParity, minimal r and s', () => {
    fc.assert(
      fc.property(fc.option(chainId, { nil: undefined }), scalar, scalar, fc.integer({ min: 0, max: 1 }), (id, r, s, yParity) => {
        const v = id === undefined ? 27n + BigInt(yParity) : BigInt(id) * 2n + 35n + BigInt(yParity);
        const tx = {
          type: 'legacy' as const,
          gasPrice: 5n,
          nonce: 1,
          gas: 21_000n,
          to: '0x4200000000000000000000000000000000000016' as Hex,
          ...(id === undefined ? {} : { chainId: id }),
        };
        const object = formatTransaction(parseTransaction(serializeTransaction(tx, { r, s, v })) as ParsedTransaction, place(null));
        expect(object.v).toBe(numberToHex(v));
        expect(object).not.toHaveProperty('yParity');
        expect(object.chainId).toBe(id === undefined ? undefined : numberToHex(id));
        expect([object.r, object.s]).toEqual([numberToHex(hexToBigInt(r)), numberToHex(hexToBigInt(s))]);
        assertSchemaValid('eth_getTransactionByHash', object);
      }),
      { numRuns: 200 },
    );
  });

  it('deposits as op-geth answers them: v, r, s and gasPrice 0x0, mint only when not zero, isSystemTx only when true, nonce from the receipt', () => {
    fc.assert(
      fc.property(hash, address, uint(10n ** 20n), fc.boolean(), fc.nat(), (sourceHash, from, mint, isSystemTx, depositNonce) => {
        const raw = serializeTransaction({
          type: 'deposit',
          sourceHash,
          from,
          to: '0x4200000000000000000000000000000000000015',
          mint,
          value: 0n,
          gas: 1_000_000n,
          isSystemTx,
          data: '0x1234',
        } as never);
        const receipt = { depositNonce: numberToHex(depositNonce), depositReceiptVersion: '0x1' } as never;
        const object = formatTransaction(parseTransaction(raw) as ParsedTransaction, { ...place(`0x${'cd'.repeat(32)}`), from, receipt });
        expect(object).toMatchObject({
          type: '0x7e',
          sourceHash,
          v: '0x0',
          r: '0x0',
          s: '0x0',
          gasPrice: '0x0',
          nonce: numberToHex(depositNonce),
          depositReceiptVersion: '0x1',
        });
        expect(object.mint).toBe(mint === 0n ? undefined : numberToHex(mint));
        expect(object.isSystemTx).toBe(isSystemTx ? true : undefined);
        expect(object).not.toHaveProperty('yParity');
        expect(object).not.toHaveProperty('chainId');
        assertSchemaValid('eth_getTransactionByHash', object);
        const read = base.formatters.transaction.format(object as never) as { sourceHash: Hex; mint?: bigint; type: string };
        expect([read.type, read.sourceHash, read.mint ?? 0n]).toEqual(['deposit', sourceHash, mint]);
      }),
      { numRuns: 100 },
    );
  });

  it('a transaction of a sealed block (blocks source) carries blockTimestamp; one of a block being built has blockHash null and none', async () => {
    const [tx] = await signedTransfers(1);
    const parsed = parseTransaction(tx!.raw) as ParsedTransaction;
    expect(formatTransaction(parsed, place(`0x${'cd'.repeat(32)}`))).toMatchObject({ blockTimestamp: '0x6b08511e' });
    const pending = formatTransaction(parsed, place(null));
    expect(pending.blockHash).toBeNull();
    expect(pending).not.toHaveProperty('blockTimestamp');
    for (const object of [pending, formatTransaction(parsed, place(`0x${'cd'.repeat(32)}`))])
      assertSchemaValid('eth_getTransactionByHash', object);
    // The schema holds blockTimestamp required once a block hash is there.
    expect(schemaErrors('eth_getTransactionByHash', { ...pending, blockHash: `0x${'cd'.repeat(32)}` })).not.toEqual([]);
  });
});

describe('the pending header of a flashblocks block', () => {
  const fixtures = readdirSync(sharedPath('fixtures/op-blocks')).filter((name) => name.endsWith('.json'));

  it('transactionsRoot by an independent trie equals the real header of every op-blocks fixture; the rebuilt header hashes to the real hash', async () => {
    let checked = 0;
    for (const name of fixtures) {
      const fixture = JSON.parse(readFileSync(sharedPath(`fixtures/op-blocks/${name}`), 'utf8')) as {
        payload: { transactions: Hex[] };
        expected: { blockHash: Hex; header?: Record<string, Hex> };
      };
      const real = fixture.expected.header;
      if (!real) continue;
      const block = pendingOf(real, fixture.expected.blockHash, fixture.payload.transactions);
      const fields = await rebuildHeaderFields(block);
      expect(fields.transactionsRoot, name).toBe(real.transactionsRoot);
      // Before Isthmus (all of these): no requestsHash, and the header without it is the real one.
      expect(fields.requestsHash, name).toBeUndefined();
      expect(fields.exact, name).toBe(true);
      const formatted = await formatPendingBlock(block, false, createTransactionFormatter());
      expect(formatted.transactionsRoot).toBe(real.transactionsRoot);
      expect(formatted.size).toBe(fields.size);
      expect(formatted).not.toHaveProperty('totalDifficulty'); // op-geth's RPCMarshalBlock has none
      assertSchemaValid('eth_getBlockByNumber', formatted);
      checked++;
    }
    expect(checked).toBe(9);
  });

  it('the formatter grows the root flashblock by flashblock: each step equals the trie of that prefix, a new payload starts over', async () => {
    const fixture = JSON.parse(readFileSync(sharedPath('fixtures/op-blocks/op-sepolia-26207962.json'), 'utf8'));
    const real = fixture.expected.header as Record<string, Hex>;
    const all = fixture.payload.transactions as Hex[];
    const formatter = createTransactionFormatter();
    const steps = [1, 5, 5, 17, 30, all.length];
    // Concurrent asks for several steps of one block, as subscribers and calls come.
    const asked = await Promise.all(
      steps.map((count, index) => formatter.headerFields({ ...pendingOf(real, fixture.expected.blockHash, all.slice(0, count)), index })),
    );
    for (const [i, count] of steps.entries()) expect(asked[i]!.transactionsRoot).toBe(await orderedTrieRoot(all.slice(0, count)));
    expect(asked.at(-1)!.transactionsRoot).toBe(real.transactionsRoot);
    // The same height from another payload (a replaced block) with other transactions.
    const other = { ...pendingOf(real, fixture.expected.blockHash, all.slice(2, 9)), payloadId: '0x0000000000000002' };
    expect((await formatter.headerFields(other)).transactionsRoot).toBe(await orderedTrieRoot(all.slice(2, 9)));
    // A shorter list after a longer one (an older step asked late).
    expect(
      (await formatter.headerFields({ ...pendingOf(real, fixture.expected.blockHash, all.slice(0, 3)), index: 9 })).transactionsRoot,
    ).toBe(await orderedTrieRoot(all.slice(0, 3)));
  });

  it('a wrong transaction list gives another root (the root is computed, not copied)', async () => {
    const fixture = JSON.parse(readFileSync(sharedPath('fixtures/op-blocks/op-mainnet-121003241.json'), 'utf8'));
    const real = fixture.expected.header as Record<string, Hex>;
    const fields = await rebuildHeaderFields(pendingOf(real, fixture.expected.blockHash, fixture.payload.transactions.slice(0, -1)));
    expect(fields.transactionsRoot).not.toBe(real.transactionsRoot);
  });

  it('requestsHash once the rebuilt header with it hashes to the builder hash (Isthmus and later)', async () => {
    const fixture = JSON.parse(readFileSync(sharedPath('fixtures/op-blocks/op-sepolia-26207960.json'), 'utf8'));
    const real = fixture.expected.header as Record<string, Hex>;
    const requestsHash = sha256('0x');
    const isthmusHeader = headerFromRpc({ ...real, requestsHash });
    const block = pendingOf(real, headerHash(isthmusHeader), fixture.payload.transactions);
    const fields = await rebuildHeaderFields(block);
    expect(fields.requestsHash).toBe(requestsHash);
    expect(fields.exact).toBe(true);
    const without = await rebuildHeaderFields(pendingOf(real, fixture.expected.blockHash, fixture.payload.transactions));
    expect(hexToNumber(fields.size) - hexToNumber(without.size)).toBe(33);
    // A later flashblock whose builder hash is of another header (a zero state root between
    // flashblocks): the formatter keeps the fork it saw exact at index 0.
    const formatter = createTransactionFormatter();
    expect((await formatter.headerFields(block)).requestsHash).toBe(requestsHash);
    const later = { ...pendingOf(real, `0x${'12'.repeat(32)}`, fixture.payload.transactions.slice(0, 4)), index: 4 };
    const laterFields = await formatter.headerFields(later);
    expect([laterFields.exact, laterFields.requestsHash]).toEqual([false, requestsHash]);
    expect((await rebuildHeaderFields(later)).requestsHash).toBeUndefined();
  });
});

/** A flashblocks pending block holding a real block's header fields and transactions. */
function pendingOf(real: Record<string, Hex>, blockHash: Hex, transactions: Hex[]): PendingBlock {
  return {
    number: BigInt(real.number!),
    index: 3,
    payloadId: '0x0000000000000001',
    header: {
      number: real.number!,
      parentHash: real.parentHash!,
      parentBeaconBlockRoot: real.parentBeaconBlockRoot!,
      miner: real.miner!,
      prevRandao: real.mixHash!,
      gasLimit: real.gasLimit!,
      timestamp: real.timestamp!,
      extraData: real.extraData!,
      baseFeePerGas: real.baseFeePerGas!,
      gasUsed: real.gasUsed!,
      receiptsRoot: real.receiptsRoot!,
      logsBloom: real.logsBloom!,
      stateRoot: real.stateRoot!,
      flashblockHash: blockHash,
      withdrawalsRoot: real.withdrawalsRoot!,
      blobGasUsed: real.blobGasUsed ?? null,
      withdrawals: [],
    },
    transactions: transactions.map((raw) => ({ hash: keccak256(raw), raw })),
    positionByHash: new Map(),
    receipts: [],
    logs: [],
    logsByAddress: new Map(),
    stateDiff: null,
  };
}

describe('a subblocks block (state_root, block_hash, withdrawals_root zeroed: not given)', () => {
  const zero: Hex = `0x${'0'.repeat(64)}`;
  const fixture = JSON.parse(readFileSync(sharedPath('fixtures/op-blocks/op-sepolia-26207960.json'), 'utf8'));
  const real = fixture.expected.header as Record<string, Hex>;
  /** The sealed Isthmus header the subblocks stand for, and its block size as go-ethereum counts it. */
  const sealed = { ...real, requestsHash: sha256('0x') };
  const subblock = (count: number): PendingBlock => {
    const block = pendingOf(sealed, zero, fixture.payload.transactions.slice(0, count));
    return { ...block, header: { ...block.header, stateRoot: zero, withdrawalsRoot: zero } };
  };

  it("requestsHash and size by the chain's rule, not by hashing against the zero hash: the sealed block's once the transactions are", async () => {
    const all = fixture.payload.transactions.length;
    const asked: PendingBlock[] = [];
    const formatter = createTransactionFormatter(undefined, undefined, {
      isthmusAt: async (block) => {
        asked.push(block);
        return true;
      },
    });
    const fields = await formatter.headerFields(subblock(all));
    expect(asked).toHaveLength(1);
    expect(fields.exact).toBe(false);
    expect(fields.requestsHash).toBe(sha256('0x'));
    const sealedSize = (await rebuildHeaderFields(pendingOf(sealed, headerHash(headerFromRpc(sealed)), fixture.payload.transactions))).size;
    expect(fields.size).toBe(sealedSize);
    const answered = await formatPendingBlock(subblock(all), false, formatter);
    expect(answered).toMatchObject({ requestsHash: sha256('0x'), size: sealedSize, transactionsRoot: real.transactionsRoot });
    // Not given is answered as op-reth's pending block answers an uncomputed root: zero, never the feed's "value".
    expect([answered.hash, answered.stateRoot, answered.withdrawalsRoot]).toEqual([zero, zero, zero]);
    assertSchemaValid('eth_getBlockByNumber', answered);
  });

  it('a chain whose rule says pre-Isthmus gets no requestsHash; an unknown chain keeps the fork seen exact before', async () => {
    const before = createTransactionFormatter(undefined, undefined, { isthmusAt: async () => false });
    expect((await before.headerFields(subblock(3))).requestsHash).toBeUndefined();
    const unknown = createTransactionFormatter(undefined, undefined, { isthmusAt: async () => undefined });
    expect((await unknown.headerFields(subblock(3))).requestsHash).toBeUndefined();
    // The builder's hash given and matching at an earlier height: Isthmus from there on, for the subblocks above it.
    const exactFirst = createTransactionFormatter(undefined, undefined, { isthmusAt: async () => undefined });
    expect((await exactFirst.headerFields(pendingOf(sealed, headerHash(headerFromRpc(sealed)), fixture.payload.transactions))).exact).toBe(
      true,
    );
    expect((await exactFirst.headerFields({ ...subblock(3), number: BigInt(real.number!) + 1n })).requestsHash).toBe(sha256('0x'));
  });
});
