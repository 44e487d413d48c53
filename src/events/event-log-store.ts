/**
 * One event log's storage (docs/events.md, *The log*), in its own object's SQLite: the log's
 * one-row record (what it is, its generation, how far it was pruned, its retention) and its
 * occurrences, one row each, numbered `seq` 0, 1, 2, … without gaps between the earliest kept
 * and the head. Made to cost one row written per occurrence, plus its share of cleanup:
 * - no index: `seq` is the rowid, so the head and the earliest kept are one row read each
 *   (`max`, `min`), a page is a range of the rowid, and the `maxAgeMs` floor is a binary search
 *   over it (stored times grow with seq) — an index on time or on `eventId` would be a second
 *   row written per occurrence;
 * - a generated `eventId` is not stored (it is `<logId>-<seq>`, unique across generations); an
 *   author's is, and deduplication looks it up in a map of the retained authors' ids, read once
 *   per wake of the object (rows read, at $0.001 per million, instead of an index's row written
 *   per occurrence at $1.00);
 * - deletes are batched: by count once the log holds an eighth more than it keeps, by age by the
 *   object's alarm; each batch writes the record's `pruned_to` once.
 * Occurrences are never rewritten: what was stored under a seq is what every reader of that seq
 * gets. A reset drops them all and takes a new log id, so no cursor of the old generation is
 * ever read as a position of the new one (core/event-cursor.ts).
 */
import type { LogState } from '../core/event-cursor.ts';
import { createSchema, storedVersion, upgradeSchema, type Schema } from '../storage/migrator.ts';
import type { Retention } from './event-retention.ts';

/** Two tables and the record: five rows written once in a log's life (storage/migrator.ts counts them). */
const LOG_SCHEMA: Schema = {
  version: 1,
  record: { table: 'event_log', column: 'schema_version' },
  create: [
    `CREATE TABLE event_log (
         singleton       INTEGER PRIMARY KEY CHECK (singleton = 1),
         schema_version  INTEGER NOT NULL DEFAULT 1,
         type            TEXT    NOT NULL,
         partition       TEXT    NOT NULL,
         log_id          TEXT    NOT NULL,
         -- Every seq below it was deleted: the earliest kept when the log is empty, and its head.
         pruned_to       INTEGER NOT NULL,
         max_age_ms      INTEGER NOT NULL,
         max_count       INTEGER NOT NULL
       )`,
    `CREATE TABLE occurrence (
         seq        INTEGER PRIMARY KEY,
         -- When the log stored it, in ms; never less than the one before (retention and maxAgeMs read it).
         stored_at  INTEGER NOT NULL,
         -- The author's id, where one was given; a generated one is derived from the seq.
         event_id   TEXT,
         -- The author's ISO 8601 time of the occurrence, where one was given; else stored_at's.
         timestamp  TEXT,
         data       TEXT    NOT NULL
       )`,
  ],
  upgrades: {},
};

/** Which log an object holds: its event type and partition (`''` when the type has none). */
export interface LogName {
  readonly type: string;
  readonly partition: string;
}

/** An occurrence to store: the author's id and time where given, its data as JSON text. */
export interface NewOccurrence {
  readonly eventId?: string;
  readonly timestamp?: string;
  readonly data: string;
}

/** An occurrence as stored, its id and time resolved. */
export interface StoredOccurrence {
  readonly seq: number;
  readonly storedAt: number;
  readonly eventId: string;
  readonly timestamp: string;
  /** JSON text, as the author's payload was stored. */
  readonly data: string;
}

export interface Appended {
  readonly logId: string;
  readonly seq: number;
  readonly storedAt: number;
  readonly eventId: string;
  readonly timestamp: string;
  /** An occurrence with this author's `eventId` was already kept: nothing was written, and `seq` is that one's. */
  readonly duplicate: boolean;
}

interface LogRecord {
  readonly logId: string;
  prunedTo: number;
  retention: Retention;
}

type OccurrenceRow = { seq: number; stored_at: number; event_id: string | null; timestamp: string | null; data: string };

/** Deletes wait until the log holds this fraction more than it keeps, so that each batch's record write is shared. */
const COUNT_SLACK_DIVISOR = 8;

export class EventLogStore {
  readonly #storage: DurableObjectStorage;
  readonly #name: LogName;
  #record: LogRecord | undefined;
  /** The retained occurrences' author ids and their seqs; read on the first deduplicating append after a wake. */
  #authoredIds: Map<string, number> | undefined;
  /** The last stored_at, so that stored times never go back (read with the head after a wake). */
  #lastStoredAt = 0;

  constructor(storage: DurableObjectStorage, name: LogName) {
    this.#storage = storage;
    this.#name = name;
  }

  get #sql(): SqlStorage {
    return this.#storage.sql;
  }

  /**
   * The log's record, creating the log (a fresh log id) on first use; `retention` is kept when it
   * changed (the type's declaration was edited and deployed), so the alarm sweeps by the new one.
   */
  open(retention: Retention): LogRecord {
    if (this.#record === undefined) {
      this.#record = this.#storage.transactionSync(() => {
        const version = storedVersion(this.#sql, LOG_SCHEMA);
        if (version === 0) {
          createSchema(this.#sql, LOG_SCHEMA);
          const logId = newLogId();
          this.#sql.exec(
            `INSERT INTO event_log (singleton, type, partition, log_id, pruned_to, max_age_ms, max_count) VALUES (1, ?, ?, ?, 0, ?, ?)`,
            this.#name.type,
            this.#name.partition,
            logId,
            retention.maxAgeMs,
            retention.maxCount,
          );
          return { logId, prunedTo: 0, retention };
        }
        upgradeSchema(this.#sql, LOG_SCHEMA);
        const row = this.#sql
          .exec<{ type: string; partition: string; log_id: string; pruned_to: number; max_age_ms: number; max_count: number }>(
            `SELECT type, partition, log_id, pruned_to, max_age_ms, max_count FROM event_log`,
          )
          .one();
        // An object is named by its log (event-logs.ts): another name here is a bug, never a log to read as this one.
        if (row.type !== this.#name.type || row.partition !== this.#name.partition) {
          throw new Error(
            `event log object holds ${JSON.stringify([row.type, row.partition])}, was asked for ${JSON.stringify(this.#name)}`,
          );
        }
        return { logId: row.log_id, prunedTo: row.pruned_to, retention: { maxAgeMs: row.max_age_ms, maxCount: row.max_count } };
      });
    }
    const record = this.#record;
    if (record.retention.maxAgeMs !== retention.maxAgeMs || record.retention.maxCount !== retention.maxCount) {
      this.#sql.exec(`UPDATE event_log SET max_age_ms = ?, max_count = ?`, retention.maxAgeMs, retention.maxCount);
      record.retention = retention;
    }
    return record;
  }

  /** The record of a log that exists, without creating one: undefined for a log never written or read. */
  existing(): LogRecord | undefined {
    if (this.#record !== undefined) return this.#record;
    if (storedVersion(this.#sql, LOG_SCHEMA) === 0) return undefined;
    return this.open(this.#storedRetention());
  }

  #storedRetention(): Retention {
    const row = this.#sql.exec<{ max_age_ms: number; max_count: number }>(`SELECT max_age_ms, max_count FROM event_log`).one();
    return { maxAgeMs: row.max_age_ms, maxCount: row.max_count };
  }

  /** Where the log stands: its identity, its head and its earliest kept occurrence (two rows read). */
  state(record: LogRecord): LogState {
    // Two statements: SQLite answers a lone min() or max() of the rowid from one end of the
    // table (one row read), but both in one SELECT by reading every row.
    const { lo } = this.#sql.exec<{ lo: number | null }>(`SELECT min(seq) AS lo FROM occurrence`).one();
    const { hi } = this.#sql.exec<{ hi: number | null }>(`SELECT max(seq) AS hi FROM occurrence`).one();
    return {
      type: this.#name.type,
      partition: this.#name.partition,
      logId: record.logId,
      earliestSeq: lo ?? record.prunedTo,
      nextSeq: hi === null ? record.prunedTo : hi + 1,
    };
  }

  /**
   * Stores one occurrence at the head, unless the author's `eventId` is already kept (then the
   * kept one is answered, `duplicate`, and nothing is written); deletes by count in the same
   * transaction when the log holds an eighth more than it keeps.
   */
  append(record: LogRecord, occurrence: NewOccurrence, now: number): Appended {
    const { eventId } = occurrence;
    if (eventId !== undefined) {
      const kept = this.#authored().get(eventId);
      if (kept !== undefined) {
        const { seq, storedAt, eventId: id, timestamp } = this.#resolve(record, this.#row(kept)!);
        return { logId: record.logId, seq, storedAt, eventId: id, timestamp, duplicate: true };
      }
    }
    return this.#storage.transactionSync(() => {
      const { nextSeq, earliestSeq } = this.state(record);
      if (this.#lastStoredAt === 0 && nextSeq > earliestSeq) this.#lastStoredAt = this.#row(nextSeq - 1)!.stored_at;
      const storedAt = Math.max(now, this.#lastStoredAt);
      this.#sql.exec(
        `INSERT INTO occurrence (seq, stored_at, event_id, timestamp, data) VALUES (?, ?, ?, ?, ?)`,
        nextSeq,
        storedAt,
        eventId ?? null,
        occurrence.timestamp ?? null,
        occurrence.data,
      );
      this.#lastStoredAt = storedAt;
      if (eventId !== undefined) this.#authoredIds?.set(eventId, nextSeq);
      const { maxCount } = record.retention;
      if (nextSeq + 1 - earliestSeq > maxCount + Math.max(1, Math.floor(maxCount / COUNT_SLACK_DIVISOR))) {
        this.#deleteBelow(record, nextSeq + 1 - maxCount);
      }
      const row = { seq: nextSeq, stored_at: storedAt, event_id: eventId ?? null, timestamp: occurrence.timestamp ?? null, data: '' };
      const { seq, eventId: id, timestamp } = this.#resolve(record, row);
      return { logId: record.logId, seq, storedAt, eventId: id, timestamp, duplicate: false };
    });
  }

  /** Up to `limit` occurrences from `fromSeq` on, in seq order, stopping before `maxBytes` of data (never before the first). */
  read(record: LogRecord, fromSeq: number, limit: number, maxBytes: number): StoredOccurrence[] {
    const rows: StoredOccurrence[] = [];
    let bytes = 0;
    for (const row of this.#sql.exec<OccurrenceRow>(
      `SELECT seq, stored_at, event_id, timestamp, data FROM occurrence WHERE seq >= ? ORDER BY seq LIMIT ?`,
      fromSeq,
      limit,
    )) {
      bytes += row.data.length;
      if (rows.length > 0 && bytes > maxBytes) break;
      rows.push(this.#resolve(record, row));
    }
    return rows;
  }

  /**
   * The first kept seq stored at or after `since` (the head when none is): the `maxAgeMs` floor.
   * Stored times never decrease with seq, so a binary search reads about log2(kept) rows.
   */
  floorSeq(state: LogState, since: number): number {
    let lo = state.earliestSeq;
    let hi = state.nextSeq;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (this.#row(mid)!.stored_at >= since) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** When the oldest kept occurrence was stored (undefined: none is): the alarm sweeps from it. */
  oldestStoredAt(): number | undefined {
    return this.#sql.exec<{ stored_at: number }>(`SELECT stored_at FROM occurrence ORDER BY seq LIMIT 1`).toArray()[0]?.stored_at;
  }

  /** Deletes every occurrence stored before `before` (retention by age); answers how many went. */
  sweep(record: LogRecord, before: number): number {
    const state = this.state(record);
    const cut = this.floorSeq(state, before);
    if (cut === state.earliestSeq) return 0;
    this.#storage.transactionSync(() => this.#deleteBelow(record, cut));
    return cut - state.earliestSeq;
  }

  /** Drops every occurrence and takes a new log id: every cursor of the old generation is answered `truncated` (log_reset). */
  reset(record: LogRecord): string {
    const logId = newLogId();
    this.#storage.transactionSync(() => {
      this.#sql.exec(`DELETE FROM occurrence`);
      this.#sql.exec(`UPDATE event_log SET log_id = ?, pruned_to = 0`, logId);
    });
    this.#record = { ...record, logId, prunedTo: 0 };
    this.#authoredIds = undefined;
    this.#lastStoredAt = 0;
    return logId;
  }

  #deleteBelow(record: LogRecord, cut: number): void {
    this.#sql.exec(`DELETE FROM occurrence WHERE seq < ?`, cut);
    this.#sql.exec(`UPDATE event_log SET pruned_to = ?`, cut);
    record.prunedTo = cut;
    // Read again on the next deduplicating append: what was deleted is no longer a duplicate.
    this.#authoredIds = undefined;
  }

  #authored(): Map<string, number> {
    this.#authoredIds ??= new Map(
      this.#sql
        .exec<{ seq: number; event_id: string }>(`SELECT seq, event_id FROM occurrence WHERE event_id IS NOT NULL`)
        .toArray()
        .map(({ seq, event_id }) => [event_id, seq]),
    );
    return this.#authoredIds;
  }

  #row(seq: number): OccurrenceRow | undefined {
    return this.#sql
      .exec<OccurrenceRow>(`SELECT seq, stored_at, event_id, timestamp, data FROM occurrence WHERE seq = ?`, seq)
      .toArray()[0];
  }

  #resolve(record: LogRecord, row: OccurrenceRow): StoredOccurrence {
    return {
      seq: row.seq,
      storedAt: row.stored_at,
      eventId: row.event_id ?? `${record.logId}-${row.seq}`,
      timestamp: row.timestamp ?? new Date(row.stored_at).toISOString(),
      data: row.data,
    };
  }
}

/** 96 random bits, hex: a log's generation. */
function newLogId(): string {
  return [...crypto.getRandomValues(new Uint8Array(12))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
