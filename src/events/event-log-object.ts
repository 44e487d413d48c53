/**
 * The Durable Object of one event log (docs/events.md, *The log*): one per event type, or per
 * partition of a type that declares partitions, named by event-logs.ts. It stores occurrences
 * (event-log-store.ts) and decides, in the same turn as it reads, where a poll or a push stream
 * starts (core/event-cursor.ts `decideStart`): the state a decision reads and the occurrences it
 * answers come from one synchronous turn of the one object that writes them, so no occurrence
 * can be stored between them.
 *
 * Push streams are held by the Worker; each holds one WebSocket to this object, accepted with
 * the Hibernation API, so between occurrences the object runs nothing and may be evicted with
 * its sockets open, and a stream's heartbeats wake nothing. An attach is answered, in one turn,
 * with where the stream starts and the backlog since its cursor; from then on each occurrence
 * is sent to every socket right after its row is written, in seq order. A socket carries a
 * stream's data, never its position: the Worker counts seqs, and a socket lost or a seq out of
 * step is answered by attaching again from the stream's own position (push-stream.ts).
 *
 * Retention by count is applied as occurrences are stored; by age, by the object's alarm, at
 * most once per RETENTION_SWEEP_MS. `emit` returns after `append` returns: after the row is
 * committed (the output gate holds the answer until then).
 */
import { DurableObject } from 'cloudflare:workers';
import { decideStart, type EventCursor, type StartDecision } from '../core/event-cursor.ts';
import { type EventsError, eventsError } from '../core/events-wire.ts';
import { EVENT_LOG_ROUTES, INTERNAL_HEADERS } from '../core/wire.ts';
import { EventLogStore, type Appended, type LogName, type NewOccurrence, type StoredOccurrence } from './event-log-store.ts';
import type { AddSubscriberAnswer, AddSubscriberRequest } from './event-logs.ts';
import type { Retention } from './event-retention.ts';
import { LogSubscribers } from './log-subscribers.ts';

/** What a poll (or a push stream catching up) asks of the log. */
export interface ReadRequest extends LogName {
  readonly retention: Retention;
  /** The decoded cursor (its MAC verified by the Worker), or null: from now. */
  readonly cursor: EventCursor | null;
  readonly maxAgeMs?: number;
  readonly limit: number;
  /** Data bytes a page stops before (the first occurrence is always answered). */
  readonly maxBytes: number;
}

export interface ReadAnswer {
  readonly decision: StartDecision;
  readonly logId: string;
  /** The head when it was read: where a reader at the end of `occurrences` stands if it read them all. */
  readonly nextSeq: number;
  /** From `decision.fromSeq` on, in order; none when refused. */
  readonly occurrences: readonly StoredOccurrence[];
}

/** A push stream's attach (its JSON in INTERNAL_HEADERS.eventAttach). */
export interface AttachRequest extends LogName {
  readonly retention: Retention;
  readonly cursor: EventCursor | null;
  readonly maxAgeMs?: number;
}

/** Sent over an attached socket, in order: the start, then occurrences. */
export type FeedMessage =
  | { readonly start: { readonly logId: string; readonly fromSeq: number; readonly truncated: boolean } }
  | { readonly occurrence: StoredOccurrence };

/** An attach answered without a socket: refused, or a backlog too long to send at once (read it by pages, then attach again). */
export type AttachAnswer =
  | { readonly refusal: EventsError }
  | { readonly backlog: { readonly logId: string; readonly decision: Exclude<StartDecision, { kind: 'refused' }> } };

/** The close code of a socket whose log was reset: its stream attaches again and is told `truncated`. */
export const LOG_RESET_CLOSE_CODE = 4409;
/** The most occurrences an attach sends at once; a longer backlog is read by pages first. */
export const ATTACH_BACKLOG_MAX = 64;
/** Age retention is swept at most this often, so its deletes and the alarm's write are shared by a minute of occurrences. */
export const RETENTION_SWEEP_MS = 60_000;
/** Push streams one log's object holds at once; past it an attach is refused (ResourceExhausted). */
export const MAX_FEEDS_PER_LOG = 10_000;
/**
 * Webhook subscriptions one log pokes; past it a new one is refused (ResourceExhausted
 * `{limit: "webhooks_per_log"}`). Each append pokes every subscriber not already poked, from
 * this object's one thread, and the fan-out check pokes them all in one alarm run: the bound
 * keeps both within what one invocation may send. A type needing more declares partitions.
 */
export const MAX_WEBHOOKS_PER_LOG = 1_000;

export class McpEventLog extends DurableObject {
  #store: EventLogStore | undefined;
  #subscribers: LogSubscribers | undefined;
  /** When the alarm is due, once this instance has read or set it (null: none is set). */
  #alarmAt: number | null | undefined;

  #open(name: LogName): EventLogStore {
    this.#store ??= new EventLogStore(this.ctx.storage, { type: name.type, partition: name.partition });
    return this.#store;
  }

  /** Stores one occurrence (or answers the kept one its author's id names) and sends it to every attached stream. */
  async append(name: LogName, retention: Retention, occurrence: NewOccurrence): Promise<Appended> {
    const store = this.#open(name);
    const record = store.open(retention);
    const appended = store.append(record, occurrence, Date.now());
    if (appended.duplicate) return appended;
    const message = JSON.stringify({
      occurrence: {
        seq: appended.seq,
        storedAt: appended.storedAt,
        eventId: appended.eventId,
        timestamp: appended.timestamp,
        data: occurrence.data,
      },
    } satisfies FeedMessage);
    for (const socket of this.ctx.getWebSockets()) {
      try {
        socket.send(message);
      } catch {
        // Closing: its stream attaches again from its own position if it is still open.
      }
    }
    await this.#ensureSweep(retention);
    return appended;
  }

  /** Where a poll starts, and the page from there: decided and read in one turn. */
  read(request: ReadRequest): ReadAnswer {
    const store = this.#open(request);
    const record = store.open(request.retention);
    const state = store.state(record);
    const maxAge = request.maxAgeMs === undefined ? undefined : { floorSeq: store.floorSeq(state, Date.now() - request.maxAgeMs) };
    const decision = decideStart(request.cursor, state, maxAge);
    const occurrences = decision.kind === 'refused' ? [] : store.read(record, decision.fromSeq, request.limit, request.maxBytes);
    return { decision, logId: record.logId, nextSeq: state.nextSeq, occurrences };
  }

  /**
   * A webhook subscription joins the log (event-logs.ts `addSubscriber`): its start decided as a
   * poll's is (the maxAgeMs floor included) and its row written in this one synchronous turn, so
   * no occurrence is appended between "where it starts" and "who gets poked". Writes 1 row for a
   * new subscriber (+ the table at the log's first), 0 for one already there.
   */
  addSubscriber(request: AddSubscriberRequest): AddSubscriberAnswer {
    const max = MAX_WEBHOOKS_PER_LOG;
    const store = this.#open(request);
    const record = store.open(request.retention);
    const state = store.state(record);
    const maxAge = request.maxAgeMs === undefined ? undefined : { floorSeq: store.floorSeq(state, Date.now() - request.maxAgeMs) };
    const decision = decideStart(request.cursor, state, maxAge);
    if (decision.kind === 'refused') return { refusal: decision.invalid };
    if (this.#subscriberRows().add(request.subscriber, max) === 'full') {
      return {
        refusal: eventsError('ResourceExhausted', `at most ${max} webhook subscriptions of one event log`, {
          limit: 'webhooks_per_log',
          max,
        }),
      };
    }
    return { logId: record.logId, nextSeq: state.nextSeq, earliestSeq: state.earliestSeq, decision };
  }

  /** The subscriber's row is dropped (1 row; 0 when it was not there). */
  removeSubscriber(_name: LogName, id: string): void {
    this.#subscriberRows().remove(id);
  }

  #subscriberRows(): LogSubscribers {
    this.#subscribers ??= new LogSubscribers(this.ctx.storage.sql);
    return this.#subscribers;
  }

  /** Drops every occurrence and takes a new log id; attached streams are closed and attach again, `truncated`. */
  reset(name: LogName, retention: Retention): string {
    const store = this.#open(name);
    const logId = store.reset(store.open(retention));
    for (const socket of this.ctx.getWebSockets()) socket.close(LOG_RESET_CLOSE_CODE, 'log reset');
    return logId;
  }

  override async fetch(request: Request): Promise<Response> {
    const route = new URL(request.url).pathname;
    const header = request.headers.get(INTERNAL_HEADERS.eventAttach);
    if (route !== EVENT_LOG_ROUTES.attach || request.headers.get('Upgrade')?.toLowerCase() !== 'websocket' || header === null) {
      return new Response(null, { status: 404 });
    }
    const attach = JSON.parse(header) as AttachRequest;
    if (this.ctx.getWebSockets().length >= MAX_FEEDS_PER_LOG) return new Response(null, { status: 429 });
    const store = this.#open(attach);
    const record = store.open(attach.retention);
    const state = store.state(record);
    const maxAge = attach.maxAgeMs === undefined ? undefined : { floorSeq: store.floorSeq(state, Date.now() - attach.maxAgeMs) };
    const decision = decideStart(attach.cursor, state, maxAge);
    if (decision.kind === 'refused') return Response.json({ refusal: decision.invalid } satisfies AttachAnswer, { status: 400 });
    if (state.nextSeq - decision.fromSeq > ATTACH_BACKLOG_MAX) {
      return Response.json({ backlog: { logId: record.logId, decision } } satisfies AttachAnswer);
    }
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    // In this turn: nothing can be stored between the backlog read and the socket's joining the feed.
    const send = (message: FeedMessage) => pair[1].send(JSON.stringify(message));
    send({ start: { logId: record.logId, fromSeq: decision.fromSeq, truncated: decision.truncated } });
    for (const occurrence of store.read(record, decision.fromSeq, ATTACH_BACKLOG_MAX, Number.POSITIVE_INFINITY)) send({ occurrence });
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /** Streams only listen: anything they send is ignored. */
  override webSocketMessage(): void {}

  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    const store = this.#store ?? this.#storedStore();
    const record = store?.existing();
    if (store === undefined || record === undefined) return;
    const now = Date.now();
    store.sweep(record, now - record.retention.maxAgeMs);
    await this.#ensureSweep(record.retention);
  }

  /** The store of a log this object already holds, read back after a wake by its alarm (which has no name to give). */
  #storedStore(): EventLogStore | undefined {
    const row = this.ctx.storage.sql.exec<{ type: string; partition: string }>(`SELECT type, partition FROM event_log`).toArray()[0];
    return row === undefined ? undefined : this.#open(row);
  }

  /** An alarm due when the oldest kept occurrence passes its age, at least RETENTION_SWEEP_MS from now: set once, not per occurrence. */
  async #ensureSweep(retention: Retention): Promise<void> {
    this.#alarmAt ??= await this.ctx.storage.getAlarm();
    if (this.#alarmAt !== null) return;
    const oldest = this.#store?.oldestStoredAt();
    if (oldest === undefined) return;
    const due = Math.max(oldest + retention.maxAgeMs, Date.now() + RETENTION_SWEEP_MS);
    await this.ctx.storage.setAlarm(due);
    this.#alarmAt = due;
  }
}
