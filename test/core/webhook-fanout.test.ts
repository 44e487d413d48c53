import { describe, expect, it } from 'vitest';
import {
  checkToArm,
  FANOUT_CHECK_MS,
  type FanoutState,
  nextAlarm,
  owes,
  planPoke,
  POKE_TAIL_MAX,
  POKE_TAIL_MAX_BYTES,
  sent,
  settle,
  tailOverflow,
  UNKNOWN,
} from '../../src/core/webhook-fanout.ts';

const at = (confirmed: number | null, inFlight: number | null = null): FanoutState => ({ confirmed, inFlight });
/** The tail holds seqs 10..19; the head is 20. */
const TAIL = { from: 10, to: 20 };

describe('who is owed a poke', () => {
  it.each([
    { name: 'unknown (a fresh instance): owed', state: UNKNOWN, head: 0, owed: true },
    { name: 'confirmed to the head: not owed', state: at(20), head: 20, owed: false },
    { name: 'confirmed behind the head: owed', state: at(19), head: 20, owed: true },
    { name: 'in flight, not confirmed: still owed', state: at(19, 20), head: 20, owed: true },
  ])('$name', ({ state, head, owed }) => {
    expect(owes(state, head)).toBe(owed);
  });
});

describe('the poke sent now', () => {
  it.each([
    {
      name: 'unknown: to the head, no occurrences (it reads from its own position)',
      state: UNKNOWN,
      head: 20,
      plan: { head: 20, from: null },
    },
    { name: 'confirmed inside the tail: the occurrences since', state: at(15), head: 20, plan: { head: 20, from: 15 } },
    { name: 'confirmed at the tail start: all of the tail', state: at(10), head: 20, plan: { head: 20, from: 10 } },
    { name: 'confirmed before the tail: no occurrences', state: at(9), head: 20, plan: { head: 20, from: null } },
    { name: 'confirmed to the head: none', state: at(20), head: 20, plan: null },
    { name: 'a poke in flight: none (its return sends the rest: coalescing)', state: at(15, 18), head: 20, plan: null },
    { name: 'unknown and in flight: none', state: at(null, 20), head: 20, plan: null },
  ])('$name', ({ state, head, plan }) => {
    expect(planPoke(state, head, TAIL)).toEqual(plan);
  });

  it('a tail that does not reach the head carries nothing (never a range with a hole)', () => {
    expect(planPoke(at(15), 21, TAIL)).toEqual({ head: 21, from: null });
  });

  it('sending marks the poke in flight, confirming nothing', () => {
    expect(sent(at(15), { head: 20, from: 15 })).toEqual(at(15, 20));
  });
});

describe('a poke comes back', () => {
  it.each([
    {
      name: 'processed, nothing appended meanwhile: confirmed to its head, nothing more',
      state: at(15, 20),
      head: 20,
      after: { state: at(20), next: null },
    },
    {
      name: 'processed while 3 were appended: one more poke carrying all 3 (coalesced)',
      state: at(15, 20),
      head: 23,
      tail: { from: 10, to: 23 },
      after: { state: at(20), next: { head: 23, from: 20 } },
    },
    {
      name: 'processed, from unknown: confirmed to its head',
      state: at(null, 20),
      head: 20,
      after: { state: at(20), next: null },
    },
    {
      name: 'processed, the head it carried behind a later confirmation: never moves back',
      state: at(22, 20),
      head: 22,
      after: { state: at(22), next: null },
    },
    {
      name: 'failed (a throw): nothing confirmed, nothing sent at once (the next append or the check pokes)',
      state: at(15, 20),
      head: 23,
      outcome: 'failed' as const,
      after: { state: at(15), next: null },
    },
    { name: 'gone: the row is dropped', state: at(15, 20), head: 20, outcome: 'gone' as const, after: null },
  ])('$name', ({ state, head, tail = TAIL, outcome = 'processed' as const, after }) => {
    expect(settle(state, 20, outcome, head, tail)).toEqual(after);
  });

  it('N appends during one poke in flight: exactly one more poke, carrying the N', () => {
    let state = sent(at(5), { head: 6, from: 5 });
    const tail = { from: 0, to: 6 };
    let pokes = 0;
    for (let head = 7; head <= 12; head++) if (planPoke(state, head, { ...tail, to: head }) !== null) pokes++;
    const after = settle(state, 6, 'processed', 12, { from: 0, to: 12 });
    expect(pokes).toBe(0);
    expect(after?.next).toEqual({ head: 12, from: 6 });
    state = sent(after!.state, after!.next!);
    expect(settle(state, 12, 'processed', 12, { from: 0, to: 12 })).toEqual({ state: at(12), next: null });
  });
});

describe('the check alarm', () => {
  const now = 1_000_000;
  it.each([
    { name: 'no subscribers: nothing armed', subscribers: false, alarmAt: null, armed: null },
    { name: 'subscribers, no alarm: armed a window ahead', subscribers: true, alarmAt: null, armed: now + FANOUT_CHECK_MS },
    { name: 'an alarm due sooner: kept (0 rows)', subscribers: true, alarmAt: now + 5_000, armed: null },
    { name: 'an alarm due exactly at the window: kept', subscribers: true, alarmAt: now + FANOUT_CHECK_MS, armed: null },
    { name: 'the sweep due later: brought forward', subscribers: true, alarmAt: now + 60_000, armed: now + FANOUT_CHECK_MS },
  ])('in an append: $name', ({ subscribers, alarmAt, armed }) => {
    expect(checkToArm(now, subscribers, alarmAt)).toBe(armed);
  });

  it.each([
    { name: 'nothing owed, a sweep due: the sweep', sweepDue: now + 60_000, owed: false, next: now + 60_000 },
    { name: 'nothing owed, nothing to sweep: none', sweepDue: null, owed: false, next: null },
    { name: 'owed, the sweep later: another window', sweepDue: now + 60_000, owed: true, next: now + FANOUT_CHECK_MS },
    { name: 'owed, the sweep sooner: the sweep', sweepDue: now + 10_000, owed: true, next: now + 10_000 },
    { name: 'owed, nothing to sweep: another window', sweepDue: null, owed: true, next: now + FANOUT_CHECK_MS },
  ])('after a check: $name', ({ sweepDue, owed, next }) => {
    expect(nextAlarm(now, sweepDue, owed)).toBe(next);
  });

  it('a burst of appends in one window arms once: the alarm set by the first covers the rest', () => {
    let alarmAt: number | null = null;
    let rows = 0;
    for (let t = 0; t < FANOUT_CHECK_MS; t += 1_000) {
      const armed = checkToArm(now + t, true, alarmAt);
      if (armed !== null) {
        alarmAt = armed;
        rows++;
      }
    }
    expect(rows).toBe(1);
  });
});

describe('the tail kept in memory', () => {
  it.each([
    { name: 'within both bounds', sizes: [1, 2, 3], drop: 0 },
    { name: `past ${POKE_TAIL_MAX} occurrences: the oldest go`, sizes: Array(POKE_TAIL_MAX + 2).fill(1), drop: 2 },
    { name: 'past the bytes: the oldest go until it fits', sizes: [POKE_TAIL_MAX_BYTES / 2, POKE_TAIL_MAX_BYTES / 2, 10], drop: 1 },
    { name: 'one occurrence over the bytes alone: none kept', sizes: [POKE_TAIL_MAX_BYTES + 1], drop: 1 },
    { name: 'exactly at the bytes: kept', sizes: [POKE_TAIL_MAX_BYTES], drop: 0 },
    { name: 'empty', sizes: [], drop: 0 },
  ])('$name', ({ sizes, drop }) => {
    expect(tailOverflow(sizes)).toBe(drop);
  });
});
