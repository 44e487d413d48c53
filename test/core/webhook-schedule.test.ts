import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, HEALTHY, type SubscriptionHealth } from '../../src/core/webhook-retry.ts';
import { alarmTime, BREAKER_STREAK, breakerOpen, type ScheduleInput } from '../../src/core/webhook-schedule.ts';

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
