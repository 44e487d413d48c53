/**
 * The session's alarm as SessionClock keeps it (src/session/session-clock.ts), against a storage
 * stand-in: it moves the alarm only earlier, reads the stored one once, and after a `setAlarm`
 * that failed it does not believe the alarm set — the next arm sets it again. (A session whose
 * alarm was lost would never expire.)
 */
import { describe, expect, it } from 'vitest';
import { SessionClock } from '../../src/session/session-clock.ts';
import type { SessionStore } from '../../src/session/session-store.ts';

function storage(stored: number | null = null) {
  const calls: string[] = [];
  let failNext = false;
  const stub = {
    async getAlarm() {
      calls.push('get');
      return stored;
    },
    async setAlarm(at: number) {
      calls.push(`set ${at}`);
      if (failNext) {
        failNext = false;
        throw new Error('setAlarm failed (injected)');
      }
      stored = at;
    },
    async deleteAlarm() {
      calls.push('delete');
      stored = null;
    },
  };
  return { stub, calls, failOnce: () => (failNext = true) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const clockOn = (store: ReturnType<typeof storage>) =>
  new SessionClock(store.stub as unknown as DurableObjectStorage, {} as SessionStore, 60_000);

describe('SessionClock.arm', () => {
  it('reads the stored alarm once, and moves it only earlier', async () => {
    const store = storage(5_000);
    const clock = clockOn(store);
    clock.arm(9_000);
    clock.arm(4_000);
    clock.arm(6_000);
    await settle();
    expect(store.calls).toEqual(['get', 'set 4000']);
  });

  it('after a setAlarm that failed, the next arm sets it again', async () => {
    const store = storage();
    const clock = clockOn(store);
    store.failOnce();
    clock.arm(4_000);
    await settle();
    clock.arm(4_000);
    await settle();
    expect(store.calls).toEqual(['get', 'set 4000', 'get', 'set 4000']);
  });
});

describe('SessionClock.ensureArmed', () => {
  it('sets the alarm only where none is scheduled', async () => {
    const unset = storage();
    clockOn(unset).ensureArmed(4_000);
    const set = storage(9_000);
    clockOn(set).ensureArmed(4_000);
    await settle();
    expect(unset.calls).toEqual(['get', 'set 4000']);
    expect(set.calls).toEqual(['get']);
  });
});
