/**
 * Batches handed over by a reader that must not wait for their subscriber, delivered item by item
 * in order, a slice at a time (between slices the event loop runs, so the socket bringing the next
 * batch is read meanwhile). push() resolves at once while fewer than `highWaterBatches` batches
 * wait, and otherwise once the subscriber is down to half of them: the reader is held back, and
 * memory stays bounded by the reader's batch size (a Kafka fetch: at most 8 MiB per partition).
 */
/**
 * A batch whose items are made as they are delivered (a replay batch decodes each record then:
 * decoding a whole batch ahead made every value outlive a few young-generation collections).
 */
export interface LazyBatch<T> {
  readonly length: number;
  item(index: number): T;
  /** Called once its last item is delivered. */
  delivered?(): void;
}

export interface BatchQueue<T> {
  push(batch: readonly T[] | LazyBatch<T>): Promise<void>;
  /** Drops what waits and releases every waiting push (the subscriber has gone). */
  clear(): void;
  /**
   * Delivers nothing until resume() (the subscriber's output is full). A push while paused
   * resolves at once: the reader must stop reading by itself (a paused Kafka consumer fetches no
   * more), and a reader held inside its callback would miss its heartbeats.
   */
  pause(): void;
  resume(): void;
}

export function createBatchQueue<T>(
  deliver: (item: T) => void,
  options: { sliceItems?: number; highWaterBatches?: number } = {},
): BatchQueue<T> {
  const sliceItems = options.sliceItems ?? 2000;
  const highWaterBatches = options.highWaterBatches ?? 4;
  const batches: (readonly T[] | LazyBatch<T>)[] = [];
  let next = 0;
  let scheduled = false;
  let held: (() => void)[] = [];
  let paused = false;
  const release = () => {
    const waiters = held;
    held = [];
    for (const resume of waiters) resume();
  };
  const drain = () => {
    scheduled = false;
    if (paused) return;
    for (let budget = sliceItems; budget > 0 && batches.length > 0 && !paused; budget--) {
      const batch = batches[0]!;
      const item = Array.isArray(batch) ? (batch as readonly T[])[next++]! : (batch as LazyBatch<T>).item(next++);
      if (next === batch.length) {
        batches.shift();
        next = 0;
        if (!Array.isArray(batch)) (batch as LazyBatch<T>).delivered?.();
      }
      deliver(item);
    }
    if (paused) return;
    if (batches.length <= highWaterBatches / 2) release();
    if (batches.length > 0) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(drain);
  };
  return {
    push(batch) {
      if (batch.length === 0) return Promise.resolve();
      batches.push(batch);
      schedule();
      return batches.length < highWaterBatches || paused ? Promise.resolve() : new Promise<void>((resume) => held.push(resume));
    },
    clear() {
      batches.length = 0;
      next = 0;
      release();
    },
    pause() {
      paused = true;
      release();
    },
    resume() {
      if (!paused) return;
      paused = false;
      schedule();
    },
  };
}
