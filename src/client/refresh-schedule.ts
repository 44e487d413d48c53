/**
 * When a webhook subscription (webhook-subscription.ts) is refreshed, and how soon a failed
 * refresh is tried again. Pure: the loop asks, a table test checks the answers.
 *
 * "Unless it was granted no expiry, the client MUST call `events/subscribe` again with the same
 * subscription key before `refreshBefore` to keep the subscription alive." The refresh is due
 * early enough that a few failed attempts still fit before `refreshBefore`: it leaves a margin of
 * the larger of `refreshMarginMs` (default one minute) and a tenth of the time left, but never
 * more than half of it (so a grant shorter than twice the margin is refreshed at its middle, not
 * at once, again and again). The point is drawn from the last tenth before that margin, so that
 * many subscriptions granted at once (a deploy, a client's restart) do not refresh at once. No
 * wait is shorter than MIN_REFRESH_WAIT_MS: a server that grants a `refreshBefore` already past
 * (a skewed clock) gets a refresh a second, not a tight loop.
 *
 * A refresh that fails for now (the network, a 5xx, a 429) is tried again with backoff.ts's
 * delays for as long as the subscription is live, the reconnect budget not counted (giving up
 * would let a live subscription lapse): past `maxAttempts` every wait is the budget's longest,
 * and none runs past `refreshBefore`. After it, the subscription may have lapsed, and the next
 * attempts are a new subscribe with the budget's count (webhook-subscription.ts).
 */
import { reconnectDelay, type ReconnectOptions } from './backoff.ts';

/** The default least margin before `refreshBefore`. */
export const DEFAULT_REFRESH_MARGIN_MS = 60_000;
/** The margin is at least this share of the time left. */
export const REFRESH_MARGIN_SHARE = 0.1;
/** The refresh is drawn from this share of the time before the margin, at its end. */
export const REFRESH_JITTER_SHARE = 0.1;
/** No refresh follows the last sooner than this. */
export const MIN_REFRESH_WAIT_MS = 1_000;

/**
 * How often a no-expiry subscription is refreshed all the same, by default: a day. "Even with no
 * expiry, clients SHOULD still call `events/subscribe` … occasionally. The refresh response is
 * where the cursor advances during quiet periods, where `deliveryStatus` surfaces delivery
 * problems, and where suspended delivery reactivates." A day: the text's own figure for the
 * longest sensible finite TTL ("Refreshing once a day is not a meaningful burden"); a suspension
 * waits at most that long for the refresh that lifts it, and an idle cursor moves at least daily.
 */
export const DEFAULT_NO_EXPIRY_REFRESH_MS = 86_400_000;

/**
 * The wait before the occasional refresh of a no-expiry grant: `intervalMs`, less up to a tenth
 * (drawn, as refreshWait's point is), so that subscriptions made together do not refresh together.
 */
export function noExpiryRefreshWait(intervalMs: number, random: number): number {
  return Math.max(MIN_REFRESH_WAIT_MS, Math.floor(intervalMs * (1 - REFRESH_JITTER_SHARE * random)));
}

/** The wait before refreshing a grant with `remainingMs` left (`refreshBefore` − now); `random` in [0, 1). */
export function refreshWait(remainingMs: number, marginMs: number, random: number): number {
  const margin = Math.min(Math.max(marginMs, remainingMs * REFRESH_MARGIN_SHARE), remainingMs / 2);
  const latest = remainingMs - margin;
  return Math.max(MIN_REFRESH_WAIT_MS, Math.floor(latest * (1 - REFRESH_JITTER_SHARE * random)));
}

/**
 * The wait before attempt `failures` + 1 of a refresh of a live subscription, `untilDeadlineMs`
 * before its `refreshBefore`: backoff.ts's delay (its longest once past the budget), never past
 * the deadline; `retryAfterMs` is the answer's Retry-After.
 */
export function liveRetryWait(failures: number, options: ReconnectOptions, untilDeadlineMs: number, retryAfterMs?: number): number {
  const attempt = Math.min(failures, Math.max(0, options.maxAttempts - 1));
  const delay = reconnectDelay(attempt, undefined, { ...options, maxAttempts: attempt + 1 }, retryAfterMs) ?? options.maxDelayMs;
  return Math.max(0, Math.min(delay, untilDeadlineMs));
}
