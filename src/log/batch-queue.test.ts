import { describe, expect, it } from 'vitest';
import { createBatchQueue } from './batch-queue.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the batch queue between a reader and its subscriber', () => {
  it('delivers every item in order, a slice per turn of the event loop', async () => {
    const delivered: number[] = [];
    const queue = createBatchQueue<number>((item) => delivered.push(item), { sliceItems: 2, highWaterBatches: 10 });
    await queue.push([1, 2, 3]);
    await queue.push([4]);
    await queue.push([5, 6]);
    expect(delivered).toEqual([]);
    await turn();
    expect(delivered).toEqual([1, 2]);
    await turn();
    await turn();
    expect(delivered).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('makes the items of a lazy batch as it delivers them, and says when its last one is delivered', async () => {
    const delivered: number[] = [];
    const made: number[] = [];
    let done = 0;
    const queue = createBatchQueue<number>((item) => delivered.push(item), { sliceItems: 2, highWaterBatches: 10 });
    await queue.push({ length: 3, item: (index) => (made.push(index), index * 10), delivered: () => done++ });
    await queue.push([99]);
    await turn();
    expect(made).toEqual([0, 1]);
    expect(done).toBe(0);
    await turn();
    expect(delivered).toEqual([0, 10, 20, 99]);
    expect(done).toBe(1);
  });

  it('holds the reader back at the high-water mark until the subscriber is down to half of it', async () => {
    const delivered: string[] = [];
    const queue = createBatchQueue<string>((item) => delivered.push(item), { sliceItems: 1, highWaterBatches: 4 });
    let released = false;
    for (const batch of [['a'], ['b'], ['c']]) await queue.push(batch);
    void queue.push(['d']).then(() => (released = true));
    await turn();
    expect(delivered).toEqual(['a']);
    expect(released).toBe(false);
    await turn();
    expect(delivered).toEqual(['a', 'b']);
    expect(released).toBe(true);
  });

  it('drops what waits and releases a held reader when cleared', async () => {
    const delivered: number[] = [];
    const queue = createBatchQueue<number>((item) => delivered.push(item), { highWaterBatches: 2 });
    await queue.push([1]);
    const held = queue.push([2]);
    queue.clear();
    await held;
    await turn();
    expect(delivered).toEqual([]);
  });

  it('delivers nothing while paused (even mid-slice), lets pushes through, and goes on in order after resume', async () => {
    const delivered: number[] = [];
    const queue = createBatchQueue<number>(
      (item) => {
        delivered.push(item);
        if (item === 2) queue.pause();
      },
      { sliceItems: 100, highWaterBatches: 2 },
    );
    await queue.push([1, 2, 3]);
    await turn();
    expect(delivered).toEqual([1, 2]);
    // Past the high-water mark, but paused: the reader is not held (it stops fetching by itself).
    await queue.push([4]);
    await queue.push([5]);
    await turn();
    expect(delivered).toEqual([1, 2]);
    queue.resume();
    await turn();
    expect(delivered).toEqual([1, 2, 3, 4, 5]);
  });
});
