/**
 * The durable event log: every stream of the session, every event of every stream, and
 * every client request id with the stream that answers it.
 *
 * Storage layout (schema.ts):
 * - `streams(stream, epoch, kind, state, pruned_through, opened_at, request_keys, open_floor,
 *   stored_events, stored_bytes, session_requests)` — one row
 *   per stream, written when it opens; its last seq and, for a request stream answered in
 *   full, its end are derived from its last event, so neither an event nor the answer that
 *   finishes a call updates it. `state` changes only when a standalone stream is superseded, a
 *   request stream is abandoned (cancelled) or finished by revival, or pruning removes a final
 *   event;
 * - `events(event, message, ends_stream)` — the serialized JSON-RPC message, keyed by one
 *   integer of stream and seq (event-key.ts; `stream` and `seq` are virtual columns), for
 *   range scans; `ends_stream` marks the answer that leaves none of its stream's requests
 *   unanswered;
 * - `event_parts(stream, seq, part, chunk)` — the rest of a message too long for one SQLite
 *   value (parts 1, 2, …; its events row holds the first), created with the first such message;
 * - `requests(request_key, stream, answered)` — every request id used (request-ids.ts, handed
 *   out as `requests`); a stream finishes when all its requests are answered (one request, or
 *   every request of a 2025-03-26 batch).
 *
 * All methods are synchronous SQL, so a caller composes them into one atomic section with
 * no `await` in between.
 */
import type { StreamKind, StreamRecord, StreamState } from '../core/resume.ts';
import { splitText } from '../core/utf8.ts';
import { tableExists } from '../storage/migrator.ts';
import { EVENT_KEY, lastOf, MAX_SEQ, MAX_STREAM, startOf } from './event-key.ts';
import { partBytes as partBytesOf, pruneOldest, storedTotals, storedTotalsBound } from './event-pruning.ts';
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

export type StoredEvent = {
  readonly seq: number;
  readonly message: string;
};

export type StoredRow = StoredEvent & {
  readonly stream: number;
  /** The answer that leaves none of the stream's requests unanswered: it finishes the stream. */
  readonly endsStream?: boolean;
};

/**
 * The most one stored value may take, in UTF-8 bytes. A Durable Object's SQLite refuses a
 * string or row over 2 MB (Cloudflare's documented SQL limit; local workerd allows a little
 * more), so this keeps 1,000 bytes of that for the rest of the row. Values stored whole (the
 * handshake) are bounded by it; messages are stored in parts.
 */
export const MAX_VALUE_BYTES = 1_999_000;

/**
 * The UTF-16 units of a message stored in one value: a unit takes at most 3 UTF-8 bytes, so
 * a part stays within MAX_VALUE_BYTES. A longer message is stored in parts.
 */
export const PART_UNITS = 600_000;

/**
 * The most one message may take, in UTF-8 bytes. Delivery is store-then-send, so a message
 * over it cannot be sent either (SessionStreams.emit refuses it). Twice the largest request
 * body the Worker takes; while a message is stored and sent, several copies of it are in
 * memory at once (the string, its SSE frame, the encoded bytes), and an isolate has 128 MB.
 */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** The most events one read of a stream's log returns, whatever their size. */
const PAGE_ROWS = 1_000;

/** Rows per INSERT: three bound parameters each, and a Durable Object statement binds at most 100. */
export const APPEND_BATCH = 33;

/** The INSERT of rows whose `ends_stream` flags are `ends` ('0' or '1' a row), cached by them. */
const insertStatements = new Map<string, string>();
const insertRows = (ends: string): string => {
  let statement = insertStatements.get(ends);
  if (statement === undefined) {
    statement = `INSERT INTO events (event, message, ends_stream) VALUES ${[...ends].map((end) => `(${EVENT_KEY}, ?, ${end})`).join(', ')}`;
    insertStatements.set(ends, statement);
  }
  return statement;
};

const CREATE_EVENT_PARTS = `CREATE TABLE IF NOT EXISTS event_parts (
                              stream  INTEGER NOT NULL,
                              seq     INTEGER NOT NULL,
                              part    INTEGER NOT NULL,
                              chunk   TEXT    NOT NULL,
                              PRIMARY KEY (stream, seq, part)
                            ) WITHOUT ROWID`;

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
  /** Whether event_parts exists: read once, then kept here. */
  #hasParts: boolean | undefined;
  readonly #partUnits: number;
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;
  /** The session's request ids, each with the stream that answers it. */
  readonly requests: RequestIds;

  constructor(storage: DurableObjectStorage, { partUnits = PART_UNITS }: EventLogOptions = {}) {
    this.#storage = storage;
    if (!Number.isInteger(partUnits) || partUnits < 2 || partUnits > PART_UNITS) throw new RangeError(`partUnits must be 2..${PART_UNITS}`);
    this.#sql = storage.sql;
    this.requests = new RequestIds(storage.sql);
    this.#partUnits = partUnits;
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

  /** Forgets the numbering (its insert rolled back): read again from storage. */
  forget(): void {
    this.#counts = undefined;
    this.#hasParts = undefined;
  }

  stream(stream: number): StreamRecord | undefined {
    const row = this.#sql.exec<StreamRow>(`${SELECT_STREAM} WHERE s.stream = ?`, stream).toArray()[0];
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Stores up to APPEND_BATCH events in one statement — atomic, and far cheaper per row than
   * one INSERT each (measured in workerd: ~6 µs a row instead of ~11). The caller knows each
   * stream is open and each `seq` is one past the last (the primary key refuses a seq twice).
   */
  appendMany(events: readonly StoredRow[]): void {
    if (events.length === 0) return;
    if (events.length > APPEND_BATCH) throw new RangeError(`appendMany takes at most ${APPEND_BATCH} rows, got ${events.length}`);
    const params: (number | string)[] = [];
    let ends = '';
    let parts: [stream: number, seq: number, part: number, chunk: string][] | undefined;
    for (const { stream, seq, message, endsStream } of events) {
      if (seq > MAX_SEQ) throw new RangeError(`a stream holds at most ${MAX_SEQ} events`);
      ends += endsStream === true ? '1' : '0';
      if (message.length <= this.#partUnits) {
        params.push(stream, seq, message);
        continue;
      }
      const [first, ...rest] = splitText(message, this.#partUnits);
      params.push(stream, seq, first!);
      parts ??= [];
      for (const [i, chunk] of rest.entries()) parts.push([stream, seq, i + 1, chunk]);
    }
    if (parts === undefined) {
      this.#sql.exec(insertRows(ends), ...params);
      return;
    }
    // A message is stored whole or not at all: its row and its parts in one transaction.
    this.#storage.transactionSync(() => {
      if (!this.#parts()) this.#sql.exec(CREATE_EVENT_PARTS);
      this.#sql.exec(insertRows(ends), ...params);
      for (const part of parts) this.#sql.exec(`INSERT INTO event_parts (stream, seq, part, chunk) VALUES (?, ?, ?, ?)`, ...part);
    });
    this.#hasParts = true;
  }

  /** Whether any message was ever stored in parts (event_parts exists). */
  #parts(): boolean {
    this.#hasParts ??= tableExists(this.#sql, 'event_parts');
    return this.#hasParts;
  }

  /**
   * Events after `afterSeq`, in order, as many as fit in `budgetBytes` — counting each
   * message's UTF-8 bytes plus `perEventBytes` (its framing) — but at least one, if there is
   * one, and at most PAGE_ROWS. A stream's seqs are contiguous (pruning only ever removes a
   * prefix of a stream), so a page is the key range (afterSeq, afterSeq + PAGE_ROWS]. Its size
   * is summed first, with `octet_length`, which SQLite answers without loading the message, so
   * a page of large messages never loads more of them than it returns; a page that fits (the
   * common case) takes that sum and one read. Messages stored in parts are returned whole.
   */
  eventsAfter(stream: number, afterSeq: number, budgetBytes: number, perEventBytes = 0): StoredEvent[] {
    let through = Math.min(afterSeq + PAGE_ROWS, MAX_SEQ);
    const parts = this.#parts();
    const { bytes, partBytes } = this.#sql
      .exec<{ bytes: number | null; partBytes: number | null }>(
        `SELECT sum(octet_length(message) + ?) AS bytes,
                ${parts ? '(SELECT sum(octet_length(chunk)) FROM event_parts WHERE stream = ? AND seq > ? AND seq <= ?)' : 'NULL'} AS partBytes
           FROM events WHERE event > ${EVENT_KEY} AND event <= ${EVENT_KEY}`,
        perEventBytes,
        ...(parts ? [stream, afterSeq, through] : []),
        stream,
        afterSeq,
        stream,
        through,
      )
      .one();
    if (bytes === null) return [];
    if (bytes + (partBytes ?? 0) > budgetBytes) {
      const sizes = this.#sql
        .exec(
          `SELECT seq, octet_length(message) + ? FROM events WHERE event > ${EVENT_KEY} AND event <= ${EVENT_KEY} ORDER BY event`,
          perEventBytes,
          stream,
          afterSeq,
          stream,
          through,
        )
        .raw<[number, number]>();
      const more = partBytes === null ? undefined : partBytesOf(this.#sql, stream, afterSeq, through);
      // Read to the end (at most PAGE_ROWS rows): a cursor left open keeps its statement busy.
      let total = 0;
      through = afterSeq;
      for (const [seq, size] of sizes) {
        total += size + (more?.get(seq) ?? 0);
        if (through === afterSeq || total <= budgetBytes) through = seq;
      }
    }
    // Rows as arrays, not objects: a replay of 1,000 events read in 0.7–0.9 ms instead of
    // 1.4–1.9 (toArray; warm loop in workerd).
    const events: { seq: number; message: string }[] = [];
    const rows = this.#sql
      .exec(
        `SELECT seq, message FROM events WHERE event > ${EVENT_KEY} AND event <= ${EVENT_KEY} ORDER BY event`,
        stream,
        afterSeq,
        stream,
        through,
      )
      .raw<[number, string]>();
    for (const [seq, message] of rows) events.push({ seq, message });
    if (partBytes !== null) {
      const parts = this.#sql
        .exec(`SELECT seq, chunk FROM event_parts WHERE stream = ? AND seq > ? AND seq <= ? ORDER BY seq, part`, stream, afterSeq, through)
        .raw<[number, string]>();
      const bySeq = new Map(events.map((event) => [event.seq, event]));
      for (const [seq, chunk] of parts) bySeq.get(seq)!.message += chunk;
    }
    return events;
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
    return storedTotals(this.#sql, this.#parts());
  }

  /** At least the number and size of the stored events, without reading them all (event-pruning.ts). */
  totalsBound(): { readonly events: number; readonly bytes: number } | undefined {
    return storedTotalsBound(this.#sql, this.#parts());
  }

  /** Drops the fewest events, oldest first, that cover `atLeast`, never `keep` (event-pruning.ts). */
  pruneOldest(
    atLeast: { readonly events: number; readonly bytes: number },
    keep: { readonly stream: number; readonly seq: number },
  ): { readonly events: number; readonly bytes: number } {
    return pruneOldest(this.#sql, this.#parts(), atLeast, keep);
  }
}
