/**
 * The durable event log: every stream of the session, every event of every stream, and
 * every client request id with the stream that answers it. The stream rows are this file's;
 * the events are stored and read by event-rows.ts (handed out here as `appendMany` and
 * `eventsAfter`), the request ids by request-ids.ts (handed out as `requests`), the totals and
 * pruning by event-pruning.ts.
 *
 * Storage layout (schema.ts):
 * - `streams(stream, epoch, kind, state, pruned_through, opened_at, request_keys, open_floor,
 *   stored_events, stored_bytes, session_requests)` — one row
 *   per stream, written when it opens; its last seq and, for a request stream answered in
 *   full, its end are derived from its last event, so neither an event nor the answer that
 *   finishes a call updates it. `state` changes only when a standalone stream is superseded, a
 *   request stream is abandoned (cancelled) or finished by revival, or pruning removes a final
 *   event;
 * - `events(event, message, ends_stream)` and `event_parts(stream, seq, part, chunk)` — every
 *   event, a long message in parts (event-rows.ts);
 * - `requests(request_key, stream, answered)` — every request id used (request-ids.ts, handed
 *   out as `requests`); a stream finishes when all its requests are answered (one request, or
 *   every request of a 2025-03-26 batch).
 *
 * All methods are synchronous SQL, so a caller composes them into one atomic section with
 * no `await` in between.
 */
import type { StreamKind, StreamRecord, StreamState } from '../core/resume.ts';
import { lastOf, MAX_STREAM, startOf } from './event-key.ts';
import { pruneOldest, storedTotals, storedTotalsBound } from './event-pruning.ts';
import { EventRows, PART_UNITS, type StoredEvent, type StoredRow } from './event-rows.ts';
import { RequestIds } from './request-ids.ts';

type StreamRow = {
  stream: number;
  epoch: number;
  kind: StreamKind;
  state: StreamState;
  last_seq: number;
  pruned_through: number;
};

/**
 * A stream row with its derived last seq and state: an open row whose last event ends the
 * stream is finished. Two primary-key seeks: the last seq, then that event.
 */
const SELECT_STREAM = `SELECT s.stream, s.epoch, s.kind, s.pruned_through,
                                CASE WHEN s.state = 'open' AND coalesce(last.ends_stream, 0) = 1 THEN 'finished' ELSE s.state END AS state,
                                max(s.pruned_through, coalesce(last.seq, 0)) AS last_seq
                           FROM streams s
                           LEFT JOIN events last
                                  ON last.event = (SELECT max(e.event) FROM events e WHERE e.event >= ${startOf('s.stream')} AND e.event <= ${lastOf('s.stream')})`;

const toRecord = (row: StreamRow): StreamRecord => ({
  stream: row.stream,
  epoch: row.epoch,
  kind: row.kind,
  state: row.state,
  lastSeq: row.last_seq,
  prunedThrough: row.pruned_through,
});

/** The newest stream's number, and the session's requests with an id and GET streams through it. */
interface StreamCounts {
  readonly stream: number;
  readonly requests: number;
}

/** What opening a stream adds to the session's requests: its request ids, or one GET stream. */
const requestsOpening = (kind: StreamKind, requestKeys: readonly string[]): number => (kind === 'request' ? requestKeys.length : 1);

export interface EventLogOptions {
  /** UTF-16 units per stored part (tests use small ones); PART_UNITS by default. */
  readonly partUnits?: number;
}

export class EventLog {
  /** The newest stream and the session's requests through it: read once, then kept here (one writer per object). */
  #counts: StreamCounts | undefined;
  readonly #sql: SqlStorage;
  /** The events of every stream (event-rows.ts). */
  readonly #events: EventRows;
  /** The session's request ids, each with the stream that answers it. */
  readonly requests: RequestIds;

  constructor(storage: DurableObjectStorage, { partUnits = PART_UNITS }: EventLogOptions = {}) {
    this.#events = new EventRows(storage, partUnits);
    this.#sql = storage.sql;
    this.requests = new RequestIds(storage.sql);
  }

  /**
   * Numbers the stream itself: the highest number stored, plus one. Stream rows are never
   * deleted before the whole session is, so no number is handed out twice; a number lost to a
   * rolled-back insert was never told to anyone, and is handed out again. `lowestOpen`: the
   * lowest-numbered request stream still open in this instance, if any; `stored`: at least the
   * session's stored events and bytes (SessionStreams knows both).
   */
  openStream(
    kind: StreamKind,
    epoch: number,
    requestKeys: readonly string[],
    now: number,
    lowestOpen?: number,
    stored?: { readonly events: number; readonly bytes: number },
  ): StreamRecord {
    const newest = this.#newest();
    const stream = newest.stream + 1;
    // Unreachable within MAX_SESSION_REQUESTS (config.ts): every stream is at least one request.
    if (stream > MAX_STREAM) throw new RangeError(`a session has at most ${MAX_STREAM} streams`);
    const requests = newest.requests + requestsOpening(kind, requestKeys);
    this.#sql.exec(
      `INSERT INTO streams (stream, epoch, kind, state, opened_at, request_keys, open_floor, stored_events, stored_bytes, session_requests)
       VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)`,
      stream,
      epoch,
      kind,
      now,
      kind === 'request' ? JSON.stringify(requestKeys) : null,
      Math.min(lowestOpen ?? stream, stream),
      stored?.events ?? null,
      stored?.bytes ?? null,
      requests,
    );
    this.#counts = { stream, requests };
    return { stream, epoch, kind, state: 'open', lastSeq: 0, prunedThrough: 0 };
  }

  /**
   * The session's requests with an id and GET streams so far (MAX_SESSION_REQUESTS): what the
   * newest stream row recorded, counted once from every row where it does not say (a session
   * stored by schema version 3).
   */
  requestsMade(): number {
    return this.#newest().requests;
  }

  #newest(): StreamCounts {
    if (this.#counts !== undefined) return this.#counts;
    const row = this.#sql
      .exec<{ stream: number; requests: number | null }>(
        `SELECT stream, session_requests AS requests FROM streams ORDER BY stream DESC LIMIT 1`,
      )
      .toArray()[0];
    const requests =
      row === undefined
        ? 0
        : (row.requests ??
          this.#sql
            .exec<{ requests: number }>(
              `SELECT coalesce(sum(CASE kind WHEN 'request' THEN json_array_length(request_keys) ELSE 1 END), 0) AS requests FROM streams`,
            )
            .one().requests);
    this.#counts = { stream: row?.stream ?? 0, requests };
    return this.#counts;
  }

  /** The schema was just created: no stream, no request, no event_parts. */
  created(): void {
    this.#counts = { stream: 0, requests: 0 };
    this.#events.created();
  }

  /** Forgets the numbering (its insert rolled back), and whether event_parts exists: read again from storage. */
  forget(): void {
    this.#counts = undefined;
    this.#events.forget();
  }

  stream(stream: number): StreamRecord | undefined {
    const row = this.#sql.exec<StreamRow>(`${SELECT_STREAM} WHERE s.stream = ?`, stream).toArray()[0];
    return row === undefined ? undefined : toRecord(row);
  }

  /** Stores up to APPEND_BATCH events in one statement (event-rows.ts). */
  appendMany(events: readonly StoredRow[]): void {
    this.#events.appendMany(events);
  }

  /** Events after `afterSeq`, in order, in a page bounded by `budgetBytes` (event-rows.ts). */
  eventsAfter(stream: number, afterSeq: number, budgetBytes: number, perEventBytes = 0): StoredEvent[] {
    return this.#events.eventsAfter(stream, afterSeq, budgetBytes, perEventBytes);
  }

  /** Ends an open stream by its row: superseded, abandoned, or finished by revival. */
  end(stream: number, state: Exclude<StreamState, 'open'>): void {
    this.#sql.exec(`UPDATE streams SET state = ? WHERE stream = ? AND state = 'open'`, state, stream);
  }

  /**
   * Request streams whose producer was alive when the last instance stopped: open, and not
   * finished by their last event. Only streams from the newest row's open_floor on can be:
   * an instance serves every open stream of its session (a revival finishes the previous
   * instance's first), so one below the floor had ended when the newest opened. So a revival
   * reads the streams opened since the oldest call then running, not the session's whole
   * history — and an index of open streams, a write per call, is not needed.
   */
  openRequestStreams(): StreamRecord[] {
    return this.#sql
      .exec<StreamRow>(
        `SELECT * FROM (${SELECT_STREAM}
                         WHERE s.kind = 'request' AND s.state = 'open'
                           AND s.stream >= coalesce((SELECT open_floor FROM streams ORDER BY stream DESC LIMIT 1), 0))
          WHERE state = 'open' ORDER BY stream`,
      )
      .toArray()
      .map(toRecord);
  }

  /** Number and total size (UTF-8 bytes) of the stored events: exact, read from every event. */
  totals(): { readonly events: number; readonly bytes: number } {
    return storedTotals(this.#sql, this.#events.parts());
  }

  /** At least the number and size of the stored events, without reading them all (event-pruning.ts). */
  totalsBound(): { readonly events: number; readonly bytes: number } | undefined {
    return storedTotalsBound(this.#sql, this.#events.parts());
  }

  /** Drops the fewest events, oldest first, that cover `atLeast`, never `keep` (event-pruning.ts). */
  pruneOldest(
    atLeast: { readonly events: number; readonly bytes: number },
    keep: { readonly stream: number; readonly seq: number },
  ): { readonly events: number; readonly bytes: number } {
    return pruneOldest(this.#sql, this.#events.parts(), atLeast, keep);
  }
}
