/**
 * The application's side of a webhook subscription (webhook-subscription.ts): what it gives
 * subscribeWebhook (the subscription, its delivery, its TTL suggestion, its cursor store and
 * callbacks) and the handle it gets back. Apart from the loop, as event-delivery.ts holds what
 * followEvents owes the application: the types alone, no behaviour.
 */
import type { DeliveryStatus } from '../core/events-webhook-wire.ts';
import type { ReconnectOptions } from './backoff.ts';
import type { EventsTarget } from './events-request.ts';

/** A gap a subscribe answer reported (`truncated: true`): occurrences after `from` may not be delivered. */
export interface WebhookTruncation {
  /** The cursor the subscribe sent (the one loaded). */
  readonly from: string | null;
  /** The fresh position delivery starts from, persisted next (unless null). */
  readonly cursor: string | null;
}

/** Time as the loop sees it: the system clock unless a test gives its own. */
export interface SubscriptionClock {
  /** Now, in epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface SubscribeWebhookOptions extends Omit<EventsTarget, 'maxEvents'> {
  /** Where the server POSTs, and the `whsec_` secret it signs with (newWebhookSecret(); receiveWebhook verifies with it). */
  readonly delivery: { readonly url: string | URL; readonly secret: string };
  /** The suggested lifetime: omitted, the server's default; `null`, no expiry asked; whole milliseconds. */
  readonly ttlMs?: number | null;
  /** The last cursor the application persisted (from a delivery or from this loop); null: from now. Read before each subscribe. */
  readonly loadCursor: () => string | null | Promise<string | null>;
  /** Persists an answer's cursor (never null), to the store `loadCursor` reads; awaited. */
  readonly saveCursor: (cursor: string) => void | Promise<void>;
  /** An answer's `deliveryStatus` (a refresh's, chiefly: `lastError`, `active: false` just reactivated); awaited. */
  readonly onStatus?: (status: DeliveryStatus) => void | Promise<void>;
  /** A subscribe answered `truncated: true`: called before the fresh cursor is persisted; awaited. */
  readonly onTruncated?: (truncation: WebhookTruncation) => void | Promise<void>;
  /** Aborting stops the loop, as `stop()` does (the subscription is left to its TTL). */
  readonly signal?: AbortSignal;
  /** The least time before `refreshBefore` the refresh is due (refresh-schedule.ts). Default DEFAULT_REFRESH_MARGIN_MS. */
  readonly refreshMarginMs?: number;
  /**
   * A no-expiry grant (`refreshBefore: null`) is refreshed all the same about this often, to move
   * the cursor, read `deliveryStatus` and reactivate a suspension (refresh-schedule.ts). Default
   * DEFAULT_NO_EXPIRY_REFRESH_MS (a day); `Infinity`: never.
   */
  readonly noExpiryRefreshMs?: number;
  readonly reconnect?: Partial<ReconnectOptions>;
  /** For tests and simulations: the clock the schedule reads and waits on. */
  readonly clock?: SubscriptionClock;
  /** For tests: the refresh's jitter, in [0, 1). Default Math.random. */
  readonly random?: () => number;
}

export interface WebhookSubscriptionEnd {
  /** Whether `unsubscribe()` ended it and the server removed the subscription (or had none). */
  readonly unsubscribed: boolean;
}

export interface WebhookSubscription {
  /** The server's `id`, the `X-MCP-Subscription-Id` of every POST: stable across refreshes. */
  readonly id: string;
  /** The last grant: an ISO 8601 time, or null for no expiry. */
  readonly refreshBefore: string | null;
  /** Resolves once stopped; rejects with what ended the loop (see the file's header), or what a callback threw. */
  readonly done: Promise<WebhookSubscriptionEnd>;
  /** Stops refreshing (a refresh under way is abandoned); resolves once the loop ended. The subscription lives to its `refreshBefore`. */
  stop(): Promise<void>;
  /** Stops refreshing, then sends `events/unsubscribe` (NotFound counts as done); rejects with a typed refusal. */
  unsubscribe(): Promise<void>;
}
