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
import { checkToArm, nextAlarm } from '../core/webhook-fanout.ts';
import { EVENT_LOG_ROUTES, INTERNAL_HEADERS } from '../core/wire.ts';
import { placedNamespace } from '../edge/placement.ts';
import { EventLogStore, type Appended, type LogName, type NewOccurrence, type StoredOccurrence } from './event-log-store.ts';
import type { Retention } from './event-retention.ts';
import { type AddSubscriberAnswer, type AddSubscriberRequest, Fanout, LogSubscribers, type PokeSender } from './log-subscribers.ts';
import { type WebhookNamespace, webhookSubscription } from './webhook-subscriptions.ts';

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
  readonly #fanout = new Fanout();
  #pokeSender: PokeSender | undefined;
  /** When the alarm is due, once this instance has read or set it (null: none is set). */
  #alarmAt: number | null | undefined;

  #open(name: LogName): EventLogStore {
    this.#store ??= new EventLogStore(this.ctx.storage, { type: name.type, partition: name.partition });
    return this.#store;
  }

  /**
   * Stores one occurrence (or answers the kept one its author's id names), sends it to every
   * attached stream and pokes every webhook subscriber (log-subscribers.ts), without waiting for
   * them: an emit never waits on receivers. With subscribers, the fan-out check alarm is armed in
   * this turn, so it commits with the occurrence: ≤ 1 row (a setAlarm) per FANOUT_CHECK_MS window
   * with appends, shared by every subscriber, and none when an alarm is due by then already.
   */
  async append(name: LogName, retention: Retention, occurrence: NewOccurrence): Promise<Appended> {
    const store = this.#open(name);
    const record = store.open(retention);
    const subscribers = this.#subscriberRows();
    // Read before the occurrence is written, so the check alarm is set in the write's own turn.
    if (subscribers.size > 0) this.#alarmAt ??= await this.ctx.storage.getAlarm();
    const appended = store.append(record, occurrence, Date.now());
    if (appended.duplicate) return appended;
    const check = checkToArm(Date.now(), subscribers.size > 0, this.#alarmAt ?? null);
    const arming = check === null ? undefined : this.ctx.storage.setAlarm(check);
    if (check !== null) this.#alarmAt = check;
    const stored: StoredOccurrence = {
      seq: appended.seq,
      storedAt: appended.storedAt,
      eventId: appended.eventId,
      timestamp: appended.timestamp,
      data: occurrence.data,
    };
    const message = JSON.stringify({ occurrence: stored } satisfies FeedMessage);
    for (const socket of this.ctx.getWebSockets()) {
      try {
        socket.send(message);
      } catch {
        // Closing: its stream attaches again from its own position if it is still open.
      }
    }
    if (subscribers.size > 0) {
      // Every seq below pruned_to was deleted and every one from it is kept (event-log-store.ts): the earliest kept.
      const at = { logId: record.logId, head: appended.seq + 1, earliestSeq: record.prunedTo };
      this.#fanout.appended(stored, at);
      void this.#fanout.pokeAll(subscribers.list(), at, this.#sender());
    }
    await arming;
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
  async addSubscriber(request: AddSubscriberRequest): Promise<AddSubscriberAnswer> {
    const max = MAX_WEBHOOKS_PER_LOG;
    const store = this.#open(request);
    const record = store.open(request.retention);
    const state = store.state(record);
    const maxAge = request.maxAgeMs === undefined ? undefined : { floorSeq: store.floorSeq(state, Date.now() - request.maxAgeMs) };
    const decision = decideStart(request.cursor, state, maxAge);
    if (decision.kind === 'refused') return { refusal: decision.invalid };
    const added = this.#subscriberRows().add(request.subscriber, max);
    if (added === 'full') {
      return {
        refusal: eventsError('ResourceExhausted', `at most ${max} webhook subscriptions of one event log`, {
          limit: 'webhooks_per_log',
          max,
        }),
      };
    }
    this.#fanout.joined(
      request.subscriber.id,
      { logId: record.logId, head: state.nextSeq, earliestSeq: state.earliestSeq },
      decision.fromSeq,
    );
    // A backlog to catch up on: the check alarm re-pokes a subscription that crashes before it confirmed the head.
    if (decision.fromSeq < state.nextSeq) await this.#armCheck();
    return { logId: record.logId, nextSeq: state.nextSeq, earliestSeq: state.earliestSeq, decision };
  }

  /** The subscriber's row is dropped (1 row; 0 when it was not there). */
  removeSubscriber(_name: LogName, id: string): void {
    this.#subscriberRows().remove(id);
    this.#fanout.forget(id);
  }

  /** The fan-out check alarm, due within FANOUT_CHECK_MS (0 rows when an alarm is due by then already, else 1). */
  async #armCheck(): Promise<void> {
    this.#alarmAt ??= await this.ctx.storage.getAlarm();
    const check = checkToArm(Date.now(), true, this.#alarmAt);
    if (check === null) return;
    this.#alarmAt = check;
    await this.ctx.storage.setAlarm(check);
  }

  /** How pokes reach a subscriber: its namespace is the env key its row names (webhook-subscriptions.ts), placed as this object's env says. */
  #sender(): PokeSender {
    this.#pokeSender ??= {
      send: (row, poke) => {
        const namespace = (this.env as unknown as Record<string, WebhookNamespace | undefined>)[row.binding];
        if (namespace === undefined) throw new Error(`no binding ${row.binding} for webhook subscriber ${row.id}`);
        return webhookSubscription(placedNamespace(namespace, this.env as object), row.id).poke(poke);
      },
      drop: (id) => this.#subscriberRows().remove(id),
      // The object stays alive while its outbound calls run; waitUntil says so.
      keepAlive: (promise) => this.ctx.waitUntil(promise),
    };
    return this.#pokeSender;
  }

  #subscriberRows(): LogSubscribers {
    this.#subscribers ??= new LogSubscribers(this.ctx.storage.sql);
    return this.#subscribers;
  }

  /** Drops every occurrence and takes a new log id; attached streams are closed and attach again, `truncated`. */
  reset(name: LogName, retention: Retention): string {
    const store = this.#open(name);
    const logId = store.reset(store.open(retention));
    // Subscribers are kept; the next poke carries the new log id.
    this.#fanout.reset({ logId, head: 0, earliestSeq: 0 });
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

  /**
   * The age sweep, and the fan-out check: every subscriber not confirmed to the head is poked
   * again (a fresh instance knows none: all, without occurrences), and waited for. Then the next
   * alarm: the sweep's, or FANOUT_CHECK_MS from now while a confirmation is still owed. With the
   * append's arming, ≤ 2 rows per window with appends (arm, restore the sweep), 0 per occurrence.
   */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    const store = this.#store ?? this.#storedStore();
    const record = store?.existing();
    if (store === undefined || record === undefined) return;
    store.sweep(record, Date.now() - record.retention.maxAgeMs);
    const rows = this.#subscriberRows().list();
    const head = () => {
      const state = store.state(record);
      return { logId: state.logId, head: state.nextSeq, earliestSeq: state.earliestSeq };
    };
    if (rows.length > 0) await this.#fanout.pokeAll(rows, head(), this.#sender());
    const now = Date.now();
    const oldest = store.oldestStoredAt();
    const sweepDue = oldest === undefined ? null : Math.max(oldest + record.retention.maxAgeMs, now + RETENTION_SWEEP_MS);
    const owed = rows.length > 0 && this.#fanout.owedAny(this.#subscriberRows().list(), head());
    const due = earliest(nextAlarm(now, sweepDue, owed), this.#alarmAt);
    // An append during the pokes may have armed one already (#alarmAt): kept when it is the earlier.
    if (due === null || due === this.#alarmAt) return;
    this.#alarmAt = due;
    await this.ctx.storage.setAlarm(due);
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

function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
