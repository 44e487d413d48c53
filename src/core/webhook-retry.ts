/**
 * What a webhook delivery does after each attempt: retry at a time, give up (and announce the
 * loss with a `gap` envelope), or suspend the whole subscription (MCP Events, SEP-3415, *Webhook
 * event delivery*). Pure: the clock's reading and the random draw come in, a decision goes out;
 * the store keeps the state and the alarm keeps the time.
 *
 * The text: "The server retries each event independently, with exponential backoff, on non-`2xx`
 * responses." "Servers SHOULD cap both the attempt count and the elapsed retry window, for
 * example 3 to 5 attempts spread over no more than 10 to 15 minutes, and SHOULD NOT retry
 * indefinitely. Time spent with delivery suspended pauses the window and does not consume it. An
 * event whose retries are exhausted is abandoned for watermark purposes." "The server MUST treat
 * `410` as a non-retryable failure for that delivery … without affecting the subscription
 * itself", and "MUST treat `413` as a non-retryable failure for that event". Suspension: "After
 * repeated failures, at a server-defined threshold, the server MAY suspend delivery"; "base
 * suspension on a sustained failure rate over a meaningful sample and not on a fixed failure count".
 *
 * The policy (DEFAULT_RETRY_POLICY): 5 attempts; retry n waits a step of 10 s × 4^(n−1), capped
 * at 10 min (10 s, 40 s, 160 s, 600 s), drawn uniformly from the upper half of the step; give up
 * when the attempts are spent or the next would fall outside 15 min of unsuspended time. So the
 * first retry comes within 10 s, and an occurrence's retries span 6 min 45 s at least, 13 min 30 s
 * at most.
 *
 * Why half-step jitter, not full or decorrelated jitter: both of those may draw ~0 for every
 * retry, so there is no outage short enough that an occurrence is sure to outlive it. Drawing from
 * the upper half still spreads a burst of failures (a receiver down, 1,000 retries) over half of
 * every step, so a receiver that comes back is not hit by all of them at once, and it guarantees
 * the minimum span: a receiver back within 6 min 45 s of an occurrence's first attempt gets it
 * (slow attempts only lengthen the span). `jitter: 1` is full jitter, for whoever prefers it.
 *
 * Suspension: a failure streak of at least 20 attempts lasting at least 5 min. A streak is a 100%
 * failure rate over its sample; the count keeps a handful of failures of a quiet subscription
 * from suspending it, the duration keeps a burst of failures in one blip from doing so. 5 min is
 * below the minimum span, and suspension wins when both fall on one failure (held, not lost): so
 * in an outage, no occurrence first attempted during it is abandoned once the streak holds 20
 * attempts; they wait, durably, for the refresh that reactivates the subscription. A quiet
 * subscription (fewer than 20 attempts by then) abandons with a gap, as the text intends.
 * A suspended no-expiry subscription is dropped after 7 days ("MAY drop … SHOULD attempt a
 * `terminated` envelope"); a finite one ends at its TTL.
 */
import type { CallbackFailure } from './events-wire.ts';

export interface RetryPolicy {
  /** The first retry's step (its delay is at most this): 10 s. */
  readonly firstRetryMs: number;
  /** Each step is this many times the one before: 4. */
  readonly factor: number;
  /** No step is longer: 10 min. */
  readonly maxDelayMs: number;
  /** The randomized fraction of a step, at its top: 0.5 (1 is full jitter). */
  readonly jitter: number;
  /** Attempts in all, the first included: 5. */
  readonly maxAttempts: number;
  /** Unsuspended time from the first attempt within which every attempt falls: 15 min. */
  readonly windowMs: number;
  /** A failure streak suspends the subscription once it has this many attempts … : 20. */
  readonly suspendAfterFailures: number;
  /** … and has lasted this long: 5 min. */
  readonly suspendAfterMs: number;
  /** A suspended no-expiry subscription is dropped (with `terminated`) after this long: 7 days. */
  readonly dropNoExpiryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  firstRetryMs: 10_000,
  factor: 4,
  maxDelayMs: 600_000,
  jitter: 0.5,
  maxAttempts: 5,
  windowMs: 900_000,
  suspendAfterFailures: 20,
  suspendAfterMs: 300_000,
  dropNoExpiryAfterMs: 7 * 86_400_000,
};

/** One occurrence's delivery so far. */
export interface DeliveryProgress {
  /** Attempts made, the one being judged included. */
  readonly attempts: number;
  readonly firstAttemptAt: number;
  /** Time spent suspended since the first attempt: it "pauses the window and does not consume it". */
  readonly pausedMs: number;
}

/** The subscription's delivery health: what `deliveryStatus` reports and suspension is decided on. */
export interface SubscriptionHealth {
  readonly consecutiveFailures: number;
  /** The first failure of the current streak (`deliveryStatus.failedSince`); null without one. */
  readonly failingSince: number | null;
  /** A category only, "never raw endpoint bodies, headers or status lines". */
  readonly lastError: CallbackFailure | null;
  readonly lastDeliveryAt: number | null;
}

export const HEALTHY: SubscriptionHealth = { consecutiveFailures: 0, failingSince: null, lastError: null, lastDeliveryAt: null };

/** How an attempt ended: the endpoint's status, or no answer. A redirect is an answer (never followed). */
export type AttemptOutcome =
  | { readonly kind: 'response'; readonly status: number }
  | { readonly kind: 'unreachable'; readonly reason: 'connection_refused' | 'timeout' | 'tls_error' };

export type DeliveryDecision =
  /** 2xx: acknowledged, never sent again. */
  | { readonly kind: 'delivered' }
  /** 410: the receiver declined it; not retried, no gap, the subscription unaffected. */
  | { readonly kind: 'declined' }
  | { readonly kind: 'retry'; readonly at: number }
  /** Abandoned: a `gap` envelope announces it before the watermark passes it (webhook-watermark.ts). */
  | { readonly kind: 'give_up'; readonly reason: 'attempts' | 'window' | 'too_large' }
  /** Hold this and every pending delivery until a refresh reactivates the subscription. */
  | { readonly kind: 'suspend' };

export interface AttemptState {
  readonly delivery: DeliveryProgress;
  readonly health: SubscriptionHealth;
  /** When the outcome was observed. */
  readonly now: number;
}

/** RangeError unless every bound is a positive integer, `factor ≥ 1` and `0 < jitter ≤ 1`. */
export function checkRetryPolicy(policy: RetryPolicy): void {
  const { factor, jitter, ...bounds } = policy;
  for (const [name, value] of Object.entries(bounds)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`retry policy ${name} must be a positive integer, got ${value}`);
  }
  if (!(factor >= 1)) throw new RangeError(`retry policy factor must be at least 1, got ${factor}`);
  if (!(jitter > 0 && jitter <= 1)) throw new RangeError(`retry policy jitter must be in (0, 1], got ${jitter}`);
}

/** The step of retry `n` (1 for the first retry): the most it may wait. */
export function retryStep(n: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  return Math.min(policy.maxDelayMs, policy.firstRetryMs * policy.factor ** (n - 1));
}

/** The wait before retry `n`, in whole ms: uniform over the top `jitter` of its step. `random` is in [0, 1). */
export function retryDelay(n: number, random: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  if (!(random >= 0 && random < 1)) throw new RangeError(`a random draw is in [0, 1), got ${random}`);
  const step = retryStep(n, policy);
  return Math.floor(step * (1 - policy.jitter) + random * step * policy.jitter);
}

/** The least and the most time all of an occurrence's retries wait, in all (attempt durations aside). */
export function retrySpan(policy: RetryPolicy = DEFAULT_RETRY_POLICY): { readonly minMs: number; readonly maxMs: number } {
  let minMs = 0;
  let maxMs = 0;
  for (let n = 1; n < policy.maxAttempts; n++) {
    minMs += retryDelay(n, 0, policy);
    maxMs += retryStep(n, policy);
  }
  return { minMs, maxMs };
}

/** The `lastError` category of an HTTP answer that is not 2xx: 5xx, or 4xx for everything else (a redirect included). */
export function statusCategory(status: number): CallbackFailure {
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

/** The decision after an attempt. `random` is drawn at most once, for a retry's delay. */
export function nextAttempt(
  state: AttemptState,
  outcome: AttemptOutcome,
  random: () => number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): { readonly decision: DeliveryDecision; readonly health: SubscriptionHealth } {
  checkRetryPolicy(policy);
  const { delivery, health, now } = state;
  if (!Number.isSafeInteger(delivery.attempts) || delivery.attempts < 1) {
    throw new RangeError(`a judged delivery has made at least one attempt, got ${delivery.attempts}`);
  }
  if (outcome.kind === 'response') {
    const { status } = outcome;
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new RangeError(`not an HTTP status: ${status}`);
    if (status >= 200 && status < 300) return { decision: { kind: 'delivered' }, health: { ...HEALTHY, lastDeliveryAt: now } };
    if (status === 410) return { decision: { kind: 'declined' }, health };
    // The endpoint answered: its streak is not extended, but the client learns why an event was lost.
    if (status === 413) return { decision: { kind: 'give_up', reason: 'too_large' }, health: { ...health, lastError: 'http_4xx' } };
  }
  const failed: SubscriptionHealth = {
    ...health,
    consecutiveFailures: health.consecutiveFailures + 1,
    failingSince: health.failingSince ?? now,
    lastError: outcome.kind === 'response' ? statusCategory(outcome.status) : outcome.reason,
  };
  const since = failed.failingSince ?? now;
  if (failed.consecutiveFailures >= policy.suspendAfterFailures && now - since >= policy.suspendAfterMs) {
    return { decision: { kind: 'suspend' }, health: failed };
  }
  if (delivery.attempts >= policy.maxAttempts) return { decision: { kind: 'give_up', reason: 'attempts' }, health: failed };
  const delay = retryDelay(delivery.attempts, random(), policy);
  const used = now - delivery.firstAttemptAt - delivery.pausedMs;
  if (used + delay > policy.windowMs) return { decision: { kind: 'give_up', reason: 'window' }, health: failed };
  return { decision: { kind: 'retry', at: now + delay }, health: failed };
}

/**
 * A held delivery after a refresh reactivated its subscription: the suspended time is added to
 * its pause, and it is due within the first step (spread, so held deliveries do not all fire at
 * once). It then makes at least this one attempt, whatever its budget: the next judgement, by
 * nextAttempt, may end it.
 */
export function resumeHeld(
  delivery: DeliveryProgress,
  suspendedAt: number,
  resumedAt: number,
  random: number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): { readonly delivery: DeliveryProgress; readonly at: number } {
  if (resumedAt < suspendedAt) throw new RangeError('a subscription resumes after it was suspended');
  if (!(random >= 0 && random < 1)) throw new RangeError(`a random draw is in [0, 1), got ${random}`);
  const paused = delivery.firstAttemptAt < suspendedAt ? resumedAt - suspendedAt : 0;
  return { delivery: { ...delivery, pausedMs: delivery.pausedMs + paused }, at: resumedAt + Math.floor(random * policy.firstRetryMs) };
}

/** A refresh reactivates a suspended subscription: its streak starts over; `lastError` stays until a delivery succeeds. */
export function reactivated(health: SubscriptionHealth): SubscriptionHealth {
  return { ...health, consecutiveFailures: 0, failingSince: null };
}

/** Whether a suspended subscription is dropped: only a no-expiry one (a finite one ends at its TTL), after the policy's time. */
export function dropSuspended(noExpiry: boolean, suspendedAt: number, now: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): boolean {
  return noExpiry && now - suspendedAt >= policy.dropNoExpiryAfterMs;
}
