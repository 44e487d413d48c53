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

  unansweredRequests(stream: number): string[] {
    return this.sql
      .exec<{ request_key: string }>(`SELECT request_key FROM requests WHERE stream = ? AND answered = 0`, stream)
      .toArray()
      .map((row) => row.request_key);
  }
}
