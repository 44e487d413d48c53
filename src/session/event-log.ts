/**
 * The durable event log: every stream of the session, every event of every stream, and
 * every client request id with the stream that answers it.
 *
 * Storage layout:
 * - `streams(stream, epoch, kind, state, last_seq, pruned_through)` — one row per stream;
 *   `last_seq` is the seq of the newest event (0 = only the priming event, which is never
 *   stored because it carries no message);
 * - `events(stream, seq, message)` — the serialized JSON-RPC message, keyed for range scans;
 * - `requests(request_key, stream, answered)` — a stream finishes when all its requests are
 *   answered (one request, or every request of a 2025-03-26 batch).
 *
 * All methods are synchronous SQL, so a caller composes them into one atomic section with
 * no `await` in between.
 */
import type { StreamKind, StreamRecord, StreamState } from '../core/resume.ts';

type StreamRow = {
  stream: number;
  epoch: number;
  kind: StreamKind;
  state: StreamState;
  last_seq: number;
  pruned_through: number;
};

const toRecord = (row: StreamRow): StreamRecord => ({
  stream: row.stream,
  epoch: row.epoch,
  kind: row.kind,
  state: row.state,
  lastSeq: row.last_seq,
  prunedThrough: row.pruned_through,
});

export type StoredEvent = {
  readonly seq: number;
  readonly message: string;
};

export class EventLog {
  constructor(private readonly sql: SqlStorage) {}

  openStream(kind: StreamKind, epoch: number): StreamRecord {
    const row = this.sql
      .exec<StreamRow>(`INSERT INTO streams (epoch, kind, state) VALUES (?, ?, 'open') RETURNING *`, epoch, kind)
      .one();
    return toRecord(row);
  }

  stream(stream: number): StreamRecord | undefined {
    const row = this.sql.exec<StreamRow>(`SELECT * FROM streams WHERE stream = ?`, stream).toArray()[0];
    return row === undefined ? undefined : toRecord(row);
  }

  /** Appends a message to an open stream and returns its seq. */
  append(stream: number, message: string): number {
    const seq = this.sql
      .exec<{ last_seq: number }>(
        `UPDATE streams SET last_seq = last_seq + 1 WHERE stream = ? AND state = 'open' RETURNING last_seq`,
        stream,
      )
      .toArray()[0]?.last_seq;
    if (seq === undefined) throw new Error(`stream ${stream} is not open`);
    this.sql.exec(`INSERT INTO events (stream, seq, message) VALUES (?, ?, ?)`, stream, seq, message);
    return seq;
  }

  /** Events after `afterSeq`, in order. */
  eventsAfter(stream: number, afterSeq: number): StoredEvent[] {
    return this.sql
      .exec<StoredEvent>(`SELECT seq, message FROM events WHERE stream = ? AND seq > ? ORDER BY seq`, stream, afterSeq)
      .toArray();
  }

  end(stream: number, state: Exclude<StreamState, 'open'>, now: number): void {
    this.sql.exec(`UPDATE streams SET state = ?, ended_at = ? WHERE stream = ? AND state = 'open'`, state, now, stream);
  }

  /** Request streams whose producer was alive when the last instance stopped. */
  openRequestStreams(): StreamRecord[] {
    return this.sql
      .exec<StreamRow>(`SELECT * FROM streams WHERE kind = 'request' AND state = 'open' ORDER BY stream`)
      .toArray()
      .map(toRecord);
  }

  registerRequest(requestKey: string, stream: number): void {
    this.sql.exec(`INSERT INTO requests (request_key, stream) VALUES (?, ?)`, requestKey, stream);
  }

  streamOfRequest(requestKey: string): number | undefined {
    return this.sql.exec<{ stream: number }>(`SELECT stream FROM requests WHERE request_key = ?`, requestKey).toArray()[0]
      ?.stream;
  }

  /** Marks a request answered; returns whether its stream still awaits other answers. */
  markAnswered(requestKey: string, stream: number): { readonly othersPending: boolean } {
    this.sql.exec(`UPDATE requests SET answered = 1 WHERE request_key = ?`, requestKey);
    const pending = this.sql
      .exec<{ n: number }>(`SELECT count(*) AS n FROM requests WHERE stream = ? AND answered = 0`, stream)
      .one().n;
    return { othersPending: pending > 0 };
  }

  /** Number and total size (UTF-8 bytes) of the stored events. */
  totals(): { readonly events: number; readonly bytes: number } {
    return this.sql
      .exec<{ events: number; bytes: number }>(`SELECT count(*) AS events, coalesce(sum(length(CAST(message AS BLOB))), 0) AS bytes FROM events`)
      .one();
  }

  /**
   * Drops the events of streams that ended at or before `endedBy`. The stream rows stay, so a
   * cursor into them is answered `events_pruned`, not `unknown_stream`.
   * Returns what was removed.
   */
  pruneEnded(endedBy: number): { readonly events: number; readonly bytes: number } {
    const streams = this.sql
      .exec<{ stream: number }>(
        `SELECT stream FROM streams WHERE state != 'open' AND ended_at <= ? AND pruned_through < last_seq`,
        endedBy,
      )
      .toArray();
    let events = 0;
    let bytes = 0;
    for (const { stream } of streams) {
      const removed = this.sql
        .exec<{ events: number; bytes: number }>(
          `SELECT count(*) AS events, coalesce(sum(length(CAST(message AS BLOB))), 0) AS bytes FROM events WHERE stream = ?`,
          stream,
        )
        .one();
      this.sql.exec(`DELETE FROM events WHERE stream = ?`, stream);
      this.sql.exec(`UPDATE streams SET pruned_through = last_seq WHERE stream = ?`, stream);
      events += removed.events;
      bytes += removed.bytes;
    }
    return { events, bytes };
  }

  /**
   * Drops the `count` oldest events — ended streams first, then open ones — and records how
   * far each affected stream is pruned. Returns the size of what was removed.
   */
  pruneOldest(count: number): { readonly events: number; readonly bytes: number } {
    const victims = this.sql
      .exec<{ stream: number; seq: number; size: number }>(
        `SELECT e.stream AS stream, e.seq AS seq, length(CAST(e.message AS BLOB)) AS size
           FROM events e JOIN streams s ON s.stream = e.stream
          ORDER BY s.state = 'open', e.stream, e.seq
          LIMIT ?`,
        count,
      )
      .toArray();
    const through = new Map<number, number>();
    let bytes = 0;
    for (const { stream, seq, size } of victims) {
      this.sql.exec(`DELETE FROM events WHERE stream = ? AND seq = ?`, stream, seq);
      through.set(stream, Math.max(through.get(stream) ?? 0, seq));
      bytes += size;
    }
    for (const [stream, seq] of through) {
      this.sql.exec(`UPDATE streams SET pruned_through = max(pruned_through, ?) WHERE stream = ?`, seq, stream);
    }
    return { events: victims.length, bytes };
  }

  /** When the oldest unpruned ended stream ended, if any. */
  oldestUnprunedEnd(): number | undefined {
    return (
      this.sql
        .exec<{ at: number | null }>(`SELECT min(ended_at) AS at FROM streams WHERE state != 'open' AND pruned_through < last_seq`)
        .one().at ?? undefined
    );
  }

  unansweredRequests(stream: number): string[] {
    return this.sql
      .exec<{ request_key: string }>(`SELECT request_key FROM requests WHERE stream = ? AND answered = 0`, stream)
      .toArray()
      .map((row) => row.request_key);
  }
}
