import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { distinctRecent } from './distinct-recent.ts';

describe('distinctRecent', () => {
  it('drops keys seen among the last N and forgets older ones', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a-b-a-c-d-a-b|');
      expectObservable(source.pipe(distinctRecent((value) => value, 2))).toBe('a-b---c-d-a-b|');
    });
  });
});
