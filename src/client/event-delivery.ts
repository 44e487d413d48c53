/**
 * What followEvents (event-follower.ts) owes the application, whichever mode reads the server:
 * occurrences handed over in the order received, each awaited before the next; a cursor persisted
 * only once every occurrence before its position was handed over (so a crash re-delivers, never
 * skips: at-least-once), and only when it is new; repeats the follower can see dropped by
 * `eventId` (recent-event-ids.ts); gaps (`truncated: true`) told before their fresh cursor is
 * persisted; and nothing handed over once the follow is stopped.
 *
 * Apart from the follow's I/O (requests, retries, liveness): this holds the subscription's
 * position, `cursor` (where the next request starts) and `saved` (the last one persisted).
 */
import type { EventOccurrence } from '../core/events-wire.ts';
import type { EventsErrorObject } from './events-errors.ts';
import { RecentEventIds } from './recent-event-ids.ts';

export type EventsDeliveryMode = 'poll' | 'push';

/** A gap the server reported (`truncated: true`): occurrences after `from` may have been skipped. */
export interface EventsTruncation {
  readonly mode: EventsDeliveryMode;
  /** The position before the gap: the cursor the request started from, or the last one a push stream reached. */
  readonly from: string | null;
  /** The fresh position the server resumed at, persisted next (for a poll, after the answer's occurrences). */
  readonly cursor: string | null;
}

/** The application's side of a follow: where it starts, and what it is handed. */
export interface EventsDeliveryOptions {
  readonly mode: EventsDeliveryMode;
  /** Where to start: the last cursor the application persisted; null or absent: from now. */
  readonly cursor?: string | null;
  /** Each occurrence once (as far as the follower can see), in the order received; awaited. A throw ends the follow with it. */
  readonly onEvent: (occurrence: EventOccurrence) => void | Promise<void>;
  /** Persists a cursor (never null); awaited. Called only after the occurrences before it went to `onEvent`. */
  readonly saveCursor: (cursor: string) => void | Promise<void>;
  /** A gap: called before the fresh cursor is persisted; awaited. */
  readonly onTruncated?: (truncation: EventsTruncation) => void | Promise<void>;
  /** `notifications/events/error`, "a recoverable failure": the stream stays open; awaited. */
  readonly onError?: (error: EventsErrorObject) => void | Promise<void>;
  /** How many recent eventIds are remembered to drop repeats. Default DEFAULT_DEDUP_WINDOW (recent-event-ids.ts). */
  readonly dedupWindow?: number;
}

/** The follow was stopped: unwinds to the follower, which resolves. */
export class Stopped extends Error {}

export class EventDelivery {
  readonly #options: EventsDeliveryOptions;
  readonly #signal: AbortSignal;
  readonly #ids: RecentEventIds;
  #cursor: string | null;
  #saved: string | null;
  /** Something was handed over or persisted since the follower last cleared it: progress, for the backoff. */
  advanced = false;

  /** `signal`: the follow's stop. */
  constructor(options: EventsDeliveryOptions, signal: AbortSignal) {
    const { cursor = null } = options;
    if (cursor !== null && (typeof cursor !== 'string' || cursor === '')) throw new TypeError('cursor must be a non-empty string or null');
    this.#options = options;
    this.#signal = signal;
    this.#ids = new RecentEventIds(options.dedupWindow);
    this.#cursor = cursor;
    this.#saved = cursor;
  }

  /** Where the next request starts: the last cursor persisted, or the start; null once the server answered null. */
  get cursor(): string | null {
    return this.#cursor;
  }

  /** The last cursor handed to saveCursor (or the start). */
  get saved(): string | null {
    return this.#saved;
  }

  throwIfStopped(): void {
    if (this.#signal.aborted) throw new Stopped();
  }

  /** Hands `occurrence` to the application, unless it already was (a repeat the follower can see). */
  async deliver(occurrence: EventOccurrence): Promise<void> {
    if (this.#ids.has(occurrence.eventId)) return;
    this.throwIfStopped(); // a chunk or a batch may hold several: none is handed over after the stop
    await this.#options.onEvent(occurrence);
    this.#ids.add(occurrence.eventId);
    this.advanced = true;
  }

  /** A gap: "Clients SHOULD treat it as one … and SHOULD persist the fresh cursor" (reached() next). */
  async truncated(cursor: string | null): Promise<void> {
    this.throwIfStopped();
    await this.#options.onTruncated?.({ mode: this.#options.mode, from: this.#cursor, cursor });
  }

  /** `notifications/events/error`: told, and the stream goes on. */
  async error(error: EventsErrorObject): Promise<void> {
    this.throwIfStopped();
    await this.#options.onError?.(error);
  }

  /** The server's position, reached once everything before it was handed over: persisted if new. */
  async reached(cursor: string | null): Promise<void> {
    // "A client that receives cursor: null MUST NOT attempt to persist or replay from it": the
    // next request starts from now ("The client then has nothing to persist and always polls with null").
    if (cursor === null) {
      this.#cursor = null;
      return;
    }
    if (cursor !== this.#saved) {
      this.throwIfStopped();
      await this.#options.saveCursor(cursor);
      this.#saved = cursor;
      this.advanced = true;
    }
    this.#cursor = cursor;
  }
}
