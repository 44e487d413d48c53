/**
 * The session's streams: the durable log (event-log.ts) and the live connections, kept
 * consistent. Every method is synchronous. Storage writes happen inside `transactionSync` — or
 * are one statement, atomic by itself (a call's answer: `#store`) — and a connection is switched in the same turn as the log is read, so a caller never observes —
 * and no client ever receives — a state between "stored" and "delivered", or between
 * "replayed" and "live".
 *
 * A connection is positioned in its stream (connection.ts): it takes live events while it is
 * caught up and reads this log from its position when it is not (a replay, a slow client), so
 * a connection's memory is bounded by its buffer, not by what its client has yet to read.
 *
 * One exception, for throughput: an event on the hot path (a notification within bounds) is
 * held for a moment and stored with the events around it in one multi-row INSERT, then
 * delivered (held-events.ts). No reader can tell: every method starts by storing the held
 * events, and `log` stores them before it is handed out.
 *
 * What the session may open or store — its requests, its running calls, its stored events — is
 * asked of session-bounds.ts first; this file stores and delivers.
 */
import type { JsonRpcId } from '../core/errors.ts';
import { formatEventId } from '../core/event-id.ts';
import { utf8Length } from '../core/utf8.ts';
import type { StreamRecord } from '../core/resume.ts';
import { ConnectionTable } from './connection-table.ts';
import type { JsonCollector, Delivery } from './connection.ts';
import { EventLog } from './event-log.ts';
import type { StoredRow } from './event-rows.ts';
import { HeldEvents } from './held-events.ts';
import { tooLargeToStore } from './message-size.ts';
import type { RelayConnection } from './relay-connection.ts';
import { Residency } from './residency.ts';
import { type Limits, SessionBounds } from './session-bounds.ts';
import { StreamCache } from './stream-cache.ts';
import type { SessionStore } from './session-store.ts';

/** The session's bounds (session-bounds.ts), and how its connections and streams are run. */
export interface StreamOptions extends Limits {
  /** Bytes an SSE connection may have sent and unacknowledged before it reads the log instead. */
  readonly connectionBufferBytes: number;
  readonly retryMs: number;
  /** The object's `ctx.waitUntil`: each request stream keeps the object resident until it ends (residency.ts). */
  readonly keepResident: (until: Promise<void>) => void;
}

export class SessionStreams {
  readonly #storage: DurableObjectStorage;
  readonly #sessions: SessionStore;
  readonly #options: StreamOptions;
  readonly #log: EventLog;
  readonly #cache: StreamCache;
  readonly #bounds: SessionBounds;
  readonly #residency: Residency;
  readonly #connections: ConnectionTable;
  /** Hot-path events not yet stored (held-events.ts). */
  readonly #held: HeldEvents;

  constructor(storage: DurableObjectStorage, sessions: SessionStore, options: StreamOptions) {
    this.#storage = storage;
    this.#sessions = sessions;
    this.#options = options;
    this.#log = new EventLog(storage);
    this.#cache = new StreamCache(this.#log);
    this.#bounds = new SessionBounds(this.#log, options);
    this.#residency = new Residency(options.keepResident);
    this.#connections = new ConnectionTable({
      bufferBytes: options.connectionBufferBytes,
      backlogOf: (stream) => ({ read: this.#backlog.bind(this, stream) }),
    });
    this.#held = new HeldEvents(this.#log, this.#cache, this.#connections, this.#bounds);
  }

  /** The live connections, for the relay's sockets (bind, acknowledge, close); their log reads store held events first. */
  get connections(): ConnectionTable {
    return this.#connections;
  }

  /** The durable log, with every emitted event in it. */
  get log(): EventLog {
    this.#held.store();
    return this.#log;
  }

  /**
   * Runs `body` in one transaction. What this class believes of the streams is updated inside
   * such bodies, so if the transaction rolls back, so does the belief: forgotten, to be read
   * again from storage.
   */
  #transaction<T>(body: () => T): T {
    return this.#forgettingOnFailure(() => this.#storage.transactionSync(body));
  }

  /** Runs a write; if it throws, what this instance believes of storage is read again (`forget`). */
  #forgettingOnFailure<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      this.forget();
      throw error;
    }
  }

  /** A new session's schema was just created, in this transaction: nothing is stored yet, and what storage would say is known. */
  created(): void {
    this.#log.created();
    this.#bounds.created();
  }

  /**
   * Opens the stream that answers `requestKeys`, registering them in the session's request ids
   * — but for initialize's, which the session record keeps (`register: false`).
   */
  openRequestStream(
    epoch: number,
    requestKeys: readonly string[],
    { register = true, id = null }: { register?: boolean; id?: JsonRpcId | null } = {},
  ): StreamRecord {
    this.#held.store();
    // Every call runs at once, and keeps the object resident until it ends (session-bounds.ts).
    this.#bounds.admitCalls(this.#residency.requests, requestKeys.length, id);
    this.#bounds.admit(requestKeys.length, id);
    const stream = this.#transaction(() => {
      const opened = this.#log.openStream('request', epoch, requestKeys, Date.now(), this.#residency.lowest, this.#bounds.totals());
      if (register) for (const key of requestKeys) this.#log.requests.register(key, opened.stream);
      return opened;
    });
    this.#cache.opened(stream, requestKeys);
    // The call runs to its end here even if its client goes away: it is answered into the log.
    this.#residency.hold(stream.stream, requestKeys.length);
    return stream;
  }

  /** The stream that answers a request, if the request id was ever used in the session. */
  streamOfRequest(requestKey: string): number | undefined {
    return this.#cache.streamOfRequest(requestKey);
  }

  /** Whether the stream exists and is open. */
  isOpen(stream: number): boolean {
    return this.#cache.know(stream)?.open === true;
  }

  /** Ends a stream by its row (not by a final answer, which ends it by itself: emit). */
  #end(stream: number, state: 'finished' | 'superseded'): void {
    this.#log.end(stream, state);
    this.#cache.ended(stream);
  }

  /** Finishes a stream that is still open (revival: its producer died with nothing unanswered). */
  finish(stream: number): void {
    this.#held.store();
    if (!this.isOpen(stream)) return;
    this.#end(stream, 'finished');
    this.#ended(stream);
  }

  /**
   * After a stream ended in storage: its connection ends — a finished stream's once it
   * delivered the last event, a superseded one's at once: the server→client requests sent on
   * it are failed back, so it takes nothing more (what it had already queued still goes out).
   */
  #ended(stream: number, how: 'finished' | 'superseded' = 'finished'): void {
    if (how === 'finished') this.#connections.finish(stream);
    else this.#connections.close(stream);
    this.#residency.release(stream);
  }

  /**
   * A new standalone stream supersedes the previous one: its connection ends and resuming it
   * is refused, so a session never has two live standalone streams.
   */
  openStandalone(epoch: number, previous: number | null): StreamRecord {
    this.#held.store();
    this.#bounds.admit(1, null);
    const stream = this.#transaction(() => {
      if (previous !== null) this.#end(previous, 'superseded');
      const opened = this.#log.openStream('standalone', epoch, [], Date.now(), this.#residency.lowest, this.#bounds.totals());
      this.#sessions.setStandaloneStream(opened.stream);
      return opened;
    });
    this.#cache.opened(stream);
    if (previous !== null) this.#ended(previous, 'superseded');
    return stream;
  }

  /**
   * A new SSE connection on `stream`: the priming event (if `primes`), every event after
   * `afterSeq`, then live delivery — or the end of the connection, once it delivered the
   * stream's last event, if the stream is no longer open. Attaching fences the stream's
   * previous connection.
   */
  attach(stream: StreamRecord, afterSeq: number, primes: boolean): RelayConnection {
    this.#held.store();
    const known = this.#cache.know(stream.stream);
    const connection = this.#connections.open(stream, afterSeq, known?.lastSeq ?? afterSeq);
    // On a resumed connection the priming id is the cursor itself: it never moves the
    // client's position backwards.
    if (primes) connection.prime(eventId(stream, afterSeq), this.#options.retryMs);
    this.#connections.attach(stream.stream, connection);
    connection.start();
    if (known?.open !== true) connection.finish();
    return connection;
  }

  /** What a connection that fell behind reads: the stream's events after its position. */
  #backlog(stream: Pick<StreamRecord, 'stream' | 'epoch'>, afterSeq: number, budgetBytes: number): { events: Delivery[]; lastSeq: number } {
    this.#held.store();
    const lastSeq = this.#cache.know(stream.stream)?.lastSeq ?? afterSeq;
    // What a frame adds to its message: `id: <id>\ndata: <message>\n\n`, the id at most as long as the last one.
    const framing = FRAME_BYTES + eventId(stream, lastSeq).length;
    const events = this.#log.eventsAfter(stream.stream, afterSeq, budgetBytes, framing).map(({ seq, message }) => ({
      seq,
      id: eventId(stream, seq),
      data: message,
    }));
    return { events, lastSeq };
  }

  /** JSON response mode: a collector in place of an SSE connection. */
  collect(stream: StreamRecord, requestKeys: readonly string[]): JsonCollector {
    this.#held.store();
    const collector = this.#connections.collect(stream.stream, requestKeys);
    // Already finished (a 2025-03-26 batch that cancelled its own request): nothing more is owed.
    if (this.#cache.know(stream.stream)?.open !== true) collector.finish();
    return collector;
  }

  /**
   * Persist, then deliver. `answers` names the request a response answers: when it was the
   * stream's last unanswered request, the stream is finished, and its connection ends once it
   * delivered it. `awaitsAnswer` marks a server→client request: it is stored at once, never
   * held, so that a failure to store it reaches its sender instead of leaving it waiting for
   * an answer to a request nobody was sent.
   * Returns false, storing nothing, when the stream is no longer open; throws
   * MessageTooLargeError, storing nothing, for a message over MAX_MESSAGE_BYTES.
   */
  emit(stream: number, data: string, answers?: string, awaitsAnswer = false): boolean {
    const known = this.#cache.know(stream);
    if (known === undefined || !known.open) return false;
    const size = utf8Length(data);
    const tooLarge = tooLargeToStore(size);
    if (tooLarge !== undefined) throw tooLarge;
    const totals = this.#bounds.totals();
    const holdable = answers === undefined && !awaitsAnswer;
    if (holdable && this.#bounds.fits(totals, size)) {
      // The hot path (progress, logging): held, then stored with its neighbours (held-events.ts).
      const seq = ++known.lastSeq;
      totals.events += 1;
      totals.bytes += size;
      this.#held.hold({ stream, seq, message: data, id: formatEventId({ epoch: known.epoch, stream, seq }), bytes: size });
      return true;
    }
    // An answer, a server→client request, or an event that needs pruning: stored (and
    // delivered) after everything held. The answer that leaves no request of its stream
    // unanswered is stored as the stream's end, so finishing it writes nothing more.
    this.#held.store();
    const seq = known.lastSeq + 1;
    const finished = this.#store({ stream, seq, message: data }, size, totals, answers);
    known.lastSeq = seq;
    this.#connections.deliver(stream, { seq, id: formatEventId({ epoch: known.epoch, stream, seq }), data, bytes: size });
    if (finished) this.#ended(stream);
    return true;
  }

  /**
   * Stores one event that is not held, as its stream's end if `answers` names the last of its
   * requests to be answered. Where that event is all that is written — no other request of its
   * stream left to mark answered, nothing to prune (the hot path: a call's answer) — it is one
   * INSERT, atomic by itself; otherwise one transaction with the rest.
   */
  #store(event: StoredRow, size: number, totals: { events: number; bytes: number }, answers: string | undefined): boolean {
    const { stream, seq } = event;
    const ends = answers === undefined ? false : this.#cache.endsStream(answers, stream);
    if (ends !== undefined && this.#bounds.fits(totals, size)) {
      this.#forgettingOnFailure(() => this.#log.appendMany([{ ...event, endsStream: ends }]));
      if (answers !== undefined) this.#cache.answer(answers, stream); // in memory: no other request of the stream awaits one
      this.#bounds.account(totals, 1, size, { stream, seq }); // within the bounds: counted, nothing pruned
      if (ends) this.#cache.ended(stream);
      return ends;
    }
    return this.#transaction(() => {
      const done = answers !== undefined && !this.#cache.answer(answers, stream);
      this.#log.appendMany([{ ...event, endsStream: done }]);
      this.#bounds.account(totals, 1, size, { stream, seq });
      if (done) this.#cache.ended(stream);
      return done;
    });
  }

  /** A cancelled request is never answered (the spec forbids it), so it stops holding its stream open. */
  abandon(requestKey: string): void {
    this.#held.store();
    const stream = this.streamOfRequest(requestKey);
    if (stream === undefined || !this.isOpen(stream)) return;
    const finished = this.#transaction(() => {
      const othersPending = this.#cache.answer(requestKey, stream);
      if (!othersPending) this.#end(stream, 'finished');
      return !othersPending;
    });
    if (finished) this.#ended(stream);
  }

  /** The request being served is answered: the calls it left running keep the object resident by themselves (residency.ts). */
  detach(): void {
    this.#residency.detach();
  }

  /** Whether a call is running in this instance (its stream is open here). */
  get running(): boolean {
    return this.#residency.size > 0;
  }

  /** Whether a client listens through any connection, so the session is in use. */
  get hasConnections(): boolean {
    return this.#connections.listening;
  }

  /** Ends the stream's live connection, if any; the stream and its producer go on. */
  closeConnection(stream: number): void {
    this.#held.store();
    this.#connections.close(stream);
  }

  /**
   * The session is being deleted: every connection ends, and held events are dropped with the
   * rest of its storage (storing them first could fail, and stop the deletion).
   */
  closeAll(): void {
    this.#held.drop();
    this.#connections.closeAll();
    this.#residency.releaseAll();
    this.forget();
  }

  /**
   * Drops what this instance believes about the streams, to be read again from storage: after
   * a transaction that went through this class was rolled back (a failed revival), the
   * storage is the truth and the cache is not.
   */
  forget(): void {
    this.#cache.forget();
    this.#bounds.forget();
    this.#log.forget();
  }
}
const FRAME_BYTES = 'id: \ndata: \n\n'.length;

const eventId = ({ epoch, stream }: Pick<StreamRecord, 'stream' | 'epoch'>, seq: number): string => formatEventId({ epoch, stream, seq });
