/**
 * followEvents: one MCP Events subscription `(name, arguments)` (SEP-3415, draft; docs/events.md)
 * followed by poll (`events/poll`) or push (`events/stream`) until the application stops it or
 * the subscription ends, across any number of broken connections.
 *
 * First, once per follow, `server/discover`: "A client MUST NOT send them [events/* requests] to a
 * server that has not advertised the extension", so a server that did not ends the follow with
 * EventsUnsupportedError before any (events-discovery.ts).
 *
 * The cursor is the application's: it gives the one to start from (null: "start from now") and
 * persists each new one through `saveCursor`, which is called only after every occurrence before
 * that position was handed to `onEvent` (and each callback is awaited before the next). A crash
 * therefore re-delivers, never skips: delivery is at-least-once, and the occurrences the follower
 * sees twice (a reconnect's replay, a retried poll) are dropped by `eventId` (recent-event-ids.ts).
 * "A client that receives `cursor: null` MUST NOT attempt to persist or replay from it": nothing is
 * saved, and the next request starts from now. `truncated: true` (a gap: retention, `maxAgeMs`, a
 * reset log) is handed to `onTruncated`, then the fresh cursor is persisted: "Clients SHOULD treat
 * it as one … and SHOULD persist the fresh cursor."
 *
 * Poll: after each answer, "when [hasMore] is true, the client SHOULD poll again immediately with
 * the updated cursor, ignoring nextPollMs", else it waits `nextPollMs`, at least `pollFloorMs`.
 * Push: the stream is read to its end, and opened again with the last cursor whether or not the
 * server sent its `StreamEventsResult` ("Clients MUST NOT depend on receiving it"). No request
 * timeout applies to it ("Clients SHOULD NOT apply their default request timeout to
 * events/stream: the heartbeat is the liveness signal"); instead, "a client that has received
 * neither an event nor a heartbeat for more than twice the heartbeat interval SHOULD treat the
 * stream as dead and reconnect with its cursor". `notifications/events/error` goes to `onError`
 * and the stream stays; `notifications/events/terminated` ends the follow with
 * EventsTerminatedError and nothing is reopened.
 *
 * This file holds the follow: the requests' attempts and their backoff, and the reading of each
 * answer. What the application is owed (order, persistence, deduplication) is event-delivery.ts's;
 * the requests and what their refusals mean, events-request.ts's; the server's advertisement,
 * events-discovery.ts's; reading the answers, event-messages.ts's; the typed errors,
 * events-errors.ts's; the backoff, backoff.ts's.
 */
import { DEFAULT_POLL_FLOOR_MS, MAX_HEARTBEAT_MS } from '../core/events-wire.ts';
import { reconnectDelay, reconnectOptions, STEADY_CONNECTION_MS, type ReconnectOptions } from './backoff.ts';
import { IdleConnectionError, ReconnectExhaustedError } from './errors.ts';
import { EventDelivery, Stopped, type EventsDeliveryOptions } from './event-delivery.ts';
import { EventsProtocolError, EventsTerminatedError } from './events-errors.ts';
import { discoverEvents } from './events-discovery.ts';
import { answerOf, EventsRequester, parseJson, Transient, type EventsTarget } from './events-request.ts';
import { readPollAnswer, readStreamMessage, type Invalid, type StreamMessage } from './event-messages.ts';
import { mediaType, sleep } from './http.ts';
import { answeredWithin, DEFAULT_IDLE_TIMEOUT_MS } from './idle-limit.ts';
import { sseBody, sseFrames } from './sse-frames.ts';

/** The subscription, where its requests go (EventsTarget, events-request.ts), what the application is handed (event-delivery.ts), and how it is followed. */
export interface FollowEventsOptions extends EventsTarget, EventsDeliveryOptions {
  /** Push: the server's heartbeat interval; a stream silent for twice it is reopened. Default MAX_HEARTBEAT_MS (the SEP's "at least every 30 seconds"). */
  readonly heartbeatMs?: number;
  /** Poll: the shortest wait between polls whatever `nextPollMs` says. Default DEFAULT_POLL_FLOOR_MS. */
  readonly pollFloorMs?: number;
  /** Aborting ends the follow: `done` resolves with the last cursor persisted. Same as `stop()`. */
  readonly signal?: AbortSignal;
  readonly reconnect?: Partial<ReconnectOptions>;
}

export interface EventFollowEnd {
  /** The last cursor persisted (or the one the follow started from). */
  readonly cursor: string | null;
}

export interface EventFollow {
  /**
   * Resolves when the follow is stopped; rejects with EventsUnsupportedError (the server does not
   * offer Events: no events/* request was sent), EventsTerminatedError, EventsCursorRefusedError,
   * EventsRequestError, EventsProtocolError, HttpStatusError, ReconnectExhaustedError, or what a callback threw.
   */
  readonly done: Promise<EventFollowEnd>;
  /** Ends the follow (its stream closed, no callback after the one running), as aborting `signal` does. */
  stop(): void;
  /** The last cursor persisted (or the start). */
  readonly cursor: string | null;
}

/**
 * Follows one subscription until stopped.
 *
 * ```ts
 * const follow = followEvents({
 *   url: 'https://mcp.example.com/mcp',
 *   name: 'demo.note',
 *   arguments: { contains: 'deploy' },
 *   mode: 'push',
 *   cursor: await store.get('demo.note'), // null the first time: from now
 *   headers: { Authorization: `Bearer ${token}` },
 *   onEvent: (note) => queue.add(note.eventId, note.data), // untrusted data, like a tool result
 *   saveCursor: (cursor) => store.set('demo.note', cursor),
 *   onTruncated: ({ from }) => log.warn('notes may have been missed after', from),
 * });
 * await follow.done; // rejects with EventsTerminatedError when the server ends the subscription
 * ```
 */
export function followEvents(options: FollowEventsOptions): EventFollow {
  const follower = new EventFollower(options);
  const done = follower.run();
  return {
    done,
    stop: () => follower.stop(),
    get cursor() {
      return follower.saved;
    },
  };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

class EventFollower {
  readonly #options: FollowEventsOptions;
  readonly #requester: EventsRequester;
  readonly #reconnect: ReconnectOptions;
  readonly #delivery: EventDelivery;
  readonly #stopper = new AbortController();
  readonly #signal: AbortSignal;
  readonly #silenceMs: number;
  readonly #pollFloorMs: number;
  #nextId = 1;
  /** The server's last `retry:`, the backoff's base. */
  #retryMs: number | undefined;

  constructor(options: FollowEventsOptions) {
    const { name, mode, heartbeatMs = MAX_HEARTBEAT_MS, pollFloorMs = DEFAULT_POLL_FLOOR_MS } = options;
    if (typeof name !== 'string' || name === '') throw new TypeError('name must be a non-empty string');
    if (mode !== 'poll' && mode !== 'push') throw new TypeError(`mode must be 'poll' or 'push', got ${String(mode)}`);
    if (!(Number.isFinite(heartbeatMs) && heartbeatMs > 0 && 2 * heartbeatMs <= MAX_TIMER_MS))
      throw new RangeError(`heartbeatMs must be positive and at most ${MAX_TIMER_MS / 2}, got ${heartbeatMs}`);
    if (!(Number.isFinite(pollFloorMs) && pollFloorMs >= 0 && pollFloorMs <= MAX_TIMER_MS))
      throw new RangeError(`pollFloorMs must be between 0 and ${MAX_TIMER_MS}, got ${pollFloorMs}`);
    this.#options = options;
    this.#requester = new EventsRequester(options);
    this.#reconnect = reconnectOptions(options.reconnect);
    this.#signal = options.signal === undefined ? this.#stopper.signal : AbortSignal.any([options.signal, this.#stopper.signal]);
    this.#delivery = new EventDelivery(options, this.#signal);
    this.#silenceMs = 2 * heartbeatMs;
    this.#pollFloorMs = pollFloorMs;
  }

  get saved(): string | null {
    return this.#delivery.saved;
  }

  stop(): void {
    this.#stopper.abort();
  }

  async run(): Promise<EventFollowEnd> {
    try {
      // "A client MUST NOT send them to a server that has not advertised the extension": asked once, before any.
      await this.#retrying(() => discoverEvents(this.#requester, this.#options.name, this.#delivery.cursor, this.#nextId++, this.#signal));
      for (;;) {
        if (this.#options.mode === 'push') await this.#retrying(() => this.#stream());
        else {
          const wait = await this.#retrying(() => this.#poll());
          if (wait > 0) await sleep(wait, this.#signal);
        }
      }
    } catch (error) {
      if (error instanceof Stopped) return { cursor: this.#delivery.saved };
      throw error;
    }
  }

  /** `attempt` until it succeeds or fails for good; attempts count only while none makes progress. */
  async #retrying<T>(attempt: () => Promise<T>): Promise<T> {
    let failures = 0;
    for (;;) {
      this.#throwIfStopped();
      this.#delivery.advanced = false;
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof Transient)) throw error;
        // An abort surfaces as whatever the fetch or the read it interrupted threw.
        this.#throwIfStopped();
        if (this.#delivery.advanced) failures = 0;
        const delay = reconnectDelay(failures, this.#retryMs, this.#reconnect, error.retryAfterMs);
        if (delay === undefined) throw new ReconnectExhaustedError(failures, this.#delivery.cursor ?? undefined, error.cause ?? error);
        failures++;
        await sleep(delay, this.#signal);
      }
    }
  }

  #throwIfStopped(): void {
    this.#delivery.throwIfStopped();
  }

  /** One `events/poll` and what it delivered: the wait before the next (0: at once). */
  async #poll(): Promise<number> {
    const id = this.#nextId++;
    const from = this.#delivery.cursor;
    // A poll is answered at once: one whose answer has not begun within the idle limit went down a dead connection.
    const idleMs = DEFAULT_IDLE_TIMEOUT_MS;
    const response = await answeredWithin(idleMs, this.#signal, (signal) => this.#requester.post('events/poll', id, from, signal));
    if (!response.ok) return this.#requester.refused('events/poll', response, from, idleMs);
    const answer = readPollAnswer(await answerOf(response, idleMs), id, this.#options.name);
    if (answer.kind === 'error') throw this.#requester.failure('events/poll', 200, answer.error, from);
    if (answer.kind === 'invalid') throw this.#violation(answer);
    const { result } = answer;
    if (result.truncated) await this.#delivery.truncated(result.cursor);
    for (const occurrence of result.events) await this.#delivery.deliver(occurrence);
    await this.#delivery.reached(result.cursor);
    // "When it is true, the client SHOULD poll again immediately with the updated cursor, ignoring
    // nextPollMs" (without a cursor there is no backlog to drain: from now again is the same poll).
    if (result.hasMore && result.cursor !== null) return 0;
    // "Clients SHOULD apply a configurable floor (default 1000 ms) so that a misbehaving server cannot induce a tight loop."
    return Math.max(result.nextPollMs, this.#pollFloorMs);
  }

  /** One `events/stream`, read until it ends, breaks or goes silent: each way, another attempt with the last cursor. */
  async #stream(): Promise<never> {
    const id = this.#nextId++;
    const from = this.#delivery.cursor;
    const attempt = new AbortController();
    const signal = AbortSignal.any([this.#signal, attempt.signal]);
    // The only limit on the stream, its open included: neither an event nor a heartbeat for twice the interval.
    const silence = new Watchdog(this.#silenceMs, () => attempt.abort(new IdleConnectionError(this.#silenceMs)));
    const opened = Date.now();
    silence.arm();
    try {
      const response = await this.#requester.post('events/stream', id, from, signal);
      if (!response.ok) return await this.#requester.refused('events/stream', response, from, this.#silenceMs);
      if (mediaType(response) === 'application/json') {
        // Answered at once: a refusal ("no stream is opened"), or a result (the stream closed at once).
        const message = readStreamMessage(await answerOf(response, this.#silenceMs), id, this.#options.name);
        if (message.kind === 'end' || message.kind === 'refused' || message.kind === 'invalid') await this.#take(message, from);
        else throw this.#violation({ kind: 'invalid', reason: 'unexpected_response', detail: 'a JSON answer that is not a response' });
        throw new Transient('the stream ended at once');
      }
      const broken = (cause: unknown) => new Transient('the stream broke', { cause });
      reading: for await (const frames of sseFrames(await sseBody(response), signal, broken)) {
        for (const frame of frames) {
          if (frame.retry !== undefined) this.#retryMs = frame.retry;
          if (frame.data === undefined || frame.data === '' || (frame.event ?? 'message') !== 'message') continue;
          const message = readStreamMessage(parseJson(frame.data), id, this.#options.name);
          // A comment or an unknown message says nothing of the subscription; anything else is its
          // server speaking. The application's callbacks run unwatched, then the window starts again.
          if (message.kind === 'other') continue;
          silence.disarm();
          if ((await this.#take(message, from)) === 'end') break reading;
          silence.arm();
        }
      }
      this.#throwIfStopped();
      if (attempt.signal.aborted) throw new Transient('the stream went silent', { cause: attempt.signal.reason });
      throw new Transient('the stream ended');
    } finally {
      silence.disarm();
      // A stream kept open a while, then ended (the server's connection age, a deploy), is not a failed attempt.
      if (Date.now() - opened >= STEADY_CONNECTION_MS) this.#delivery.advanced = true;
    }
  }

  /** Acts on one message of a push stream: `end` at the server's StreamEventsResult. */
  async #take(message: StreamMessage, from: string | null): Promise<'end' | 'more'> {
    switch (message.kind) {
      case 'active':
        // First, or mid-stream for a gap: "a fresh notifications/events/active with truncated: true and a new cursor".
        if (message.truncated) await this.#delivery.truncated(message.cursor);
        await this.#delivery.reached(message.cursor);
        return 'more';
      case 'event':
        await this.#delivery.deliver(message.occurrence);
        // "the subscription's position after this event"; absent is null, as everywhere.
        await this.#delivery.reached(message.occurrence.cursor ?? null);
        return 'more';
      case 'heartbeat':
        // "cursor is the position the server has checked up to, so the client's persisted cursor advances even when no events match".
        await this.#delivery.reached(message.cursor);
        return 'more';
      case 'error':
        await this.#delivery.error(message.error);
        return 'more';
      case 'terminated':
        // "The client SDK SHOULD remove the subscription and notify the application": not reopened.
        throw new EventsTerminatedError(this.#options.name, this.#delivery.saved, message.error);
      case 'end':
        return 'end';
      case 'refused':
        throw this.#requester.failure('events/stream', 200, message.error, from);
      case 'other':
        return 'more';
      case 'invalid':
        throw this.#violation(message);
    }
  }

  #violation(invalid: Invalid): EventsProtocolError {
    return new EventsProtocolError(this.#options.name, this.#delivery.saved, invalid.reason, invalid.detail);
  }
}

/** Calls `onSilent` once `ms` pass between arm() and disarm(). */
class Watchdog {
  readonly #ms: number;
  readonly #onSilent: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number, onSilent: () => void) {
    this.#ms = ms;
    this.#onSilent = onSilent;
  }

  arm(): void {
    this.disarm();
    this.#timer = setTimeout(this.#onSilent, this.#ms);
  }

  disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
