import { describe, expect, it } from 'vitest';
import { createReorgHold } from './reorg-hold.ts';

describe('the tail of a --reorg-every block', () => {
  it('holds new transactions from the middle of a reorg block until its seal, and never in other blocks', async () => {
    const hold = createReorgHold({ flashblocksPerBlock: 10, reorgEvery: 5 });
    for (let sent = 1; sent <= 10; sent++) hold.afterFlashblock(9n, sent);
    expect(hold.holding()).toBe(false);
    hold.afterFlashblock(10n, 4);
    expect(hold.holding()).toBe(false);
    hold.afterFlashblock(10n, 5);
    expect(hold.holding()).toBe(true);
    // A submit waits, and is tried again if the hold is on again when it runs.
    const tries: boolean[] = [];
    const sent = hold.whenTaking(async () => {
      tries.push(hold.holding());
      return hold.holding() ? null : '0xsent';
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(tries).toEqual([]);
    hold.release();
    await expect(sent).resolves.toBe('0xsent');
    expect(tries).toEqual([false]);
  });

  it('ends a hold whose block never sealed when the next block sends a flashblock; nothing with --reorg-every 0', () => {
    const hold = createReorgHold({ flashblocksPerBlock: 10, reorgEvery: 5 });
    hold.afterFlashblock(10n, 8);
    expect(hold.holding()).toBe(true);
    hold.afterFlashblock(11n, 1);
    expect(hold.holding()).toBe(false);
    const never = createReorgHold({ flashblocksPerBlock: 10, reorgEvery: 0 });
    never.afterFlashblock(10n, 9);
    expect(never.holding()).toBe(false);
  });
});
