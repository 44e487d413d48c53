/**
 * When a webhook subscription's object must next wake, and whether its breaker holds new
 * occurrences back (docs/events.md, *Webhooks*; the object is events/webhook-object.ts). Pure:
 * the object reads its record and failing rows, these functions decide, the object sets its one
 * alarm ("Each Durable Object is able to schedule a single alarm at a time").
 *
 * The alarm is the earliest of: a pending failing row's retry (only while active: a suspended
 * subscription's pending rows are its held ones, and a row whose time passed while it was held is
 * due at once after the refresh that reactivates it, as webhook-retry.ts `resumeHeld` has it); the pending `gap` or `terminated` envelope's next
 * attempt (a `terminated` one whatever the state: it is the subscription's last word); a finite
 * expiry ("at `expires_at` the alarm ends it silently"); and, for a suspended no-expiry one, the
 * 7-day drop (webhook-retry.ts `dropSuspended`). None of them: no alarm (a no-expiry,
 * healthy subscription sleeps until poked, writing nothing).
 *
 * The breaker: a streak of BREAKER_STREAK failed attempts (the subscription's health, not one
 * occurrence's) stops first attempts of new occurrences while something is already probing the
 * endpoint — a failing row awaiting its retry, or a `gap` envelope. The new occurrences stay
 * *derived pending* (no row; their retry windows have not started: "The server retries each event
 * independently" speaks of attempted events). When nothing is left to probe with (every row gave
 * up), the next new occurrence is attempted: it becomes the probe. The first 2xx resets the
 * streak (webhook-retry.ts `nextAttempt`), which closes the breaker. So an outage costs rows in
 * proportion to the in-flight window, not to its length × the emit rate.
 */
import type { RetryPolicy, SubscriptionHealth } from './webhook-retry.ts';

/** Consecutive failed attempts that open the breaker: the one that failed and 2 more of its window. */
export const BREAKER_STREAK = 3;
/** POSTs one subscription has in flight at once (≤ 6, the platform's outgoing connections per invocation). */
export const MAX_IN_FLIGHT = 4;
/** Due failing rows one alarm run attempts; the rest are left for a run at once (bounds one run's wall-clock time). */
export const ALARM_BATCH = MAX_IN_FLIGHT * 4;

export type SubscriptionState = 'active' | 'suspended' | 'terminating';

export interface ScheduleInput {
  readonly state: SubscriptionState;
  /** Earliest `next_at` of the failing rows in state `pending`, or null. */
  readonly earliestPendingAt: number | null;
  /** The pending `gap` or `terminated` envelope's next attempt, or null. */
  readonly envelopeAt: number | null;
  /** null: no expiry. */
  readonly expiresAt: number | null;
  readonly suspendedAt: number | null;
}

/** The alarm's time, or null: none needed. */
export function alarmTime(input: ScheduleInput, policy: RetryPolicy): number | null {
  const { state, earliestPendingAt, envelopeAt, expiresAt, suspendedAt } = input;
  const times: number[] = [];
  if (expiresAt !== null) times.push(expiresAt);
  if (state === 'terminating') {
    if (envelopeAt !== null) times.push(envelopeAt);
  } else if (state === 'active') {
    if (earliestPendingAt !== null) times.push(earliestPendingAt);
    if (envelopeAt !== null) times.push(envelopeAt);
  } else if (expiresAt === null && suspendedAt !== null) {
    times.push(suspendedAt + policy.dropNoExpiryAfterMs);
  }
  return times.length === 0 ? null : Math.min(...times);
}

/** Whether new occurrences are held back: a streak of BREAKER_STREAK failures, and a probe (a failing row or an envelope) is out. */
export function breakerOpen(health: SubscriptionHealth, probing: boolean): boolean {
  return health.consecutiveFailures >= BREAKER_STREAK && probing;
}
