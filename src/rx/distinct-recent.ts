import { filter, type MonoTypeOperatorFunction } from 'rxjs';

/**
 * Drops values whose key was seen among the last `capacity` distinct keys: de-duplication across
 * merged upstreams with bounded memory (RxJS `distinct` would remember every key forever).
 */
export function distinctRecent<T>(
  keyOf: (value: T) => string,
  capacity: number,
  onDuplicate?: (value: T) => void,
): MonoTypeOperatorFunction<T> {
  return (source) => {
    const seen = new Set<string>();
    const order: string[] = [];
    return source.pipe(
      filter((value) => {
        const key = keyOf(value);
        if (seen.has(key)) {
          onDuplicate?.(value);
          return false;
        }
        seen.add(key);
        order.push(key);
        if (order.length > capacity) seen.delete(order.shift()!);
        return true;
      }),
    );
  };
}
