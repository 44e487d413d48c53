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
 * proportion to the in-flight window and the probes, not to its length × the emit rate.
 *
 * The probe. A failing row's retries follow its own backoff (minutes apart by its fourth), and
 * must (the soak checks every gap against the policy's lower bounds): so they cannot be what
 * finds the receiver back, or a backlog held by a 2-minute outage waits up to ten more minutes
 * for a row's fifth attempt (seen: `npm run webhook-soak`, the first version). While the breaker
 * holds occurrences, the earliest held one is first-attempted on a schedule of its own — one at
 * a time, never a row's early retry — after a step that starts at the policy's first retry and
 * doubles per failure while the breaker is open, up to PROBE_MAX_MS (or the policy's longest
 * retry step, if shorter), drawn from the step's upper half: 5–10 s, 10–20 s, 20–40 s, then
 * 30–60 s. A probe is an ordinary first attempt (its own row if it fails, its own
 * retries); its 2xx closes the breaker and the backlog flows. The receiver's return is found
 * within a minute; a long outage costs a row and an alarm per minute, until the streak suspends
 * the subscription.
 */
import type { RetryPolicy, SubscriptionHealth } from './webhook-retry.ts';

/** Consecutive failed attempts that open the breaker: the one that failed and 2 more of its window. */
export const BREAKER_STREAK = 3;
/** The longest wait between two probes of an open breaker. */
export const PROBE_MAX_MS = 60_000;
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
  /** When the open breaker's next probe is due, while it holds occurrences (null otherwise). */
  readonly probeAt?: number | null;
}

/** The alarm's time, or null: none needed. */
export function alarmTime(input: ScheduleInput, policy: RetryPolicy): number | null {
  const { state, earliestPendingAt, envelopeAt, expiresAt, suspendedAt, probeAt = null } = input;
  const times: number[] = [];
  if (expiresAt !== null) times.push(expiresAt);
  if (state === 'terminating') {
    if (envelopeAt !== null) times.push(envelopeAt);
  } else if (state === 'active') {
    if (earliestPendingAt !== null) times.push(earliestPendingAt);
    if (envelopeAt !== null) times.push(envelopeAt);
    if (probeAt !== null) times.push(probeAt);
  } else if (expiresAt === null && suspendedAt !== null) {
    times.push(suspendedAt + policy.dropNoExpiryAfterMs);
  }
  return times.length === 0 ? null : Math.min(...times);
}

/** Whether new occurrences are held back: a streak of BREAKER_STREAK failures, and a probe (a failing row or an envelope) is out. */
export function breakerOpen(health: SubscriptionHealth, probing: boolean): boolean {
  return health.consecutiveFailures >= BREAKER_STREAK && probing;
}

/** What the next new occurrence may do: be first-attempted, be the open breaker's probe, or wait. */
export type StartMode = 'start' | 'probe' | 'hold';

export interface BreakerState {
  readonly health: SubscriptionHealth;
  /** A failing row awaits its retry, or a `gap` envelope is owed: something already tests the endpoint. */
  readonly probing: boolean;
  /** First attempts in flight (a probe among them: one probe at a time). */
  readonly inFlight: number;
  /** When the next probe is due (null: as soon as the breaker holds, e.g. after a restart forgot it). */
  readonly probeAt: number | null;
  readonly now: number;
}

/** The breaker's decision for the next new occurrence. */
export function startMode({ health, probing, inFlight, probeAt, now }: BreakerState): StartMode {
  if (!breakerOpen(health, probing)) return 'start';
  return inFlight === 0 && (probeAt === null || now >= probeAt) ? 'probe' : 'hold';
}

/**
 * The wait before the probe that follows failure `n` of an open breaker (1 for the first), in
 * whole ms, `random` in [0, 1): the upper half of a step starting at the policy's first retry and
 * doubling, at most PROBE_MAX_MS and never longer than the policy's longest retry step.
 */
export function probeDelay(n: number, random: number, policy: RetryPolicy): number {
  if (!(random >= 0 && random < 1)) throw new RangeError(`a random draw is in [0, 1), got ${random}`);
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`probes are counted from 1, got ${n}`);
  const step = Math.min(PROBE_MAX_MS, policy.maxDelayMs, policy.firstRetryMs * 2 ** Math.min(n - 1, 30));
  return Math.floor(step / 2 + (random * step) / 2);
}
