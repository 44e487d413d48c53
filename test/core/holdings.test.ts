import { describe, expect, it } from 'vitest';
import { decideAdmission, PROBE_BATCH, SWEEP_ROWS, type Holding } from '../../src/core/holdings.ts';

const NOW = 1_000_000;
const session = (id: string): Holding => ({ kind: 'session', id, grant: '', createdAt: 0, expiresAt: null });
const task = (id: string, expiresAt: number): Holding => ({ kind: 'task', id, grant: '', createdAt: 0, expiresAt });
const sessions = (n: number) => Array.from({ length: n }, (_, i) => session(`s${i}`));

describe('decideAdmission', () => {
  const cases: [string, Parameters<typeof decideAdmission>[0], ReturnType<typeof decideAdmission>][] = [
    [
      'a session under the limit is admitted',
      { kind: 'session', limit: 3, held: sessions(2), now: NOW, probed: false },
      { kind: 'admit', drop: [] },
    ],
    [
      'at the limit, the sessions are probed first',
      { kind: 'session', limit: 3, held: sessions(3), now: NOW, probed: false },
      { kind: 'probe', sessions: ['s0', 's1', 's2'] },
    ],
    [
      'at the limit after probing (none was gone), refused',
      { kind: 'session', limit: 3, held: sessions(3), now: NOW, probed: true },
      { kind: 'refuse', drop: [], retryAt: null },
    ],
    [
      'over the limit (it was lowered), still refused after probing',
      { kind: 'session', limit: 2, held: sessions(5), now: NOW, probed: true },
      { kind: 'refuse', drop: [], retryAt: null },
    ],
    [
      'unbounded, below the sweep, admitted unprobed',
      { kind: 'session', limit: 0, held: sessions(10), now: NOW, probed: false },
      { kind: 'admit', drop: [] },
    ],
    [
      'unbounded at the sweep: probed, then admitted whatever is left',
      { kind: 'session', limit: 0, held: sessions(SWEEP_ROWS), now: NOW, probed: true },
      { kind: 'admit', drop: [] },
    ],
    [
      'a task under the limit is admitted, expired ones kept (nothing to sweep yet)',
      { kind: 'task', limit: 3, held: [task('a', NOW - 1), task('b', NOW + 5)], now: NOW, probed: false },
      { kind: 'admit', drop: [] },
    ],
    [
      'a task at the limit with an expired one: admitted, the expired dropped',
      { kind: 'task', limit: 2, held: [task('a', NOW), task('b', NOW + 5)], now: NOW, probed: false },
      { kind: 'admit', drop: ['a'] },
    ],
    [
      'a task at the limit, none expired: refused until the first expires',
      { kind: 'task', limit: 2, held: [task('a', NOW + 9), task('b', NOW + 5)], now: NOW, probed: false },
      { kind: 'refuse', drop: [], retryAt: NOW + 5 },
    ],
    [
      'over the limit with some expired: refused, the expired dropped',
      {
        kind: 'task',
        limit: 2,
        held: [task('a', NOW - 1), task('b', NOW + 5), task('c', NOW + 7), task('d', NOW + 6)],
        now: NOW,
        probed: false,
      },
      { kind: 'refuse', drop: ['a'], retryAt: NOW + 5 },
    ],
    [
      'unbounded tasks at the sweep: admitted, the expired dropped',
      {
        kind: 'task',
        limit: 0,
        held: Array.from({ length: SWEEP_ROWS }, (_, i) => task(`t${i}`, i === 0 ? NOW - 1 : NOW + 1)),
        now: NOW,
        probed: false,
      },
      { kind: 'admit', drop: ['t0'] },
    ],
  ];
  it.each(cases)('%s', (_, state, expected) => {
    expect(decideAdmission(state)).toEqual(expected);
  });

  const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `s${from + i}`);
  it.each([
    { name: 'from the oldest', probeFrom: 0, probed: ids(0, PROBE_BATCH) },
    { name: 'from a row further on', probeFrom: 40, probed: ids(40, 40 + PROBE_BATCH) },
    { name: 'wrapping past the newest to the oldest', probeFrom: 90, probed: [...ids(90, 100), ...ids(0, PROBE_BATCH - 10)] },
    { name: 'a place past the rows, taken modulo them', probeFrom: 4_000_000_090, probed: [...ids(90, 100), ...ids(0, PROBE_BATCH - 10)] },
  ])('probes a batch of consecutive sessions, $name', ({ probeFrom, probed }) => {
    const decision = decideAdmission({ kind: 'session', limit: 100, held: sessions(100), now: NOW, probed: false, probeFrom });
    expect(decision).toEqual({ kind: 'probe', sessions: probed });
  });

  it('a window drawn anew each admission reaches every session: live ones among the oldest hide none', () => {
    const reached = new Set<string>();
    for (let probeFrom = 0; probeFrom < 100; probeFrom += PROBE_BATCH) {
      const decision = decideAdmission({ kind: 'session', limit: 100, held: sessions(100), now: NOW, probed: false, probeFrom });
      if (decision.kind === 'probe') for (const id of decision.sessions) reached.add(id);
    }
    expect(reached.size).toBe(100);
  });
});
