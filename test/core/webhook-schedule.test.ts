import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, HEALTHY, type SubscriptionHealth } from '../../src/core/webhook-retry.ts';
import {
  alarmTime,
  BREAKER_STREAK,
  breakerOpen,
  PROBE_MAX_MS,
  probeDelay,
  type ScheduleInput,
  startMode,
} from '../../src/core/webhook-schedule.ts';

const base: ScheduleInput = { state: 'active', earliestPendingAt: null, envelopeAt: null, expiresAt: null, suspendedAt: null };
const week = DEFAULT_RETRY_POLICY.dropNoExpiryAfterMs;

describe('alarmTime: the earliest term wins', () => {
  it.each<[string, Partial<ScheduleInput>, number | null]>([
    ['nothing owed, no expiry: no alarm', {}, null],
    ['a finite expiry alone', { expiresAt: 500 }, 500],
    ['a pending retry before the expiry', { earliestPendingAt: 100, expiresAt: 500 }, 100],
    ['the expiry before a pending retry', { earliestPendingAt: 900, expiresAt: 500 }, 500],
    ["a gap envelope's next attempt", { earliestPendingAt: 300, envelopeAt: 200, expiresAt: 500 }, 200],
    [
      'suspended: pending rows are held, not scheduled; the finite expiry stays',
      { state: 'suspended', suspendedAt: 50, earliestPendingAt: 100, envelopeAt: 120, expiresAt: 500 },
      500,
    ],
    ['suspended, no expiry: the drop time', { state: 'suspended', suspendedAt: 50, earliestPendingAt: 100 }, 50 + week],
    [
      'terminating: the terminated envelope, pending rows ignored',
      { state: 'terminating', earliestPendingAt: 10, envelopeAt: 200, expiresAt: 500 },
      200,
    ],
    ['terminating past nothing but its expiry', { state: 'terminating', expiresAt: 500 }, 500],
    ["the open breaker's probe before a row's retry", { earliestPendingAt: 900, probeAt: 300, expiresAt: 500 }, 300],
    ["a row's retry before the probe", { earliestPendingAt: 200, probeAt: 300 }, 200],
    ['suspended: no probe', { state: 'suspended', suspendedAt: 50, probeAt: 300, expiresAt: 500 }, 500],
    ['terminating: no probe', { state: 'terminating', envelopeAt: 400, probeAt: 300 }, 400],
  ])('%s', (_name, input, expected) => {
    expect(alarmTime({ ...base, ...input }, DEFAULT_RETRY_POLICY)).toBe(expected);
  });

  it('the drop time is only for a no-expiry subscription (a finite one ends at its TTL)', () => {
    expect(alarmTime({ ...base, state: 'suspended', suspendedAt: 50, expiresAt: 50 + week + 1 }, DEFAULT_RETRY_POLICY)).toBe(50 + week + 1);
  });
});

describe('breakerOpen', () => {
  const streak = (consecutiveFailures: number): SubscriptionHealth => ({ ...HEALTHY, consecutiveFailures, failingSince: 1 });
  it.each([
    ['healthy', HEALTHY, true, false],
    [`${BREAKER_STREAK - 1} failures`, streak(BREAKER_STREAK - 1), true, false],
    [`${BREAKER_STREAK} failures, a probe out`, streak(BREAKER_STREAK), true, true],
    [`${BREAKER_STREAK} failures, nothing probing: the next occurrence is the probe`, streak(BREAKER_STREAK), false, false],
    ['a long streak, a probe out', streak(50), true, true],
  ])('%s', (_name, health, probing, open) => {
    expect(breakerOpen(health, probing)).toBe(open);
  });
});

describe("startMode: the breaker's decision for the next new occurrence", () => {
  const streak = (consecutiveFailures: number): SubscriptionHealth => ({ ...HEALTHY, consecutiveFailures, failingSince: 1 });
  it.each<[string, Parameters<typeof startMode>[0], ReturnType<typeof startMode>]>([
    ['healthy: start', { health: HEALTHY, probing: true, inFlight: 3, probeAt: 500, now: 100 }, 'start'],
    [
      'a streak short of the breaker: start',
      { health: streak(BREAKER_STREAK - 1), probing: true, inFlight: 0, probeAt: 500, now: 100 },
      'start',
    ],
    [
      'open, nothing else probing: start (it is the probe)',
      { health: streak(BREAKER_STREAK), probing: false, inFlight: 0, probeAt: 500, now: 100 },
      'start',
    ],
    ['open, the probe not due: hold', { health: streak(BREAKER_STREAK), probing: true, inFlight: 0, probeAt: 500, now: 499 }, 'hold'],
    ['open, the probe due: probe', { health: streak(BREAKER_STREAK), probing: true, inFlight: 0, probeAt: 500, now: 500 }, 'probe'],
    [
      'open, due, but a first attempt in flight: hold (one probe at a time)',
      { health: streak(9), probing: true, inFlight: 1, probeAt: 500, now: 900 },
      'hold',
    ],
    [
      'open, no probe time known (a restart): probe at once',
      { health: streak(9), probing: true, inFlight: 0, probeAt: null, now: 1 },
      'probe',
    ],
  ])('%s', (_name, state, mode) => {
    expect(startMode(state)).toBe(mode);
  });
});

describe("probeDelay: the open breaker's probe steps", () => {
  const policy = DEFAULT_RETRY_POLICY;
  it.each([
    [1, 5_000, 10_000],
    [2, 10_000, 20_000],
    [3, 20_000, 40_000],
    [4, 30_000, 60_000],
    [40, 30_000, 60_000],
  ])('after failure %i: from %i to under %i ms (the upper half of its step)', (n, least, most) => {
    expect(probeDelay(n, 0, policy)).toBe(least);
    expect(probeDelay(n, 0.999_999, policy)).toBeLessThan(most);
    expect(probeDelay(n, 0.999_999, policy)).toBeGreaterThanOrEqual(most - 1);
  });

  it(`never longer than PROBE_MAX_MS (${PROBE_MAX_MS}) nor the policy's longest retry step`, () => {
    const short = { ...policy, firstRetryMs: 200, maxDelayMs: 1_000 };
    expect(probeDelay(1, 0, short)).toBe(100);
    expect(probeDelay(10, 0.999_999, short)).toBeLessThan(1_000);
    expect(probeDelay(1_000, 0.999_999, policy)).toBeLessThan(PROBE_MAX_MS);
  });

  it.each([
    [0, 0.5],
    [1, 1],
    [1, -0.1],
    [1.5, 0.5],
  ])('refuses failure %s or draw %s', (n, random) => {
    expect(() => probeDelay(n, random, policy)).toThrow(RangeError);
  });
});
