/**
 * The events of the session's streams, as rows: storing them (several in one statement, a long
 * message in parts) and reading a stream's events back in pages bounded in bytes. EventLog
 * (event-log.ts) hands both out as its own `appendMany` and `eventsAfter`; the stream rows, the
 * request ids (request-ids.ts) and the totals and pruning (event-pruning.ts) are its
 * neighbours'.
 *
 * Storage layout (schema.ts):
 * - `events(event, message, ends_stream)` — the serialized JSON-RPC message, keyed by one
 *   integer of stream and seq (event-key.ts; `stream` and `seq` are virtual columns), for
 *   range scans; `ends_stream` marks the answer that leaves none of its stream's requests
 *   unanswered;
 * - `event_parts(stream, seq, part, chunk)` — the rest of a message too long for one SQLite
 *   value (parts 1, 2, …; its events row holds the first), created with the first such message.
 *
 * All methods are synchronous SQL, so a caller composes them into one atomic section with
 * no `await` in between.
 */
import { splitText } from '../core/utf8.ts';
import { tableExists } from '../storage/migrator.ts';
import { EVENT_KEY, MAX_SEQ } from './event-key.ts';
import { partBytes as partBytesOf } from './event-pruning.ts';

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

export class EventRows {
  /** Whether event_parts exists: read once, then kept here. */
  #hasParts: boolean | undefined;
  readonly #partUnits: number;
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;

  /** `partUnits`: UTF-16 units per stored part (tests use small ones). */
  constructor(storage: DurableObjectStorage, partUnits: number) {
    this.#storage = storage;
    if (!Number.isInteger(partUnits) || partUnits < 2 || partUnits > PART_UNITS) throw new RangeError(`partUnits must be 2..${PART_UNITS}`);
    this.#sql = storage.sql;
    this.#partUnits = partUnits;
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
      if (!this.parts()) this.#sql.exec(CREATE_EVENT_PARTS);
      this.#sql.exec(insertRows(ends), ...params);
      for (const part of parts) this.#sql.exec(`INSERT INTO event_parts (stream, seq, part, chunk) VALUES (?, ?, ?, ?)`, ...part);
    });
    this.#hasParts = true;
  }

  /** Whether any message was ever stored in parts (event_parts exists). */
  parts(): boolean {
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
    const parts = this.parts();
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

  /** The schema was just created, without event_parts (it is created with the first message stored in parts). */
  created(): void {
    this.#hasParts = false;
  }

  /** Forgets whether event_parts exists (its creation may have rolled back): read again from storage. */
  forget(): void {
    this.#hasParts = undefined;
  }
}
