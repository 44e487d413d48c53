/**
 * The session's streams: the durable event log and the live connections, kept consistent.
 *
 * Every method is synchronous. Storage writes happen inside `transactionSync`, and a
 * connection is switched in the same turn as the log is read, so a caller never observes —
 * and no client ever receives — a state between "stored" and "delivered", or between
 * "replayed" and "live".
 */
import { formatEventId } from '../core/event-id.ts';
import type { StreamRecord } from '../core/resume.ts';
import { ConnectionTable } from './connection-table.ts';
import { JsonCollector, SseConnection } from './connection.ts';
import { EventLog } from './event-log.ts';
import type { SessionStore } from './session-store.ts';

export interface StreamOptions {
  readonly heartbeatMs: number;
  readonly retryMs: number;
  readonly maxConnectionAgeMs: number;
  readonly maxSessionEvents: number;
  readonly maxSessionBytes: number;
  /** Told the time whenever a stream ends, so its events' retention can be scheduled. */
  readonly onStreamEnded: (at: number) => void;
}

export class SessionStreams {
  readonly log: EventLog;
  readonly #connections = new ConnectionTable();
  /** A stream's epoch never changes, so the hot path need not read it back. */
  readonly #epochs = new Map<number, number>();
  /** Stored events and their size, loaded on first use, then kept in step with every write. */
  #totals: { events: number; bytes: number } | undefined;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sessions: SessionStore,
    private readonly options: StreamOptions,
  ) {
    this.log = new EventLog(storage.sql);
  }

  openRequestStream(epoch: number, requestKeys: readonly string[]): StreamRecord {
    return this.storage.transactionSync(() => {
      const stream = this.log.openStream('request', epoch);
      for (const key of requestKeys) this.log.registerRequest(key, stream.stream);
      return stream;
    });
  }

  /**
   * A new standalone stream supersedes the previous one: its connection ends and resuming it
   * is refused, so a session never has two live standalone streams.
   */
  openStandalone(epoch: number, previous: number | null): StreamRecord {
    const now = Date.now();
    const stream = this.storage.transactionSync(() => {
      if (previous !== null) this.log.end(previous, 'superseded', now);
      const opened = this.log.openStream('standalone', epoch);
      this.sessions.setStandaloneStream(opened.stream);
      return opened;
    });
    if (previous !== null) {
      this.#connections.close(previous);
      this.options.onStreamEnded(now);
    }
    return stream;
  }

  /**
   * A new SSE connection on `stream`: the priming event (if `primes`), every event after
   * `afterSeq`, then live delivery — or the end of the connection, if the stream is no longer
   * open. Attaching fences the stream's previous connection.
   */
  attach(stream: StreamRecord, afterSeq: number, primes: boolean, signal: AbortSignal): SseConnection {
    const connection: SseConnection = new SseConnection({
      heartbeatMs: this.options.heartbeatMs,
      maxAgeMs: this.options.maxConnectionAgeMs,
      onClosed: () => this.#connections.release(stream.stream, connection),
    });
    this.#epochs.set(stream.stream, stream.epoch);
    const id = (seq: number) => formatEventId({ epoch: stream.epoch, stream: stream.stream, seq });
    // On a resumed connection the priming id is the cursor itself: it never moves the
    // client's position backwards.
    if (primes) connection.prime(id(afterSeq), this.options.retryMs);
    for (const event of this.log.eventsAfter(stream.stream, afterSeq)) {
      connection.deliver({ id: id(event.seq), data: event.message });
    }
    if (this.log.stream(stream.stream)?.state === 'open') {
      this.#connections.attach(stream.stream, connection);
      signal.addEventListener('abort', () => connection.close(), { once: true });
    } else {
      connection.close();
    }
    return connection;
  }

  /** JSON response mode: a collector in place of an SSE connection. */
  collect(stream: StreamRecord, requestKeys: readonly string[]): JsonCollector {
    const collector: JsonCollector = new JsonCollector(requestKeys, () => this.#connections.release(stream.stream, collector));
    this.#connections.attach(stream.stream, collector);
    return collector;
  }

  /**
   * Persist, then deliver. `answers` names the request a response answers: when it was the
   * stream's last unanswered request, the stream is finished and its connection closed.
   * Returns false, storing nothing, when the stream is no longer open.
   */
  emit(stream: number, data: string, answers?: string): boolean {
    const now = Date.now();
    const outcome = this.storage.transactionSync(() => {
      if (this.log.stream(stream)?.state !== 'open') return undefined;
      const seq = this.log.append(stream, data);
      this.#account(1, data.length);
      const finished = answers !== undefined && !this.log.markAnswered(answers, stream).othersPending;
      if (finished) this.log.end(stream, 'finished', now);
      return { seq, finished };
    });
    if (outcome === undefined) return false;
    if (outcome.finished) this.options.onStreamEnded(now);
    const epoch = this.#epochs.get(stream) ?? this.log.stream(stream)!.epoch;
    this.#connections.deliver(stream, { id: formatEventId({ epoch, stream, seq: outcome.seq }), data });
    if (outcome.finished) this.#connections.close(stream);
    return true;
  }

  /** A cancelled request is never answered (the spec forbids it), so it stops holding its stream open. */
  abandon(requestKey: string): void {
    const stream = this.log.streamOfRequest(requestKey);
    if (stream === undefined) return;
    const now = Date.now();
    const finished = this.storage.transactionSync(() => {
      if (this.log.stream(stream)?.state !== 'open') return false;
      const { othersPending } = this.log.markAnswered(requestKey, stream);
      if (!othersPending) this.log.end(stream, 'finished', now);
      return !othersPending;
    });
    if (finished) {
      this.#connections.close(stream);
      this.options.onStreamEnded(now);
    }
  }

  /** Drops the events of streams that ended at or before `endedBy` (retention). */
  pruneEnded(endedBy: number): void {
    const removed = this.storage.transactionSync(() => this.log.pruneEnded(endedBy));
    this.#account(-removed.events, -removed.bytes);
  }

  /** Whether any connection is attached: a client is listening, so the session is in use. */
  get hasConnections(): boolean {
    return this.#connections.size > 0;
  }

  /**
   * Keeps the stored events within the session's bounds: past either bound, the oldest are
   * pruned (a tenth of the event bound at a time, so pruning is not paid on every append).
   * Cursors into pruned events are then refused with 410 `events_pruned`.
   */
  #account(events: number, bytes: number): void {
    const totals = (this.#totals ??= { ...this.log.totals() });
    totals.events += events;
    totals.bytes += bytes;
    const { maxSessionEvents, maxSessionBytes } = this.options;
    while (totals.events > 1 && (totals.events > maxSessionEvents || totals.bytes > maxSessionBytes)) {
      const excess = Math.max(totals.events - maxSessionEvents, 1);
      const removed = this.log.pruneOldest(Math.min(totals.events - 1, Math.max(excess, Math.ceil(maxSessionEvents / 10))));
      totals.events -= removed.events;
      totals.bytes -= removed.bytes;
      if (removed.events === 0) break;
    }
  }

  /** Ends the stream's live connection, if any; the stream and its producer go on. */
  closeConnection(stream: number): void {
    this.#connections.close(stream);
  }

  closeAll(): void {
    this.#connections.closeAll();
    this.#epochs.clear();
    this.#totals = undefined;
  }
}
