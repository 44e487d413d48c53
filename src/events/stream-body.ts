/**
 * The response of one `events/stream` (SEP-3415, *Push*), whatever feeds it — a log's socket
 * (push-stream.ts), an upstream's reads (upstream-feed.ts), a task's timeline through the log
 * feed: the SSE body and everything a stream owes its client apart from its occurrences.
 *
 * - Order: every message is written through one chain of promises (minting a cursor is
 *   asynchronous), so a heartbeat never overtakes the event before it.
 * - "Every notifications/events/* message carries the JSON-RPC id of the parent events/stream
 *   request in params._meta": `write` adds it.
 * - "The server MUST send periodic keepalive messages": a heartbeat every `heartbeatMs`, with the
 *   cursor the feed has checked up to.
 * - A client reading slower than messages come: past `bufferBytes` unread the feed is told to
 *   pause, and to resume once the client has read.
 * - The end, once, whoever ends it (the client's cancel, the server's result, a termination):
 *   "the server MUST stop delivering events and release the associated resources" — timers
 *   cleared, the feed told to release what it holds, then the host's `onEnd`.
 */
import type { JsonRpcId } from '../core/errors.ts';
import { EventsNotification, type EventsError, type StreamNotification, subscriptionMeta } from '../core/events-wire.ts';
import { encodeEvent } from '../core/sse.ts';
import { SSE_RESPONSE_HEADERS } from '../core/wire.ts';

export interface StreamBodyOptions {
  /** The `events/stream` request's id: the subscription id in every notification's `_meta`. */
  readonly subscriptionId: JsonRpcId;
  readonly heartbeatMs: number;
  /** Bytes written and not yet read by the client past which the feed is paused. */
  readonly bufferBytes: number;
  /** The server ends the stream after this long (0: never): the client reconnects with its cursor. */
  readonly maxConnectionAgeMs: number;
  /** The client's request: aborted, the stream ends. */
  readonly signal: AbortSignal;
  /** Called once, when the stream has ended, whoever ended it. */
  readonly onEnd: () => void;
}

/** What feeds a stream body: its position for heartbeats, and what to do as the client reads or leaves. */
export interface StreamFeed {
  /** "the position the server has checked up to": everything before it delivered or not selected. */
  checkedCursor(): Promise<string | null>;
  /** The client fell behind: stop taking occurrences. */
  pause(): void;
  /** The client has read what was behind: take occurrences again, from the feed's own position. */
  resume(): void;
  /** Work the feed enqueued failed. */
  failed(error: unknown): void;
  /** The stream ended: release what the feed holds (a socket, a timer). */
  release(): void;
}

export class EventStreamBody {
  readonly response: Response;
  readonly #options: StreamBodyOptions;
  readonly #encoder = new TextEncoder();
  readonly #feed: StreamFeed;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  /** Every write and every piece of the feed's work, in order. */
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  #paused = false;
  #heartbeats: ReturnType<typeof setInterval> | undefined;
  #ageTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: StreamBodyOptions, feed: StreamFeed) {
    this.#options = options;
    this.#feed = feed;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          if (!this.#paused || this.#ended) return;
          this.#paused = false;
          this.#feed.resume();
        },
        cancel: () => this.end(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: options.bufferBytes }),
    );
    this.response = new Response(body, { headers: SSE_RESPONSE_HEADERS });
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The client is behind: the feed is paused until it reads. */
  get paused(): boolean {
    return this.#paused;
  }

  /** The stream is open: heartbeats, the age limit and the client's abort from now on. */
  open(): void {
    this.#options.signal.addEventListener('abort', () => this.end(), { once: true });
    const { heartbeatMs, maxConnectionAgeMs } = this.#options;
    this.#heartbeats = setInterval(() => this.enqueue(() => this.#heartbeat()), heartbeatMs);
    if (maxConnectionAgeMs > 0) this.#ageTimer = setTimeout(() => this.enqueue(() => this.finish()), maxConnectionAgeMs);
  }

  /** `work` after everything enqueued before it; nothing once the stream has ended. */
  enqueue(work: () => Promise<void> | void): void {
    this.#chain = this.#chain.then(async () => {
      if (this.#ended) return;
      try {
        await work();
      } catch (error) {
        this.#feed.failed(error);
      }
    });
  }

  /** Ends the subscription: `notifications/events/terminated` with `error`, then the stream's result. */
  terminate(error: EventsError): void {
    this.enqueue(() => {
      this.write({ method: EventsNotification.terminated, params: { error, ...this.meta() } });
      this.finish();
    });
  }

  meta() {
    return subscriptionMeta(this.#options.subscriptionId);
  }

  write(notification: StreamNotification): void {
    this.#frame({ jsonrpc: '2.0', ...notification });
  }

  /** The server ends the stream: its result ("an empty result … closes the stream gracefully"), then the end. */
  finish(): void {
    this.#frame({ jsonrpc: '2.0', id: this.#options.subscriptionId, result: { resultType: 'complete', ...this.meta() } });
    try {
      this.#controller.close();
    } catch {
      // Already cancelled by the client.
    }
    this.end();
  }

  /** "the server MUST stop delivering events and release the associated resources." */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#heartbeats !== undefined) clearInterval(this.#heartbeats);
    if (this.#ageTimer !== undefined) clearTimeout(this.#ageTimer);
    this.#feed.release();
    this.#options.onEnd();
  }

  async #heartbeat(): Promise<void> {
    this.write({ method: EventsNotification.heartbeat, params: { cursor: await this.#feed.checkedCursor(), ...this.meta() } });
  }

  #frame(message: unknown): void {
    if (this.#ended) return;
    try {
      this.#controller.enqueue(this.#encoder.encode(`event: message\n${encodeEvent({ data: JSON.stringify(message) })}`));
    } catch {
      this.end();
      return;
    }
    if ((this.#controller.desiredSize ?? 1) <= 0 && !this.#paused) {
      this.#paused = true;
      this.#feed.pause();
    }
  }
}
