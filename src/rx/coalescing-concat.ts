import { Observable, type OperatorFunction } from 'rxjs';

/**
 * `concatMap` for work that can fall behind: values run through `work` one at a time, in order,
 * but while `work` is busy the queued values are folded together where `merge` allows (it returns
 * the one value that stands for both, or null to keep them apart). A pre-confirmation consumer
 * wants the newest state soonest: when the executor takes longer than the feed's interval, the
 * flashblocks of one block that queued behind it are executed once, as the block so far, instead
 * of one by one, each later than the last, until every one arrives after its block is canonical.
 *
 * With `superseded`, a value that a later queued one supersedes is not worked at all but handed to
 * `skip` (synchronously, in order): a block the chain has moved past is not worth executing, and
 * executing it would only keep the next one waiting.
 *
 * Emits nothing; completes once the source has and every value has been worked; errors as
 * `concatMap` does (a rejected `work` errors the output).
 */
export function concatMapCoalescing<T>(
  work: (value: T) => Promise<void>,
  merge: (earlier: T, later: T) => T | null,
  onMerged?: (count: number) => void,
  supersede?: { readonly superseded: (earlier: T, later: T) => boolean; readonly skip: (value: T) => void },
): OperatorFunction<T, never> {
  return (source) =>
    new Observable<never>((subscriber) => {
      const queue: T[] = [];
      let running = false;
      let sourceDone = false;

      const next = (): void => {
        if (running) return;
        if (queue.length === 0) {
          if (sourceDone) subscriber.complete();
          return;
        }
        let value = queue.shift() as T;
        let merged = 0;
        while (queue.length > 0) {
          const folded = merge(value, queue[0] as T);
          if (folded === null) break;
          queue.shift();
          value = folded;
          merged++;
        }
        if (merged > 0) onMerged?.(merged);
        if (supersede && queue.some((later) => supersede.superseded(value, later))) {
          supersede.skip(value);
          next();
          return;
        }
        running = true;
        work(value).then(
          () => {
            running = false;
            next();
          },
          (error: unknown) => subscriber.error(error),
        );
      };

      const subscription = source.subscribe({
        next(value) {
          queue.push(value);
          next();
        },
        error: (error: unknown) => subscriber.error(error),
        complete() {
          sourceDone = true;
          next();
        },
      });
      return () => subscription.unsubscribe();
    });
}
