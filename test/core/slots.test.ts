import { describe, expect, it } from 'vitest';
import { SlotPool, type Release } from '../../src/core/slots.ts';

/**
 * A step of a pool's life: `take` for a key (expecting a slot, or the refusal named), or
 * `release` of the n-th slot given (0-based, in the order given), possibly again.
 */
type Step = { take: string; expect: 'slot' | 'key' | 'total' } | { release: number };

const cases: { name: string; perKey: number; total: number; steps: Step[]; open: number; held: Record<string, number> }[] = [
  {
    name: 'a key gets its bound, then is refused for itself; another key is served',
    perKey: 2,
    total: 10,
    steps: [
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'key' },
      { take: 'b', expect: 'slot' },
    ],
    open: 3,
    held: { a: 2, b: 1 },
  },
  {
    name: 'the total refuses every key, once the keys below their bound have filled it',
    perKey: 2,
    total: 3,
    steps: [
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'slot' },
      { take: 'b', expect: 'slot' },
      { take: 'c', expect: 'total' },
      { take: 'b', expect: 'total' },
    ],
    open: 3,
    held: { a: 2, b: 1, c: 0 },
  },
  {
    name: 'a key at its bound is told so even when the pool is full: ending one of its own is what helps',
    perKey: 2,
    total: 2,
    steps: [
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'key' },
      { take: 'b', expect: 'total' },
    ],
    open: 2,
    held: { a: 2 },
  },
  {
    name: 'a released slot is free again for its key',
    perKey: 1,
    total: 0,
    steps: [{ take: 'a', expect: 'slot' }, { take: 'a', expect: 'key' }, { release: 0 }, { take: 'a', expect: 'slot' }],
    open: 1,
    held: { a: 1 },
  },
  {
    name: 'a release counts once, however often it is called',
    perKey: 3,
    total: 0,
    steps: [{ take: 'a', expect: 'slot' }, { take: 'a', expect: 'slot' }, { release: 0 }, { release: 0 }, { release: 0 }],
    open: 1,
    held: { a: 1 },
  },
  {
    name: "a release frees its own key's slot and the total's, not another key's",
    perKey: 1,
    total: 2,
    steps: [
      { take: 'a', expect: 'slot' },
      { take: 'b', expect: 'slot' },
      { take: 'c', expect: 'total' },
      { release: 0 },
      { take: 'b', expect: 'key' },
      { take: 'c', expect: 'slot' },
    ],
    open: 2,
    held: { a: 0, b: 1, c: 1 },
  },
  {
    name: '0 per key: only the total bounds',
    perKey: 0,
    total: 3,
    steps: [
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'total' },
    ],
    open: 3,
    held: { a: 3 },
  },
  {
    name: '0 in all: only the keys are bounded',
    perKey: 2,
    total: 0,
    steps: [
      { take: 'a', expect: 'slot' },
      { take: 'a', expect: 'slot' },
      { take: 'b', expect: 'slot' },
      { take: 'b', expect: 'slot' },
      { take: 'c', expect: 'slot' },
      { take: 'c', expect: 'slot' },
      { take: 'c', expect: 'key' },
    ],
    open: 6,
    held: { a: 2, b: 2, c: 2 },
  },
];

describe('SlotPool', () => {
  it.each(cases)('$name', ({ perKey, total, steps, open, held }) => {
    const pool = new SlotPool(perKey, total);
    const given: Release[] = [];
    for (const step of steps) {
      if ('release' in step) {
        given[step.release]!();
        continue;
      }
      const taken = pool.take(step.take);
      expect(typeof taken === 'function' ? 'slot' : taken, `take ${step.take}`).toBe(step.expect);
      if (typeof taken === 'function') given.push(taken);
    }
    expect(pool.open).toBe(open);
    expect(Object.fromEntries(Object.keys(held).map((key) => [key, pool.heldBy(key)]))).toEqual(held);
  });

  it.each([
    [-1, 0],
    [0, -1],
    [1.5, 0],
    [0, Number.NaN],
  ])('refuses the bounds %d per key, %d in all', (perKey, total) => {
    expect(() => new SlotPool(perKey, total)).toThrow(RangeError);
  });
});
