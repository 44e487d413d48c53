/**
 * `events/stream` on an upstream-backed type (upstream-event-type.ts; SEP-3415, *Push*): the same
 * messages as a log's push stream (push-stream.ts) — `notifications/events/active` first,
 * each selected occurrence as `notifications/events/event` with its cursor, a heartbeat every
 * EVENTS_HEARTBEAT_MS with the checked-up-to cursor, the subscription id in every `_meta`, the
 * `StreamEventsResult` when the server ends it — but no object is involved: the Worker that holds
 * the stream reads the author's upstream itself, a page after the stream's position every
 * `pollIntervalMs` (at once while the author says `hasMore`), and nothing in between.
 *
 * Position. The stream's position is the author's cursor after the last page it handled (every
 * occurrence before it delivered or not selected): the heartbeat's cursor. The author gives one
 * cursor per page, so an event's own cursor ("the subscription's position after this event") is
 * the author's per-occurrence cursor where it gave one; otherwise, for the last occurrence of a
 * page, the page's cursor, and for an earlier one the last position known to be at or before it
 * (the page's start, or an earlier occurrence's own cursor). Such a cursor is never after an
 * occurrence not yet delivered: a client reconnecting with it is served again from there, and
 * drops by `eventId` what it already has — at least once, never a skip.
 *
 * `active` carries the position reading starts from (the cursor given; for `cursor: null`, the
 * upstream's head as the author answered it) and `truncated` from the first read: it is written
 * only once that read succeeded, so a first read that fails opens no stream (the request is
 * answered UPSTREAM_ERROR, as a poll). A later page the author answers `truncated` (the upstream's
 * retention overtook the stream) is "a fresh notifications/events/active with truncated: true".
 * A later read that fails is "a recoverable failure, such as a single failed upstream fetch. The
 * subscription stays active, and the server retries and resumes": one `notifications/events/error`
 * (UPSTREAM_ERROR) per run of failures, then reads again from the same position, backing off.
 *
 * Bounds and revocation are the host's (edge-events.ts), as for every push stream; what every
 * push stream owes its client besides its occurrences (order, heartbeats, a client reading
 * slowly, the end), stream-body.ts's.
 */
import { type CursorKeys, mintUpstreamCursor } from '../core/event-cursor.ts';
import { type EventsError, EventsNotification, UPSTREAM_ERROR } from '../core/events-wire.ts';
import { log } from '../core/log.ts';
import type { PushStream } from './push-stream.ts';
import { EventStreamBody, type StreamBodyOptions, type StreamFeed } from './stream-body.ts';
import { type CheckedPage, UpstreamReadError } from './upstream-event-type.ts';
import { ageFloor, beforeFloor, type UpstreamSubscription } from './upstream-poll.ts';

export interface UpstreamFeedOptions extends StreamBodyOptions {
  readonly subscription: UpstreamSubscription;
  readonly maxAgeMs: number | undefined;
  readonly keys: CursorKeys;
}

/** Occurrences and bytes one read asks for, as a log's push stream reads its backlog. */
const PAGE = 64;
const PAGE_BYTES = 256 * 1024;
/** A failing upstream is read again after pollIntervalMs, doubling up to this (or pollIntervalMs if longer). */
const RETRY_MAX_MS = 60_000;

/** The push stream of an upstream-backed subscription, once its first read succeeded; else UpstreamReadError. */
export async function openUpstreamFeed(options: UpstreamFeedOptions): Promise<PushStream> {
  const feed = new UpstreamFeed(options);
  await feed.start();
  return feed;
}

class UpstreamFeed implements PushStream, StreamFeed {
  readonly #options: UpstreamFeedOptions;
  readonly #body: EventStreamBody;
  readonly #floor: number | undefined;
  /** The author's cursor after the last page handled; null: from now (an upstream that cannot replay). */
  #position: string | null = null;
  /** A read is under way, or its page not yet handled: no other read starts (the position is not yet moved). */
  #busy = true;
  #failures = 0;
  #readTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: UpstreamFeedOptions) {
    this.#options = options;
    this.#body = new EventStreamBody(options, this);
    this.#floor = ageFloor(options.maxAgeMs, options.subscription.upstream.from);
  }

  get response(): Response {
    return this.#body.response;
  }

  /** The first read, then `active` and its occurrences; throws UpstreamReadError (nothing opened). */
  async start(): Promise<void> {
    const { from } = this.#options.subscription.upstream;
    const first = await this.#readFrom(from);
    // From now, the position is the head the author answered; else the cursor given.
    const start = from ?? first.cursor;
    this.#handle(async () => {
      this.#position = start;
      const truncated = first.truncated || first.occurrences.some((o) => beforeFloor(o.timestamp, this.#floor));
      this.#body.write({ method: EventsNotification.active, params: { cursor: await this.#seal(start), truncated, ...this.#body.meta() } });
      await this.#deliver(first, start);
      this.#next(first);
    });
    this.#body.open();
  }

  terminate(error: EventsError): void {
    this.#body.terminate(error);
  }

  checkedCursor(): Promise<string | null> {
    return this.#seal(this.#position);
  }

  /** The client is behind: no read is scheduled until it has read (#next, #schedule check the body). */
  pause(): void {}

  resume(): void {
    this.#schedule(0);
  }

  failed(error: unknown): void {
    log({ msg: 'mcp.events.error', error: `upstream feed: ${String(error)}` });
  }

  release(): void {
    if (this.#readTimer !== undefined) clearTimeout(this.#readTimer);
  }

  #readFrom(from: string | null): Promise<CheckedPage> {
    const { upstream, args } = this.#options.subscription;
    return upstream.type.readPage(args, from, PAGE, PAGE_BYTES);
  }

  /** One read after the position; its page handled in order, or the failure told and retried. */
  async #read(): Promise<void> {
    if (this.#body.ended || this.#body.paused || this.#busy) return;
    this.#busy = true;
    const from = this.#position;
    let page: CheckedPage;
    try {
      page = await this.#readFrom(from);
    } catch (error) {
      if (!(error instanceof UpstreamReadError)) log({ msg: 'mcp.events.error', error: `upstream feed: ${String(error)}` });
      this.#body.enqueue(() => this.#failed());
      return;
    }
    this.#handle(async () => {
      this.#failures = 0;
      if (page.truncated || page.occurrences.some((o) => beforeFloor(o.timestamp, this.#floor))) {
        // "a fresh notifications/events/active with truncated: true and a new cursor".
        this.#body.write({
          method: EventsNotification.active,
          params: { cursor: await this.#seal(from), truncated: true, ...this.#body.meta() },
        });
      }
      await this.#deliver(page, from);
      this.#next(page);
    });
  }

  /** Writes the page's selected occurrences, each with a cursor never after one not yet written; then moves the position. */
  async #deliver(page: CheckedPage, from: string | null): Promise<void> {
    const { subscription } = this.#options;
    let safe = from;
    for (const [index, occurrence] of page.occurrences.entries()) {
      const after = index === page.occurrences.length - 1 ? page.cursor : (occurrence.cursor ?? safe);
      if (!beforeFloor(occurrence.timestamp, this.#floor) && subscription.accepts(occurrence.data)) {
        const { eventId, timestamp, data } = occurrence;
        this.#body.write({
          method: EventsNotification.event,
          params: { eventId, name: subscription.type.name, timestamp, data, cursor: await this.#seal(after), ...this.#body.meta() },
        });
      }
      safe = occurrence.cursor ?? safe;
    }
    this.#position = page.cursor;
  }

  /** The next read: at once while the author has more, else after pollIntervalMs; none while the client is behind. */
  #next(page: CheckedPage): void {
    this.#busy = false;
    if (!this.#body.paused) this.#schedule(page.hasMore ? 0 : this.#options.subscription.upstream.type.pollIntervalMs);
  }

  #failed(): void {
    this.#busy = false;
    this.#failures++;
    // "reports a recoverable failure … The subscription stays active, and the server retries and resumes." Once per run of failures.
    if (this.#failures === 1)
      this.#body.write({ method: EventsNotification.error, params: { error: UPSTREAM_ERROR, ...this.#body.meta() } });
    const interval = this.#options.subscription.upstream.type.pollIntervalMs;
    this.#schedule(Math.min(interval * 2 ** (this.#failures - 1), Math.max(interval, RETRY_MAX_MS)));
  }

  #schedule(ms: number): void {
    if (this.#body.ended || this.#busy) return;
    if (this.#readTimer !== undefined) clearTimeout(this.#readTimer);
    this.#readTimer = setTimeout(() => void this.#read(), ms);
  }

  /** A position as the client holds it: sealed to the type and partition; null stays null ("does not support replay"). */
  async #seal(upstream: string | null): Promise<string | null> {
    if (upstream === null) return null;
    const { subscription, keys } = this.#options;
    return mintUpstreamCursor({ type: subscription.type.name, partition: subscription.log.partition, upstream }, keys);
  }

  /** A page's handling, in order: one that fails (a cursor too long to seal) is a failed read, retried from the position. */
  #handle(work: () => Promise<void>): void {
    this.#body.enqueue(async () => {
      try {
        await work();
      } catch (error) {
        log({ msg: 'mcp.events.error', error: `upstream feed: ${String(error)}` });
        this.#failed();
      }
    });
  }
}
