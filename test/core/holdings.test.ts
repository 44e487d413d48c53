import { describe, expect, it } from 'vitest';
import { decideAdmission, PROBE_BATCH, SWEEP_ROWS, type Holding } from '../../src/core/holdings.ts';

const NOW = 1_000_000;
/** A session; `liveUntil`: the soonest it can expire idle, as a probe last told (null: never probed). */
const session = (id: string, liveUntil: number | null = null, createdAt = 0): Holding => ({
  kind: 'session',
  id,
  grant: '',
  createdAt,
  expiresAt: liveUntil,
});
const task = (id: string, expiresAt: number): Holding => ({ kind: 'task', id, grant: '', createdAt: 0, expiresAt });
const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `s${from + i}`);
const sessions = (n: number, liveUntil: number | null = null) => ids(0, n).map((id, i) => session(id, liveUntil, i));

describe('decideAdmission', () => {
  const cases: [string, Parameters<typeof decideAdmission>[0], ReturnType<typeof decideAdmission>][] = [
    [
      'a session under the limit is admitted',
      { kind: 'session', limit: 3, held: sessions(2), now: NOW, probed: [] },
      { kind: 'admit', drop: [] },
    ],
    [
      'at the limit, the sessions are probed first',
      { kind: 'session', limit: 3, held: sessions(3), now: NOW, probed: [] },
      { kind: 'probe', sessions: ['s0', 's1', 's2'] },
    ],
    [
      'webhook subscriptions at the limit are probed as sessions are (their refreshes are not told the registry)',
      {
        kind: 'webhook',
        limit: 2,
        held: [
          { ...session('sub_a', NOW + 1), kind: 'webhook' },
          { ...session('sub_b'), kind: 'webhook' },
        ],
        now: NOW,
        probed: [],
      },
      { kind: 'probe', sessions: ['sub_b'] },
    ],
    [
      'at the limit after probing every session (none was gone), refused',
      { kind: 'session', limit: 3, held: sessions(3), now: NOW, probed: ['s0', 's1', 's2'] },
      { kind: 'refuse', drop: [], retryAt: null },
    ],
    [
      'over the limit (it was lowered), still refused after probing',
      { kind: 'session', limit: 2, held: sessions(5), now: NOW, probed: ids(0, 5) },
      { kind: 'refuse', drop: [], retryAt: null },
    ],
    [
      // The 32 oldest were probed live: the younger ones are asked next, in the same admission.
      'at the limit with more sessions than a batch: the next batch after the first, not a refusal',
      { kind: 'session', limit: 40, held: sessions(40), now: NOW, probed: ids(0, PROBE_BATCH) },
      { kind: 'probe', sessions: ids(PROBE_BATCH, 40) },
    ],
    [
      // A probe told each it is live until later: nothing to ask, the bound holds.
      'at the limit, every session known live until later: refused without a probe',
      { kind: 'session', limit: 3, held: sessions(3, NOW + 1), now: NOW, probed: [] },
      { kind: 'refuse', drop: [], retryAt: null },
    ],
    [
      'a session whose known life has run out is probed again; those still known live are not',
      { kind: 'session', limit: 3, held: [session('a', NOW + 5, 0), session('b', NOW, 1), session('c', NOW + 9, 2)], now: NOW, probed: [] },
      { kind: 'probe', sessions: ['b'] },
    ],
    [
      'never probed first, then the soonest run out, then the oldest',
      {
        kind: 'session',
        limit: 4,
        held: [session('a', NOW - 1, 0), session('b', null, 1), session('c', NOW - 5, 2), session('d', NOW - 1, 3)],
        now: NOW,
        probed: [],
      },
      { kind: 'probe', sessions: ['b', 'c', 'a', 'd'] },
    ],
    [
      'unbounded, below the sweep, admitted unprobed',
      { kind: 'session', limit: 0, held: sessions(10), now: NOW, probed: [] },
      { kind: 'admit', drop: [] },
    ],
    [
      'unbounded at the sweep: one batch probed',
      { kind: 'session', limit: 0, held: sessions(SWEEP_ROWS), now: NOW, probed: [] },
      { kind: 'probe', sessions: ids(0, PROBE_BATCH) },
    ],
    [
      'unbounded at the sweep: probed once, then admitted whatever is left',
      { kind: 'session', limit: 0, held: sessions(SWEEP_ROWS), now: NOW, probed: ids(0, PROBE_BATCH) },
      { kind: 'admit', drop: [] },
    ],
    [
      'a task under the limit is admitted, expired ones kept (nothing to sweep yet)',
      { kind: 'task', limit: 3, held: [task('a', NOW - 1), task('b', NOW + 5)], now: NOW, probed: [] },
      { kind: 'admit', drop: [] },
    ],
    [
      'a task at the limit with an expired one: admitted, the expired dropped',
      { kind: 'task', limit: 2, held: [task('a', NOW), task('b', NOW + 5)], now: NOW, probed: [] },
      { kind: 'admit', drop: ['a'] },
    ],
    [
      'a task at the limit, none expired: refused until the first expires',
      { kind: 'task', limit: 2, held: [task('a', NOW + 9), task('b', NOW + 5)], now: NOW, probed: [] },
      { kind: 'refuse', drop: [], retryAt: NOW + 5 },
    ],
    [
      // Every expired task counts for nothing, wherever it is among the rows (no window).
      'a task at the limit whose only expired one is the youngest: admitted',
      { kind: 'task', limit: 40, held: ids(0, 40).map((id, i) => task(id, i === 39 ? NOW - 1 : NOW + 1)), now: NOW, probed: [] },
      { kind: 'admit', drop: ['s39'] },
    ],
    [
      'over the limit with some expired: refused, the expired dropped',
      {
        kind: 'task',
        limit: 2,
        held: [task('a', NOW - 1), task('b', NOW + 5), task('c', NOW + 7), task('d', NOW + 6)],
        now: NOW,
        probed: [],
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
        probed: [],
      },
      { kind: 'admit', drop: ['t0'] },
    ],
  ];
  it.each(cases)('%s', (_, state, expected) => {
    expect(decideAdmission(state)).toEqual(expected);
  });

  it('asks every session it does not know live before refusing, a batch at a time, each once', () => {
    // 100 at the bound, none known: the admission goes on asking until none is left to ask.
    const held = sessions(100);
    const asked: string[] = [];
    for (;;) {
      const decision = decideAdmission({ kind: 'session', limit: 100, held, now: NOW, probed: asked });
      if (decision.kind !== 'probe') {
        expect(decision.kind).toBe('refuse');
        break;
      }
      expect(decision.sessions.length).toBeLessThanOrEqual(PROBE_BATCH);
      expect(decision.sessions.filter((id) => asked.includes(id))).toEqual([]);
      asked.push(...decision.sessions);
    }
    expect(new Set(asked).size).toBe(100);
  });
});
