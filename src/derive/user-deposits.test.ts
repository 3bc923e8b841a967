import { concat, encodeAbiParameters, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { depositLog, opaqueData, portal, type DepositFields } from '../../test/helpers/l1-logs.ts';
import { encodeDeposit, sourceDomain, sourceHash } from '../op/deposit-tx.ts';
import { decodeDepositLog, userDeposits, type L1Receipt } from './user-deposits.ts';

const parseDeposit = (tx: Hex) => parseTransaction(tx) as ReturnType<typeof parseTransaction> & { isSystemTx?: boolean };

const place = { l1BlockHash: `0x${'ab'.repeat(32)}` as Hex, l1BlockNumber: 1234n };
const fields: DepositFields = {
  from: '0x1111111111111111111111111111111111111111',
  to: '0x2222222222222222222222222222222222222222',
  mint: 10n ** 18n,
  value: 5n,
  gas: 100_000n,
  isCreation: false,
  data: '0xdeadbeef',
};

describe('userDeposits', () => {
  it("decodes a TransactionDeposited log into the deposit viem's OP parser reads back", () => {
    const tx = parseDeposit(encodeDeposit(decodeDepositLog(depositLog(fields, 7), place)));
    expect(tx).toMatchObject({
      type: 'deposit',
      sourceHash: sourceHash(sourceDomain.userDeposit, place.l1BlockHash, 7n),
      from: fields.from,
      to: fields.to,
      mint: fields.mint,
      value: fields.value,
      gas: fields.gas,
      data: fields.data,
    });
    expect(tx.isSystemTx).toBeFalsy();
  });

  it('reads a creation (non-zero isCreation) as to = null, whatever the `to` topic says', () => {
    const deposit = decodeDepositLog(depositLog({ ...fields, isCreation: true }, 0), place);
    expect(deposit.to).toBeNull();
    expect(parseTransaction(encodeDeposit(deposit)).to ?? null).toBeNull();
  });

  it("takes successful receipts' portal logs in order, skipping reverted receipts and other contracts", () => {
    const receipts: L1Receipt[] = [
      { status: 'reverted', logs: [depositLog({ ...fields, value: 1n }, 0)] },
      {
        status: 'success',
        logs: [{ ...depositLog({ ...fields, value: 2n }, 1), address: fields.from }, depositLog({ ...fields, value: 3n }, 2)],
      },
      { status: 'success', logs: [depositLog({ ...fields, value: 4n }, 3)] },
    ];
    expect(userDeposits(receipts, portal, place).map((d) => d.value)).toEqual([3n, 4n]);
  });

  it('refuses a malformed log, naming the block, the log index and the reason', () => {
    const good = depositLog(fields, 9);
    const bad: [string, typeof good][] = [
      ['expected 4 topics', { ...good, topics: good.topics.slice(0, 3) }],
      ['not a multiple of 32', { ...good, data: concat([good.data, '0x00']) }],
      [
        'opaqueData offset must be 32',
        { ...good, data: concat([encodeAbiParameters([{ type: 'uint256' }], [64n]), `0x${good.data.slice(66)}`]) },
      ],
      ['does not fit', { ...good, data: concat([good.data, `0x${'00'.repeat(32)}`]) }],
      ['unknown deposit version 1', depositLog(fields, 9, 1n)],
      ['needs at least 73 bytes', depositLog(fields, 9, 0n, opaqueData(fields).slice(0, 2 + 2 * 72) as Hex)],
    ];
    for (const [reason, log] of bad) {
      expect(() => userDeposits([{ status: 'success', logs: [log] }], portal, place), reason).toThrow(
        expect.objectContaining({
          code: 'DERIVE_DEPOSIT_INVALID',
          message: expect.stringContaining(`L1 block 1234 ${place.l1BlockHash} log 9: `),
        }),
      );
      expect(() => decodeDepositLog(log, place), reason).toThrow(reason);
    }
  });
});
