/**
 * subscribeWebhook: one MCP Events webhook subscription `(name, arguments, delivery.url)` kept
 * alive by its client (SEP-3415, *Webhook-Based Delivery*, *Subscription TTL*, *Unsubscribing*):
 * subscribed once, then refreshed before each `refreshBefore` until the application stops it or
 * unsubscribes. The deliveries themselves go to the application's endpoint, which hands each POST
 * to receiveWebhook (webhook-receiver.ts); the two meet only through the application's cursor store.
 *
 * First `server/discover` (events-discovery.ts): "A client MUST NOT send them [events/* requests]
 * to a server that has not advertised the extension". Then `events/subscribe`; the returned
 * promise resolves once it was answered, with the subscription's `id` (the `X-MCP-Subscription-Id`
 * of its POSTs) and `refreshBefore`. "Unless it was granted no expiry, the client MUST call
 * `events/subscribe` again with the same subscription key before `refreshBefore`": the loop does,
 * at the point refresh-schedule.ts draws. A `refreshBefore: null` grant need not be refreshed
 * ("The client is not expected to refresh or unsubscribe, ever"), but "Even with no expiry,
 * clients SHOULD still call `events/subscribe` … occasionally": it is refreshed every
 * `noExpiryRefreshMs` (a day by default), its failures tried again without a budget (the
 * subscription does not lapse). A refresh is the same request, rebuilt: "Clients therefore follow a single
 * rule, which is to always pass the last persisted cursor", so `loadCursor` is read before each.
 *
 * The cursor is the application's, in one store: its endpoint persists each delivery's `cursor`
 * (receiveWebhook's onDelivery), and this loop persists each answer's through `saveCursor` ("For
 * webhook, each `events/subscribe` refresh response carries `cursor` … The client persists it
 * exactly as it would a cursor from a delivered event"), never a null one ("A client that receives
 * `cursor: null` MUST NOT attempt to persist or replay from it"). Both are the server's safe
 * watermark, so whichever is stored last is safe to resume from. `truncated: true` ("Clients
 * SHOULD treat it as one [a gap] … and SHOULD persist the fresh cursor") is told to
 * `onTruncated` before the fresh cursor is persisted; `deliveryStatus` is handed to `onStatus`.
 *
 * Failures: the network, a 5xx, a 429 or the server's internal error are tried again with
 * backoff.ts's delays (refresh-schedule.ts: unbudgeted while the subscription is live, never past
 * `refreshBefore`). Past it the subscription may have lapsed, and the next attempt is a subscribe
 * with the persisted cursor ("If the subscription has lapsed or the server has restarted, the
 * cursor becomes the replay point"), budgeted: past `maxAttempts` without an answer the loop ends
 * with ReconnectExhaustedError. Refusals end it, typed (events-errors.ts): EventsCallbackEndpointError
 * (the endpoint failed verification), EventsRequestError (Forbidden, NotFound, Unsupported,
 * InvalidParams, ResourceExhausted, …), EventsCursorRefusedError, EventsProtocolError (an answer
 * that breaks the wire, another `id`, or a `null` grant that was not asked for: "A server MUST NOT
 * return `null` unless the client suggested `ttlMs: null`").
 *
 * `stop()` ends the loop and leaves the subscription to its TTL ("It is not required for
 * correctness, because subscriptions expire when the client stops refreshing"); `unsubscribe()`
 * ends it and sends `events/unsubscribe`, a NotFound answer counting as done (nothing to remove).
 */
import { reconnectOptions, type ReconnectOptions } from './backoff.ts';
import { ReconnectExhaustedError } from './errors.ts';
import { Stopped } from './event-delivery.ts';
import { EventsErrorCode, type JsonObject } from '../core/events-wire.ts';
import type { SubscribeResult } from '../core/events-webhook-wire.ts';
import { parseWebhookSecret } from '../core/webhook-signature.ts';
import { EventsProtocolError, type EventsProtocolReason, EventsRequestError, type EventsWebhookMethod } from './events-errors.ts';
import { discoverEvents } from './events-discovery.ts';
import { answerOf, EventsRequester, Transient } from './events-request.ts';
import { type ErrorObject, sleep } from './http.ts';
import { answeredWithin, DEFAULT_IDLE_TIMEOUT_MS } from './idle-limit.ts';
import {
  DEFAULT_NO_EXPIRY_REFRESH_MS,
  DEFAULT_REFRESH_MARGIN_MS,
  liveRetryWait,
  noExpiryRefreshWait,
  refreshWait,
} from './refresh-schedule.ts';
import { type Invalid, readSubscribeAnswer, readUnsubscribeAnswer } from './webhook-subscribe-answer.ts';
import type {
  SubscribeWebhookOptions,
  SubscriptionClock,
  WebhookSubscription,
  WebhookSubscriptionEnd,
} from './webhook-subscription-options.ts';

/** The longest single wait: a machine that slept past `refreshBefore` notices within it of waking. */
const MAX_WAIT_SLICE_MS = 60_000;
const SYSTEM_CLOCK: SubscriptionClock = { now: () => Date.now(), sleep };

/**
 * Subscribes, and keeps the subscription alive until stopped. Rejects, with nothing left running,
 * when `server/discover` or the first `events/subscribe` is refused (as `done` would), or with
 * `signal`'s reason if it aborts first.
 */
export async function subscribeWebhook(options: SubscribeWebhookOptions): Promise<WebhookSubscription> {
  const subscriber = new WebhookSubscriber(options);
  await subscriber.start();
  const done = subscriber.run();
  return {
    get id() {
      return subscriber.id;
    },
    get refreshBefore() {
      return subscriber.refreshBefore;
    },
    done,
    stop: () => subscriber.stop(),
    unsubscribe: () => subscriber.unsubscribe(),
  };
}

class WebhookSubscriber {
  readonly #options: SubscribeWebhookOptions;
  readonly #requester: EventsRequester;
  readonly #reconnect: ReconnectOptions;
  readonly #clock: SubscriptionClock;
  readonly #stopper = new AbortController();
  readonly #signal: AbortSignal;
  readonly #url: string;
  readonly #marginMs: number;
  readonly #noExpiryRefreshMs: number;
  #nextId = 1;
  #result: SubscribeResult | undefined;
  /** The cursor of the last subscribe sent: what a typed error reports. */
  #cursor: string | null = null;
  #running: Promise<unknown> = Promise.resolve();
  #unsubscribing: Promise<void> | undefined;

  constructor(options: SubscribeWebhookOptions) {
    const {
      name,
      delivery,
      ttlMs,
      refreshMarginMs = DEFAULT_REFRESH_MARGIN_MS,
      noExpiryRefreshMs = DEFAULT_NO_EXPIRY_REFRESH_MS,
    } = options;
    if (typeof name !== 'string' || name === '') throw new TypeError('name must be a non-empty string');
    const secret = parseWebhookSecret(delivery?.secret);
    if (!secret.ok) throw new TypeError(`delivery.secret is not a whsec_ secret of 24 to 64 bytes (${secret.reason})`);
    if (ttlMs !== undefined && ttlMs !== null && !Number.isSafeInteger(ttlMs))
      throw new RangeError(`ttlMs must be an integer or null, got ${ttlMs}`);
    if (!(Number.isFinite(refreshMarginMs) && refreshMarginMs >= 0))
      throw new RangeError(`refreshMarginMs must be non-negative, got ${refreshMarginMs}`);
    if (!(noExpiryRefreshMs > 0)) throw new RangeError(`noExpiryRefreshMs must be positive (Infinity: never), got ${noExpiryRefreshMs}`);
    this.#options = options;
    this.#url = new URL(delivery.url).href;
    this.#marginMs = refreshMarginMs;
    this.#noExpiryRefreshMs = noExpiryRefreshMs;
    this.#requester = new EventsRequester(options);
    this.#reconnect = reconnectOptions(options.reconnect);
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#signal = options.signal === undefined ? this.#stopper.signal : AbortSignal.any([options.signal, this.#stopper.signal]);
  }

  get id(): string {
    return this.#result!.id;
  }

  get refreshBefore(): string | null {
    return this.#result!.refreshBefore;
  }

  /** `server/discover`, then the first `events/subscribe`. */
  async start(): Promise<void> {
    try {
      // "A client MUST NOT send them to a server that has not advertised the extension": asked first.
      await this.#retrying(() => discoverEvents(this.#requester, this.#options.name, null, this.#nextId++, this.#signal), undefined);
      await this.#retrying(() => this.#subscribe(), undefined);
    } catch (error) {
      if (error instanceof Stopped) throw this.#signal.reason;
      throw error;
    }
  }

  /** The refresh loop, until stopped. */
  run(): Promise<WebhookSubscriptionEnd> {
    const running = this.#refreshing();
    this.#running = running.catch(() => undefined);
    return running.then(async () => ({
      unsubscribed: await (this.#unsubscribing?.then(
        () => true,
        () => false,
      ) ?? false),
    }));
  }

  async stop(): Promise<void> {
    this.#stopper.abort();
    await this.#running;
  }

  unsubscribe(): Promise<void> {
    this.#unsubscribing ??= this.stop().then(() => this.#unsubscribe());
    return this.#unsubscribing;
  }

  async #refreshing(): Promise<void> {
    try {
      for (;;) {
        const { refreshBefore } = this.#result!;
        const random = (this.#options.random ?? Math.random)();
        if (refreshBefore === null) {
          // No expiry: "Even with no expiry, clients SHOULD still call `events/subscribe` … occasionally."
          // Never lapsing, it is tried again until answered (an unbounded deadline: no budget).
          await this.#sleepUntil(this.#clock.now() + noExpiryRefreshWait(this.#noExpiryRefreshMs, random));
          await this.#retrying(() => this.#subscribe(), Number.POSITIVE_INFINITY);
        } else {
          const deadline = Date.parse(refreshBefore);
          const now = this.#clock.now();
          await this.#sleepUntil(now + refreshWait(deadline - now, this.#marginMs, random));
          await this.#retrying(() => this.#subscribe(), deadline);
        }
      }
    } catch (error) {
      if (error instanceof Stopped) return;
      throw error;
    }
  }

  /**
   * `attempt` until it is answered, trying again what failed for now: before `deadline` (a live
   * subscription's `refreshBefore`) without a budget and never past it; after it, or without one,
   * within the reconnect budget. `signal` stops it (Stopped).
   */
  async #retrying<T>(attempt: () => Promise<T>, deadline: number | undefined, signal = this.#signal): Promise<T> {
    let failures = 0;
    let live = deadline;
    for (;;) {
      throwIfStopped(signal);
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof Transient)) throw error;
        // An abort surfaces as whatever the fetch it interrupted threw.
        throwIfStopped(signal);
        const now = this.#clock.now();
        if (live !== undefined && now >= live) {
          // Past `refreshBefore` the subscription may have lapsed: from here on, a new subscribe, budgeted.
          live = undefined;
          failures = 0;
        }
        if (live === undefined && failures >= this.#reconnect.maxAttempts) {
          throw new ReconnectExhaustedError(failures, this.#cursor ?? undefined, error.cause ?? error);
        }
        const wait = liveRetryWait(
          failures,
          this.#reconnect,
          live === undefined ? Number.POSITIVE_INFINITY : live - now,
          error.retryAfterMs,
        );
        failures++;
        await this.#sleepUntil(now + wait, signal);
      }
    }
  }

  /** One `events/subscribe` (the first, a refresh or a resubscribe alike), from the cursor loaded now. */
  async #subscribe(): Promise<void> {
    const { name, arguments: args = {}, maxAgeMs, ttlMs, onTruncated, saveCursor, onStatus } = this.#options;
    const cursor = await this.#options.loadCursor();
    if (cursor !== null && (typeof cursor !== 'string' || cursor === ''))
      throw new TypeError('loadCursor must give a non-empty string or null');
    this.#throwIfStopped();
    this.#cursor = cursor;
    const id = this.#nextId++;
    const params: JsonObject = {
      name,
      arguments: args,
      delivery: { url: this.#url, secret: this.#options.delivery.secret },
      // "Clients therefore follow a single rule, which is to always pass the last persisted cursor."
      cursor,
      ...(maxAgeMs !== undefined && { maxAgeMs }),
      ...(ttlMs !== undefined && { ttlMs }),
    };
    const answer = readSubscribeAnswer(await this.#post('events/subscribe', id, params, this.#signal), id);
    if (answer.kind !== 'result') throw this.#refusal('events/subscribe', answer);
    const { result } = answer;
    if (this.#result !== undefined && result.id !== this.#result.id) {
      throw this.#violation('wrong_subscription', `the refresh answered for ${result.id}, not ${this.#result.id}`);
    }
    if (result.refreshBefore === null && ttlMs !== null) {
      throw this.#violation('malformed_result', 'refreshBefore: null (no expiry) was granted without ttlMs: null');
    }
    this.#result = result;
    // "For event types that do not support replay, where cursor is always null, truncated SHOULD be false and clients SHOULD ignore it."
    if (result.truncated && !(cursor === null && result.cursor === null)) {
      this.#throwIfStopped();
      await onTruncated?.({ from: cursor, cursor: result.cursor });
    }
    // A cursor already stored is not written again.
    if (result.cursor !== null && result.cursor !== cursor) {
      this.#throwIfStopped();
      await saveCursor(result.cursor);
    }
    if (result.deliveryStatus !== undefined) {
      this.#throwIfStopped();
      await onStatus?.(result.deliveryStatus);
    }
  }

  /** `events/unsubscribe` with the subscription's key, until answered; NotFound is done. */
  async #unsubscribe(): Promise<void> {
    const { name, arguments: args = {} } = this.#options;
    const params: JsonObject = { name, arguments: args, delivery: { url: this.#url } };
    // Not the loop's signal, which stop() has just aborted: bounded by the idle limit and the budget.
    const signal = new AbortController().signal;
    await this.#retrying(
      async () => {
        const id = this.#nextId++;
        const answer = readUnsubscribeAnswer(await this.#post('events/unsubscribe', id, params, signal), id);
        if (answer.kind === 'result') return;
        const refusal = this.#refusal('events/unsubscribe', answer);
        // "for webhooks, no matching subscription": expired, unsubscribed before, or never made. Nothing to remove.
        if (refusal instanceof EventsRequestError && refusal.code === EventsErrorCode.NotFound) return;
        throw refusal;
      },
      undefined,
      signal,
    );
  }

  /** POSTs one request answered at once: its body, or a typed refusal of a non-2xx answer (Transient for another attempt). */
  async #post(method: EventsWebhookMethod, id: number, params: JsonObject, signal: AbortSignal): Promise<unknown> {
    // Answered at once: one whose answer has not begun within the idle limit went down a dead connection.
    const idleMs = DEFAULT_IDLE_TIMEOUT_MS;
    const response = await answeredWithin(idleMs, signal, (attempt) => this.#requester.call(method, id, params, attempt));
    if (!response.ok) return this.#requester.refused(method, response, this.#cursor, idleMs);
    return answerOf(response, idleMs);
  }

  /** What an in-band refusal or a broken answer of `method` ends with. */
  #refusal(method: EventsWebhookMethod, answer: { readonly kind: 'error'; readonly error: ErrorObject } | Invalid): Error {
    if (answer.kind === 'error') return this.#requester.failure(method, 200, answer.error, this.#cursor);
    return this.#violation(answer.reason, answer.detail);
  }

  /** Waits until `at` on the clock, in slices (a suspended machine's timers do not count its sleep); Stopped once stopped. */
  async #sleepUntil(at: number, signal = this.#signal): Promise<void> {
    for (let now = this.#clock.now(); now < at; now = this.#clock.now()) {
      throwIfStopped(signal);
      await this.#clock.sleep(Math.min(at - now, MAX_WAIT_SLICE_MS), signal);
    }
    throwIfStopped(signal);
  }

  #throwIfStopped(): void {
    throwIfStopped(this.#signal);
  }

  #violation(reason: EventsProtocolReason, detail: string): EventsProtocolError {
    return new EventsProtocolError(this.#options.name, this.#cursor, reason, detail);
  }
}

function throwIfStopped(signal: AbortSignal): void {
  if (signal.aborted) throw new Stopped();
}
