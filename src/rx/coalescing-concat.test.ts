import { Subject, lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { concatMapCoalescing } from './coalescing-concat.ts';

/** Values are [group, items]; queued values of one group fold into one. */
type Value = readonly [string, readonly number[]];
const sameGroup = (earlier: Value, later: Value): Value | null =>
  earlier[0] === later[0] ? [later[0], [...earlier[1], ...later[1]]] : null;

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

    const source = new Subject<Value>();
    let worked = 0;
    const done = lastValueFrom(
      source.pipe(concatMapCoalescing(async () => void (await new Promise((resolve) => setTimeout(resolve, 5)), worked++), sameGroup)),
      { defaultValue: undefined },
    );
    source.next(['a', [1]]);
    source.next(['b', [2]]);
    source.complete();
    await done;
    expect(worked).toBe(2);
  });
});
