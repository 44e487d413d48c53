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
 * Bounds and revocation are the host's (edge-events.ts), as for every push stream.
 */
import { type CursorKeys, mintUpstreamCursor } from '../core/event-cursor.ts';
import type { JsonRpcId } from '../core/errors.ts';
import { type EventsError, EventsNotification, type StreamNotification, subscriptionMeta, UPSTREAM_ERROR } from '../core/events-wire.ts';
import { log } from '../core/log.ts';
import { encodeEvent } from '../core/sse.ts';
import { SSE_RESPONSE_HEADERS } from '../core/wire.ts';
import type { PushStream } from './push-stream.ts';
import { type CheckedPage, UpstreamReadError } from './upstream-event-type.ts';
import { ageFloor, beforeFloor, type UpstreamSubscription } from './upstream-poll.ts';

export interface UpstreamFeedOptions {
  readonly subscription: UpstreamSubscription;
  readonly maxAgeMs: number | undefined;
  readonly keys: CursorKeys;
  /** The `events/stream` request's id: the subscription id in every notification's `_meta`. */
  readonly subscriptionId: JsonRpcId;
  readonly heartbeatMs: number;
  /** Bytes written and not yet read by the client past which no page is read until it reads. */
  readonly bufferBytes: number;
  /** The server ends the stream after this long (0: never): the client reconnects with its cursor. */
  readonly maxConnectionAgeMs: number;
  readonly signal: AbortSignal;
  /** Called once, when the stream has ended, whoever ended it. */
  readonly onEnd: () => void;
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

class UpstreamFeed implements PushStream {
  readonly response: Response;
  readonly #options: UpstreamFeedOptions;
  readonly #floor: number | undefined;
  readonly #encoder = new TextEncoder();
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  /** The author's cursor after the last page handled; null: from now (an upstream that cannot replay). */
  #position: string | null = null;
  /** Every write, in order: a heartbeat never overtakes the event before it. */
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  /** The client reads slower than pages come: no read until pull(). */
  #paused = false;
  /** A read is under way, or its page not yet handled: no other read starts (the position is not yet moved). */
  #busy = true;
  #failures = 0;
  #heartbeats: ReturnType<typeof setInterval> | undefined;
  #ageTimer: ReturnType<typeof setTimeout> | undefined;
  #readTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: UpstreamFeedOptions) {
    this.#options = options;
    this.#floor = ageFloor(options.maxAgeMs, options.subscription.upstream.from);
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          if (!this.#paused || this.#ended) return;
          this.#paused = false;
          this.#schedule(0);
        },
        cancel: () => this.#end(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: options.bufferBytes }),
    );
    this.response = new Response(body, { headers: SSE_RESPONSE_HEADERS });
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
      this.#write({ method: EventsNotification.active, params: { cursor: await this.#seal(start), truncated, ...this.#meta() } });
      await this.#deliver(first, start);
      this.#next(first);
    });
    this.#options.signal.addEventListener('abort', () => this.#end(), { once: true });
    const { heartbeatMs, maxConnectionAgeMs } = this.#options;
    this.#heartbeats = setInterval(() => this.#enqueue(() => this.#heartbeat()), heartbeatMs);
    if (maxConnectionAgeMs > 0) this.#ageTimer = setTimeout(() => this.#enqueue(() => this.#finish()), maxConnectionAgeMs);
  }

  terminate(error: EventsError): void {
    this.#enqueue(() => {
      this.#write({ method: EventsNotification.terminated, params: { error, ...this.#meta() } });
      this.#finish();
    });
  }

  #readFrom(from: string | null): Promise<CheckedPage> {
    const { upstream, args } = this.#options.subscription;
    return upstream.type.readPage(args, from, PAGE, PAGE_BYTES);
  }

  /** One read after the position; its page handled in order, or the failure told and retried. */
  async #read(): Promise<void> {
    if (this.#ended || this.#paused || this.#busy) return;
    this.#busy = true;
    const from = this.#position;
    let page: CheckedPage;
    try {
      page = await this.#readFrom(from);
    } catch (error) {
      if (!(error instanceof UpstreamReadError)) log({ msg: 'mcp.events.error', error: `upstream feed: ${String(error)}` });
      this.#enqueue(() => this.#failed());
      return;
    }
    this.#handle(async () => {
      this.#failures = 0;
      if (page.truncated || page.occurrences.some((o) => beforeFloor(o.timestamp, this.#floor))) {
        // "a fresh notifications/events/active with truncated: true and a new cursor".
        this.#write({ method: EventsNotification.active, params: { cursor: await this.#seal(from), truncated: true, ...this.#meta() } });
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
        this.#write({
          method: EventsNotification.event,
          params: { eventId, name: subscription.type.name, timestamp, data, cursor: await this.#seal(after), ...this.#meta() },
        });
      }
      safe = occurrence.cursor ?? safe;
    }
    this.#position = page.cursor;
  }

  /** The next read: at once while the author has more, else after pollIntervalMs; none while the client is behind. */
  #next(page: CheckedPage): void {
    this.#busy = false;
    if (!this.#paused) this.#schedule(page.hasMore ? 0 : this.#options.subscription.upstream.type.pollIntervalMs);
  }

  #failed(): void {
    this.#busy = false;
    this.#failures++;
    // "reports a recoverable failure … The subscription stays active, and the server retries and resumes." Once per run of failures.
    if (this.#failures === 1) this.#write({ method: EventsNotification.error, params: { error: UPSTREAM_ERROR, ...this.#meta() } });
    const interval = this.#options.subscription.upstream.type.pollIntervalMs;
    this.#schedule(Math.min(interval * 2 ** (this.#failures - 1), Math.max(interval, RETRY_MAX_MS)));
  }

  #schedule(ms: number): void {
    if (this.#ended || this.#busy) return;
    if (this.#readTimer !== undefined) clearTimeout(this.#readTimer);
    this.#readTimer = setTimeout(() => void this.#read(), ms);
  }

  async #heartbeat(): Promise<void> {
    // "the position the server has checked up to": everything before it was delivered or not selected.
    this.#write({ method: EventsNotification.heartbeat, params: { cursor: await this.#seal(this.#position), ...this.#meta() } });
  }

  /** A position as the client holds it: sealed to the type and partition; null stays null ("does not support replay"). */
  async #seal(upstream: string | null): Promise<string | null> {
    if (upstream === null) return null;
    const { subscription, keys } = this.#options;
    return mintUpstreamCursor({ type: subscription.type.name, partition: subscription.log.partition, upstream }, keys);
  }

  #enqueue(work: () => Promise<void> | void): void {
    this.#chain = this.#chain.then(async () => {
      if (this.#ended) return;
      try {
        await work();
      } catch (error) {
        log({ msg: 'mcp.events.error', error: `upstream feed: ${String(error)}` });
      }
    });
  }

  /** A page's handling, in order: one that fails (a cursor too long to seal) is a failed read, retried from the position. */
  #handle(work: () => Promise<void>): void {
    this.#enqueue(async () => {
      try {
        await work();
      } catch (error) {
        log({ msg: 'mcp.events.error', error: `upstream feed: ${String(error)}` });
        this.#failed();
      }
    });
  }

  #meta() {
    return subscriptionMeta(this.#options.subscriptionId);
  }

  #write(notification: StreamNotification): void {
    this.#frame({ jsonrpc: '2.0', ...notification });
  }

  #frame(message: unknown): void {
    if (this.#ended) return;
    try {
      this.#controller.enqueue(this.#encoder.encode(`event: message\n${encodeEvent({ data: JSON.stringify(message) })}`));
    } catch {
      this.#end();
      return;
    }
    // The client is behind: no more reads until pull() says it has read.
    if ((this.#controller.desiredSize ?? 1) <= 0) this.#paused = true;
  }

  /** The server ends the stream: its result ("an empty result … closes the stream gracefully"), then the end. */
  #finish(): void {
    this.#frame({ jsonrpc: '2.0', id: this.#options.subscriptionId, result: { resultType: 'complete', ...this.#meta() } });
    try {
      this.#controller.close();
    } catch {
      // Already cancelled by the client.
    }
    this.#end();
  }

  /** "the server MUST stop delivering events and release the associated resources." */
  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#heartbeats !== undefined) clearInterval(this.#heartbeats);
    for (const timer of [this.#ageTimer, this.#readTimer]) if (timer !== undefined) clearTimeout(timer);
    this.#options.onEnd();
  }
}
