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
  /**
   * Stored events and their size in UTF-8 bytes, read from storage before the first write of
   * this instance, then kept in step with every write.
   */
  #storedTotals: { events: number; bytes: number } | undefined;

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
    const totals = this.#totals();
    const outcome = this.storage.transactionSync(() => {
      if (this.log.stream(stream)?.state !== 'open') return undefined;
      const seq = this.log.append(stream, data);
      this.#account(totals, 1, utf8Length(data));
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
    const totals = this.#totals();
    const removed = this.storage.transactionSync(() => this.log.pruneEnded(endedBy));
    this.#account(totals, -removed.events, -removed.bytes);
  }

  /** Whether any connection is attached: a client is listening, so the session is in use. */
  get hasConnections(): boolean {
    return this.#connections.size > 0;
  }

  /**
   * Keeps the stored events within the session's bounds: past either bound, exactly the
   * oldest events needed to get back within it are pruned (whole ended streams first, then
   * the oldest events of open ones). The newest event always stays. Cursors into pruned
   * events are then refused with 410 `events_pruned`.
   */
  #account(totals: { events: number; bytes: number }, events: number, bytes: number): void {
    totals.events += events;
    totals.bytes += bytes;
    const { maxSessionEvents, maxSessionBytes } = this.options;
    while (totals.events > 1 && (totals.events > maxSessionEvents || totals.bytes > maxSessionBytes)) {
      const excess = totals.events > maxSessionEvents ? totals.events - maxSessionEvents : 1;
      const removed = this.log.pruneOldest(Math.min(excess, totals.events - 1));
      if (removed.events === 0) break;
      totals.events -= removed.events;
      totals.bytes -= removed.bytes;
    }
  }

  /** Stored totals, read from storage before this instance's first write. */
  #totals(): { events: number; bytes: number } {
    return (this.#storedTotals ??= { ...this.log.totals() });
  }

  /** Ends the stream's live connection, if any; the stream and its producer go on. */
  closeConnection(stream: number): void {
    this.#connections.close(stream);
  }

  closeAll(): void {
    this.#connections.closeAll();
    this.#epochs.clear();
    this.#storedTotals = undefined;
  }
}

/** The UTF-8 size of a string, as SQLite counts `length(CAST(message AS BLOB))`. */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
    } else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 UTF-8 bytes
      i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}
