import { describe, expect, it } from 'vitest';
import { gapToAnnounce, isPassed, type OccurrenceState, type TrackedOccurrence, watermark } from '../../src/core/webhook-watermark.ts';

const track = (entries: ReadonlyArray<readonly [number, OccurrenceState]>): TrackedOccurrence[] =>
  entries.map(([seq, state]) => ({ seq, state }));
const STATES: readonly OccurrenceState[] = ['pending', 'delivered', 'declined', 'abandoned', 'gap_announced'];

describe('which states the watermark passes', () => {
  it.each([
    ['pending', false],
    ['delivered', true],
    ['declined', true],
    ['abandoned', false],
    ['gap_announced', true],
  ] as const)('%s: %s', (state, passed) => {
    expect(isPassed(state)).toBe(passed);
  });
});

describe('the safe watermark', () => {
  it.each([
    { name: 'nothing scanned', scannedTo: 0, occurrences: [], mark: 0 },
    { name: 'a quiet period: the scanned position', scannedTo: 10, occurrences: [], mark: 10 },
    { name: 'one pending', scannedTo: 10, occurrences: track([[1, 'pending']]), mark: 1 },
    { name: 'the first occurrence of the log pending', scannedTo: 1, occurrences: track([[0, 'pending']]), mark: 0 },
    {
      name: 'all delivered',
      scannedTo: 10,
      occurrences: track([
        [1, 'delivered'],
        [4, 'delivered'],
        [9, 'delivered'],
      ]),
      mark: 10,
    },
    {
      name: 'a later one acknowledged first',
      scannedTo: 10,
      occurrences: track([
        [1, 'delivered'],
        [3, 'pending'],
        [5, 'delivered'],
      ]),
      mark: 3,
    },
    {
      name: 'the earliest of several pending',
      scannedTo: 10,
      occurrences: track([
        [2, 'pending'],
        [3, 'delivered'],
        [6, 'pending'],
      ]),
      mark: 2,
    },
    {
      name: 'an abandoned one not yet announced',
      scannedTo: 10,
      occurrences: track([
        [2, 'abandoned'],
        [4, 'delivered'],
      ]),
      mark: 2,
    },
    {
      name: 'an abandoned one announced by a gap',
      scannedTo: 10,
      occurrences: track([
        [2, 'gap_announced'],
        [4, 'delivered'],
      ]),
      mark: 10,
    },
    { name: 'a declined one (410)', scannedTo: 10, occurrences: track([[2, 'declined']]), mark: 10 },
    {
      name: 'pending behind an announced gap',
      scannedTo: 10,
      occurrences: track([
        [2, 'gap_announced'],
        [7, 'pending'],
      ]),
      mark: 7,
    },
    {
      name: 'sparse positions (other arguments matched between)',
      scannedTo: 5_000,
      occurrences: track([
        [100, 'delivered'],
        [2_400, 'pending'],
      ]),
      mark: 2_400,
    },
    {
      name: 'a list out of order',
      scannedTo: 10,
      occurrences: track([
        [5, 'pending'],
        [1, 'delivered'],
        [3, 'pending'],
      ]),
      mark: 3,
    },
  ])('$name → $mark', ({ scannedTo, occurrences, mark }) => {
    expect(watermark(scannedTo, occurrences)).toBe(mark);
  });

  it('never passes an occurrence not passed, and is the furthest position that does not (every combination of states)', () => {
    const seqs = [1, 3, 4, 7];
    const scannedTo = 9;
    let combinations = 0;
    for (let code = 0; code < STATES.length ** seqs.length; code++) {
      const occurrences = seqs.map((seq, i) => ({
        seq,
        state: STATES[Math.floor(code / STATES.length ** i) % STATES.length] as OccurrenceState,
      }));
      const mark = watermark(scannedTo, occurrences);
      for (const { seq, state } of occurrences) if (seq < mark) expect(isPassed(state)).toBe(true);
      const blocker = occurrences.find(({ seq }) => seq === mark);
      if (mark !== scannedTo) expect(blocker !== undefined && !isPassed(blocker.state)).toBe(true);
      expect(watermark(scannedTo, [...occurrences].reverse())).toBe(mark);
      combinations++;
    }
    expect(combinations).toBe(625);
  });

  it('advances only forward as acknowledgements arrive out of order, and waits at an abandoned one for its gap', () => {
    const states = new Map<number, OccurrenceState>([
      [1, 'pending'],
      [2, 'pending'],
      [3, 'pending'],
      [4, 'pending'],
    ]);
    const steps: ReadonlyArray<readonly [number, OccurrenceState, number]> = [
      [3, 'delivered', 1],
      [1, 'delivered', 2],
      [2, 'abandoned', 2],
      [4, 'delivered', 2],
      [2, 'gap_announced', 5],
    ];
    let previous = watermark(
      5,
      [...states].map(([seq, state]) => ({ seq, state })),
    );
    expect(previous).toBe(1);
    for (const [seq, state, expected] of steps) {
      states.set(seq, state);
      const mark = watermark(
        5,
        [...states].map(([s, st]) => ({ seq: s, state: st })),
      );
      expect(mark).toBe(expected);
      expect(mark).toBeGreaterThanOrEqual(previous);
      previous = mark;
    }
  });

  it.each([
    { name: 'a seq at scannedTo', scannedTo: 5, occurrences: track([[5, 'pending']]) },
    { name: 'a seq beyond scannedTo', scannedTo: 5, occurrences: track([[9, 'delivered']]) },
    { name: 'a negative seq', scannedTo: 5, occurrences: track([[-1, 'pending']]) },
    { name: 'a fractional seq', scannedTo: 5, occurrences: track([[1.5, 'pending']]) },
    {
      name: 'a seq tracked twice',
      scannedTo: 5,
      occurrences: track([
        [2, 'pending'],
        [2, 'delivered'],
      ]),
    },
    { name: 'a negative scannedTo', scannedTo: -1, occurrences: [] },
    { name: 'a fractional scannedTo', scannedTo: 2.5, occurrences: [] },
  ])('refuses $name', ({ scannedTo, occurrences }) => {
    expect(() => watermark(scannedTo, occurrences)).toThrow(RangeError);
    expect(() => gapToAnnounce(scannedTo, occurrences)).toThrow(RangeError);
  });
});

describe('the gap envelope due', () => {
  it.each([
    {
      name: 'nothing abandoned',
      scannedTo: 10,
      occurrences: track([
        [1, 'pending'],
        [2, 'delivered'],
      ]),
      gap: null,
    },
    { name: 'only announced gaps', scannedTo: 10, occurrences: track([[1, 'gap_announced']]), gap: null },
    {
      name: 'one abandoned, a later one pending',
      scannedTo: 10,
      occurrences: track([
        [1, 'delivered'],
        [2, 'abandoned'],
        [3, 'pending'],
      ]),
      gap: { seqs: [2], cursorNext: 3 },
    },
    {
      name: 'one abandoned behind an earlier pending one',
      scannedTo: 10,
      occurrences: track([
        [1, 'pending'],
        [2, 'abandoned'],
      ]),
      gap: { seqs: [2], cursorNext: 1 },
    },
    {
      name: 'two abandoned, nothing pending',
      scannedTo: 10,
      occurrences: track([
        [5, 'abandoned'],
        [7, 'delivered'],
        [2, 'abandoned'],
      ]),
      gap: { seqs: [2, 5], cursorNext: 10 },
    },
    {
      name: 'an abandoned one beside an announced one',
      scannedTo: 10,
      occurrences: track([
        [2, 'gap_announced'],
        [4, 'abandoned'],
      ]),
      gap: { seqs: [4], cursorNext: 10 },
    },
  ])('$name', ({ scannedTo, occurrences, gap }) => {
    expect(gapToAnnounce(scannedTo, occurrences)).toEqual(gap);
  });

  it('carries the watermark the subscription has once the gap is announced', () => {
    const occurrences = track([
      [1, 'delivered'],
      [2, 'abandoned'],
      [6, 'abandoned'],
      [8, 'pending'],
    ]);
    const gap = gapToAnnounce(10, occurrences);
    const announced = occurrences.map((o) => (o.state === 'abandoned' ? { ...o, state: 'gap_announced' as const } : o));
    expect(gap?.cursorNext).toBe(watermark(10, announced));
    expect(watermark(10, occurrences)).toBe(2);
  });
});
