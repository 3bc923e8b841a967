import { numberToHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { addTouched, createStateMirror, emptyMirrorTouched } from './state-mirror.ts';

const A: Hex = '0x00000000000000000000000000000000000000aa';
const B: Hex = '0x00000000000000000000000000000000000000bb';
const slot = (n: number): Hex => numberToHex(n, { size: 32 });

/** A chain's state by block, answered as EDR does (the fake engine of this unit test). */
function engineWith(states: Map<bigint, { balances: Record<Hex, bigint>; storage: Record<string, bigint>; code?: Record<Hex, Hex> }>) {
  return async <R>(method: string, params: readonly unknown[] = []): Promise<R> => {
    const tag = params[params.length - 1] as Hex;
    const state = states.get(BigInt(tag))!;
    const address = params[0] as Hex;
    if (method === 'eth_getBalance') return numberToHex(state.balances[address] ?? 0n) as R;
    if (method === 'eth_getTransactionCount') return '0x1' as R;
    if (method === 'eth_getCode') return (state.code?.[address] ?? '0x') as R;
    if (method === 'eth_getStorageAt') return numberToHex(state.storage[`${address}|${params[1] as string}`] ?? 0n, { size: 32 }) as R;
    throw new Error(`unexpected ${method}`);
  };
}

describe('state mirror', () => {
  it('takes the accounts and slots a diff names, with their values at the block read back', async () => {
    const touched = emptyMirrorTouched();
    addTouched(touched, {
      pre: { [A.toUpperCase().replace('0X', '0x')]: { storage: { [slot(1)]: slot(5) } } },
      post: { [B]: { code: '0x6000' } },
    });
    expect([...touched.accounts].sort()).toEqual([A, B]);
    expect([...touched.slots]).toEqual([`${A}|${slot(1)}`]);
    expect([...touched.code]).toEqual([B]);

    const mirror = createStateMirror();
    const call = engineWith(new Map([[1n, { balances: { [A]: 7n }, storage: {}, code: { [B]: '0x6000' } }]]));
    await mirror.update(call, 1n, touched);
    expect(mirror.current.balance(A)).toBe(7n);
    // The slot the diff named was set to zero by the block: the mirror holds nothing for it.
    expect(mirror.current.storage(A, slot(1))).toBe(slot(0));
    expect(mirror.slotsOf(A)).toEqual([]);
    expect(mirror.current.code(B)).toBe('0x6000');
  });

  it('answers at every kept block, and refuses one pruned or not reached yet', async () => {
    const states = new Map([
      [1n, { balances: { [A]: 10n }, storage: { [`${A}|${slot(1)}`]: 1n } }],
      [2n, { balances: { [A]: 20n }, storage: { [`${A}|${slot(1)}`]: 1n } }],
      [3n, { balances: { [A]: 20n }, storage: { [`${A}|${slot(1)}`]: 3n } }],
    ]);
    const call = engineWith(states);
    const mirror = createStateMirror();
    const touchedA = () => {
      const touched = emptyMirrorTouched();
      touched.accounts.add(A);
      touched.slots.add(`${A}|${slot(1)}`);
      return touched;
    };
    await mirror.update(call, 1n, touchedA());
    const balanceOnly = emptyMirrorTouched();
    balanceOnly.accounts.add(A);
    await mirror.update(call, 2n, balanceOnly);
    const slotOnly = emptyMirrorTouched();
    slotOnly.slots.add(`${A}|${slot(1)}`);
    await mirror.update(call, 3n, slotOnly);

    expect([1n, 2n, 3n].map((block) => mirror.at(block).balance(A))).toEqual([10n, 20n, 20n]);
    expect([1n, 2n, 3n].map((block) => BigInt(mirror.at(block).storage(A, slot(1))))).toEqual([1n, 1n, 3n]);
    // Block 0: before the first update, A did not exist.
    expect(mirror.at(0n).balance(A)).toBe(0n);
    expect(() => mirror.at(4n)).toThrow(/not kept/);

    mirror.prune(2n);
    expect(mirror.oldest()).toBe(2n);
    expect(() => mirror.at(1n)).toThrow(/not kept \(blocks 2 to 3 are\)/);
    expect(mirror.at(2n).balance(A)).toBe(20n);
    expect(BigInt(mirror.at(2n).storage(A, slot(1)))).toBe(1n);
    expect(BigInt(mirror.at(3n).storage(A, slot(1)))).toBe(3n);
  });
});
