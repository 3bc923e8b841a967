import { Subject, lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { concatMapCoalescing } from './coalescing-concat.ts';

/** Values are [group, items]; queued values of one group fold into one. */
type Value = readonly [string, readonly number[]];
const sameGroup = (earlier: Value, later: Value): Value | null =>
  earlier[0] === later[0] ? [later[0], [...earlier[1], ...later[1]]] : null;

afterEach(() => {
  vi.useRealTimers();
});

describe('concatMapCoalescing', () => {
  it('works one value at a time, in order, folding only what queued while busy and only within a group', async () => {
    const source = new Subject<Value>();
    const worked: Value[] = [];
    let finish: () => void = () => undefined;
    const merged: number[] = [];
    const done = lastValueFrom(
      source.pipe(
        concatMapCoalescing(
          (value) => {
            worked.push(value);
            return new Promise<void>((resolve) => (finish = resolve));
          },
          sameGroup,
          (count) => merged.push(count),
        ),
      ),
      { defaultValue: undefined },
    );
    source.next(['a', [1]]); // starts at once
    source.next(['a', [2]]);
    source.next(['a', [3]]);
    source.next(['b', [4]]);
    source.next(['a', [5]]);
    source.complete();
    expect(worked).toEqual([['a', [1]]]);
    for (let i = 0; i < 4; i++) {
      finish();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await done;
    expect(worked).toEqual([
      ['a', [1]],
      ['a', [2, 3]],
      ['b', [4]],
      ['a', [5]],
    ]);
    expect(merged).toEqual([1]);
  });

  it('errors when the work fails, and completes only after the last value is worked', async () => {
    const failing = new Subject<Value>();
    const failed = lastValueFrom(failing.pipe(concatMapCoalescing(() => Promise.reject(new Error('boom')), sameGroup)), {
      defaultValue: undefined,
    });
    failing.next(['a', [1]]);
    await expect(failed).rejects.toThrow('boom');

    // Work that takes 5 ms (fake time): the second value waits for the first, the output completes after both.
    vi.useFakeTimers();
    const source = new Subject<Value>();
    const worked: Value[] = [];
    let completed = false;
    const done = lastValueFrom(
      source.pipe(
        concatMapCoalescing(async (value) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          worked.push(value);
        }, sameGroup),
      ),
      { defaultValue: undefined },
    ).then(() => (completed = true));
    source.next(['a', [1]]);
    source.next(['b', [2]]);
    source.complete();
    await vi.advanceTimersByTimeAsync(4);
    expect(worked).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(worked).toEqual([['a', [1]]]);
    expect(completed).toBe(false);
    await vi.advanceTimersByTimeAsync(5);
    await done;
    expect(worked).toEqual([
      ['a', [1]],
      ['b', [2]],
    ]);
  });

  it('skips a queued value that a later one supersedes, handing it to skip in order, and works the rest', async () => {
    const source = new Subject<Value>();
    const worked: Value[] = [];
    const skipped: Value[] = [];
    let finish: () => void = () => undefined;
    const done = lastValueFrom(
      source.pipe(
        concatMapCoalescing<Value>(
          (value) => {
            worked.push(value);
            return new Promise<void>((resolve) => (finish = resolve));
          },
          () => null,
          undefined,
          // A value of group "a" is superseded by any later one of group "b".
          { superseded: (earlier, later) => earlier[0] === 'a' && later[0] === 'b', skip: (value) => skipped.push(value) },
        ),
      ),
      { defaultValue: undefined },
    );
    source.next(['a', [1]]); // starts at once: nothing queued behind it yet
    source.next(['a', [2]]);
    source.next(['a', [3]]);
    source.next(['b', [4]]);
    source.complete();
    expect(skipped).toEqual([]);
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(skipped).toEqual([
      ['a', [2]],
      ['a', [3]],
    ]);
    finish();
    await done;
    expect(worked).toEqual([
      ['a', [1]],
      ['b', [4]],
    ]);
  });
});
