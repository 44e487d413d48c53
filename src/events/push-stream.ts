/**
 * One `events/stream` push stream, held by the Worker (SEP-3415, *Push*; docs/events.md). Its
 * log's object hibernates between occurrences: the stream holds a WebSocket to it (the feed,
 * event-log-object.ts), writes its heartbeats itself, and wakes nothing while nothing happens.
 *
 * The stream's position — the log id and the seq of the next occurrence to deliver — is the
 * stream's own, never the socket's: every occurrence it is told is checked against it (one
 * already delivered is dropped, one past it means something was missed) and every cursor it
 * writes is minted from it. So whatever happens to the socket — the object restarted by a
 * deploy, the feed paused because the client reads slower than occurrences come, a seq out of
 * step — the answer is the same: attach again from the position, which the object decides as
 * any cursor (a continuation; or, if retention or a reset overtook it, `truncated` with a fresh
 * position, which the stream announces with a fresh `notifications/events/active`, as the text
 * says for "a gap mid-stream"). Nothing is skipped silently, nothing is delivered twice.
 *
 * What every push stream owes its client besides its occurrences — messages in order, the
 * subscription id, heartbeats, a client reading slowly, the end — is stream-body.ts's.
 */
import type { CursorKeys, EventCursor } from '../core/event-cursor.ts';
import { mintCursor } from '../core/event-cursor.ts';
import { EventsNotification, type EventsError, type JsonObject, type StreamError } from '../core/events-wire.ts';
import { log } from '../core/log.ts';
import { MisconfiguredError } from '../core/misconfiguration.ts';
import { JsonRpcCode } from '../core/wire.ts';
import { type FeedMessage, LOG_RESET_CLOSE_CODE } from './event-log-object.ts';
import { type Attached, attachFeed, SubscriptionRefused } from './feed-attach.ts';
import type { LogName, StoredOccurrence } from './event-log-store.ts';
import type { EventLogStub } from './event-logs.ts';
import type { Retention } from './event-retention.ts';
import { EventStreamBody, type StreamBodyOptions, type StreamFeed } from './stream-body.ts';

export interface PushStreamOptions extends StreamBodyOptions {
  readonly log: EventLogStub;
  readonly name: LogName;
  readonly retention: Retention;
  /** The event type's name, on every occurrence. */
  readonly eventName: string;
  /** Whether the subscription's arguments select an occurrence's data. */
  readonly accepts: (data: JsonObject) => boolean;
  readonly cursor: EventCursor | null;
  readonly maxAgeMs: number | undefined;
  readonly keys: CursorKeys;
}

export interface PushStream {
  readonly response: Response;
  /** Ends the subscription: `notifications/events/terminated` with `error`, then the stream's result. */
  terminate(error: EventsError): void;
}

/** Occurrences one catch-up read asks for. */
const PAGE = 64;
const PAGE_BYTES = 256 * 1024;
/** Attaches failing in a row before the client is told (`notifications/events/error`); the stream keeps trying. */
const FAILURES_BEFORE_ERROR = 3;
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 5_000;

/** A push stream over `options.log`, or the refusal of its cursor (-32602, no stream opened). */
export async function openPushStream(options: PushStreamOptions): Promise<PushStream | { readonly refusal: EventsError }> {
  const stream = new Feed(options);
  const refusal = await stream.start();
  return refusal ?? stream;
}

class Feed implements PushStream, StreamFeed {
  readonly #options: PushStreamOptions;
  readonly #body: EventStreamBody;
  #logId = '';
  #position = 0;
  #socket: WebSocket | undefined;
  #failures = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: PushStreamOptions) {
    this.#options = options;
    this.#body = new EventStreamBody(options, this);
  }

  get response(): Response {
    return this.#body.response;
  }

  /** Attaches from the request's cursor: the refusal, or undefined once `active` is written. */
  async start(): Promise<{ readonly refusal: EventsError } | undefined> {
    const { cursor, maxAgeMs } = this.#options;
    const first = await this.#attachFrom(cursor, maxAgeMs);
    if ('refusal' in first) return first;
    if ('backlog' in first) {
      const { logId, decision } = first.backlog;
      await this.#active(logId, decision.fromSeq, decision.truncated);
      this.#body.enqueue(() => this.#catchUp());
    } else {
      // The socket's first message is its start: `active` is written from it.
      this.#listen(first.socket, true);
    }
    this.#body.open();
    return undefined;
  }

  terminate(error: EventsError): void {
    this.#body.terminate(error);
  }

  checkedCursor(): Promise<string> {
    const { name, keys } = this.#options;
    return mintCursor({ ...name, logId: this.#logId, next: this.#position }, keys);
  }

  /** The client is behind: stop taking the feed; resume() attaches again from the position once it has read. */
  pause(): void {
    this.#closeSocket();
  }

  resume(): void {
    this.#body.enqueue(() => this.#attach());
  }

  failed(error: unknown): void {
    if (error instanceof SubscriptionRefused || error instanceof MisconfiguredError) {
      const ended: StreamError = error instanceof SubscriptionRefused ? error.error : { code: error.code, message: error.message };
      this.#body.write({ method: EventsNotification.terminated, params: { error: ended, ...this.#body.meta() } });
      this.#body.finish();
      return;
    }
    log({ msg: 'mcp.events.error', error: `push stream: ${String(error)}` });
    this.#closeSocket();
    this.#retry();
  }

  release(): void {
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#closeSocket();
  }

  #attachFrom(cursor: EventCursor | null, maxAgeMs: number | undefined): Promise<Attached> {
    const { log: logStub, name, retention } = this.#options;
    return attachFeed(logStub, { ...name, retention, cursor, ...(maxAgeMs !== undefined && { maxAgeMs }) });
  }

  /** Attaches again from the stream's own position (after a lost socket, a gap, a pause, a backlog read). */
  async #attach(): Promise<void> {
    this.#closeSocket();
    const { name } = this.#options;
    const answer = await this.#attachFrom({ ...name, logId: this.#logId, next: this.#position }, undefined);
    if ('refusal' in answer) throw new SubscriptionRefused(answer.refusal);
    if ('backlog' in answer) {
      const { logId, decision } = answer.backlog;
      await this.#restart(logId, decision.fromSeq, decision.truncated);
      return this.#catchUp();
    }
    this.#failures = 0;
    this.#listen(answer.socket, false);
  }

  #listen(socket: WebSocket, first: boolean): void {
    this.#socket = socket;
    let started = !first;
    socket.addEventListener('message', (event) => {
      if (this.#socket !== socket) return;
      const message = JSON.parse(String(event.data)) as FeedMessage;
      this.#body.enqueue(async () => {
        if (this.#socket !== socket) return;
        if ('start' in message) {
          const { logId, fromSeq, truncated } = message.start;
          if (!started) {
            started = true;
            return this.#active(logId, fromSeq, truncated);
          }
          return this.#restart(logId, fromSeq, truncated);
        }
        return this.#deliver(message.occurrence);
      });
    });
    socket.addEventListener('close', ({ code }) => {
      if (this.#socket !== socket || this.#body.ended || this.#body.paused) return;
      this.#socket = undefined;
      // Closed by the object on purpose (its log reset, a task's feed at its end): attach again at
      // once, to hear why. Anything else (a restart, a deploy): after a pause, as a failure.
      if (code === 1000 || code === LOG_RESET_CLOSE_CODE) this.#body.enqueue(() => this.#attach());
      else this.#retry();
    });
  }

  /** The first `notifications/events/active`: where the stream starts, and whether anything before it was skipped. */
  async #active(logId: string, fromSeq: number, truncated: boolean): Promise<void> {
    this.#logId = logId;
    this.#position = fromSeq;
    this.#body.write({
      method: EventsNotification.active,
      params: { cursor: await this.checkedCursor(), truncated, ...this.#body.meta() },
    });
  }

  /** A start after the first: a continuation says nothing; a skip is "a fresh notifications/events/active with truncated: true". */
  async #restart(logId: string, fromSeq: number, truncated: boolean): Promise<void> {
    if (!truncated && logId === this.#logId && fromSeq === this.#position) return;
    await this.#active(logId, fromSeq, true);
  }

  async #deliver(occurrence: StoredOccurrence): Promise<void> {
    if (occurrence.seq < this.#position) return;
    if (occurrence.seq > this.#position) {
      // Never skipped: something between was missed, so the stream reads it from the log.
      log({ msg: 'mcp.events.error', error: `feed sent seq ${occurrence.seq} at position ${this.#position}: attaching again` });
      return this.#attach();
    }
    this.#position = occurrence.seq + 1;
    const data = JSON.parse(occurrence.data) as JsonObject;
    if (!this.#options.accepts(data)) return;
    const { eventId, timestamp } = occurrence;
    const cursor = await this.checkedCursor();
    this.#body.write({
      method: EventsNotification.event,
      params: { eventId, name: this.#options.eventName, timestamp, data, cursor, ...this.#body.meta() },
    });
  }

  /** Reads from the position by pages until the head is near, then attaches. */
  async #catchUp(): Promise<void> {
    const { log: logStub, name, retention } = this.#options;
    for (;;) {
      if (this.#body.ended || this.#body.paused) return;
      const cursor = { ...name, logId: this.#logId, next: this.#position };
      const answer = await logStub.read({ ...name, retention, cursor, limit: PAGE, maxBytes: PAGE_BYTES });
      const { decision } = answer;
      if (decision.kind === 'refused') throw new SubscriptionRefused(decision.invalid);
      await this.#restart(answer.logId, decision.fromSeq, decision.truncated);
      for (const occurrence of answer.occurrences) await this.#deliver(occurrence);
      if (answer.nextSeq - this.#position <= PAGE) return this.#attach();
    }
  }

  #retry(): void {
    this.#failures++;
    if (this.#failures === FAILURES_BEFORE_ERROR) {
      // "a recoverable failure … The subscription stays active."
      const error: StreamError = { code: JsonRpcCode.InternalError, message: 'the event log is unreachable; retrying' };
      this.#body.write({ method: EventsNotification.error, params: { error, ...this.#body.meta() } });
    }
    // One retry pending at a time.
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(
      () => this.#body.enqueue(() => this.#attach()),
      Math.min(RETRY_BASE_MS * 2 ** this.#failures, RETRY_MAX_MS),
    );
  }

  #closeSocket(): void {
    const socket = this.#socket;
    this.#socket = undefined;
    try {
      socket?.close(1000, 'done');
    } catch {
      // Already closed.
    }
  }
}
