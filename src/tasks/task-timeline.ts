/**
 * A task's timeline in its object's SQLite (SEP-2694 events, draft): seq 0, 1, 2, … with nothing
 * skipped, each event immutable; read by `tasks/stream` (task-streams.ts) and, as an MCP Events
 * task event source, by `events/poll` and `events/stream` (task-sources.ts). Shaped by what a row written costs:
 * - seq 0 is the task's creation and the last seq, once it ended, its terminal status: both
 *   are the task row itself (its creation; its final state, which never changes again), so
 *   they are derived from it, not stored — a task created and completed with nothing between
 *   writes no event row at all;
 * - what happens between — progress, log messages, a question asked (`input_required`) and
 *   answered, events the tool emits — is one row each in `task_events`, a rowid table keyed
 *   by seq, created with the first such event.
 * The caller appends in the same transaction as the task-row change the event describes, so
 * the timeline and `tasks/get` never disagree, and before anyone hears of the event. Older
 * events beyond `maxEvents` are dropped oldest first; the timeline then starts later, and a
 * cursor before its start is answered `events_gone` (core/task-stream.ts), never skipped over.
 */
import {
  encodeBody,
  statusEvent,
  statusLineOf,
  TASK_EVENT_TYPES,
  type EncodedEvent,
  type EncodedEventBody,
  type TaskEvent,
  type TaskEventBody,
} from '../core/task-events.ts';
import type { TimedEvent } from '../core/task-source.ts';
import type { TaskTimeline as Timeline } from '../core/task-stream.ts';
import { isTerminal, newTask, type TaskRecord } from '../core/task.ts';
import { tableExists } from '../storage/migrator.ts';

const CREATE = `CREATE TABLE IF NOT EXISTS task_events (
                  seq      INTEGER PRIMARY KEY,
                  type     TEXT    NOT NULL,
                  payload  TEXT    NOT NULL,
                  -- When it was stored (epoch ms): a progress line's time is the task's lastUpdatedAt.
                  at       INTEGER NOT NULL
                )`;

/** The most stored events one read returns. */
const PAGE = 500;

/** Rows one INSERT stores: two bound values each and two for all, within a statement's 100. */
export const BATCH_ROWS = 49;

/** The INSERT of `rows` consecutive events: ?1 the first seq, ?2 the time, then type and payload of each. */
const INSERTS = new Map<number, string>();
function insertRows(rows: number): string {
  let statement = INSERTS.get(rows);
  if (statement === undefined) {
    const values = Array.from({ length: rows }, (_, i) => `(?1 + ${i}, ?${3 + 2 * i}, ?${4 + 2 * i}, ?2)`);
    statement = `INSERT INTO task_events (seq, type, payload, at) VALUES ${values.join(', ')}`;
    INSERTS.set(rows, statement);
  }
  return statement;
}

/** What a working task last reported (its latest progress or log line) and when it was stored. */
export interface StatusLine {
  readonly line: string;
  readonly at: number;
}

/** The events that say where a task stands: a line (progress, log), or a status change, after which older lines are stale. */
const STANDING = [TASK_EVENT_TYPES.progress, TASK_EVENT_TYPES.log, TASK_EVENT_TYPES.status];

export class TaskTimeline {
  readonly #sql: SqlStorage;
  readonly #maxEvents: number;
  /** The stored events' lowest and highest seq (undefined: none), read once, then kept here. */
  #stored: { low: number; high: number } | null | undefined;
  /** The newest line, unless a status change came after it (null), read once, then kept here. */
  #line: StatusLine | null | undefined;
  /** The newest standing event appended by this instance, its line not worked out until asked for (`statusLine`). */
  #lineSource: { readonly type: string; readonly payloadJson: string; readonly at: number } | undefined;

  constructor(sql: SqlStorage, { maxEvents }: { readonly maxEvents: number }) {
    if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) throw new RangeError('maxEvents must be a positive integer');
    this.#sql = sql;
    this.#maxEvents = maxEvents;
  }

  /**
   * Stores what happened between the task's creation and its end, as the next seq; call in the
   * transaction that writes the task change it describes. Returns the seq. A task that ended
   * takes no more: its terminal event is its last.
   */
  append(task: TaskRecord, event: TaskEventBody | EncodedEventBody, at: number): number {
    return this.appendAll(task, ['payloadJson' in event ? event : encodeBody(event)], at);
  }

  /**
   * `append` for several events, in order, as consecutive seqs: at most BATCH_ROWS to a
   * statement (the round's notifications come in batches, notification-tap.ts). Returns the
   * first one's seq. Call inside a transaction: a batch is stored whole or not at all.
   */
  appendAll(task: TaskRecord, events: readonly EncodedEventBody[], at: number): number {
    if (isTerminal(task.status)) throw new Error(`task ${task.taskId} has ended: its timeline is closed`);
    const stored = this.#range();
    const first = (stored?.high ?? 0) + 1;
    if (events.length === 0) return first;
    if (stored === null) this.#sql.exec(CREATE);
    for (let offset = 0; offset < events.length; offset += BATCH_ROWS) {
      const rows = events.slice(offset, offset + BATCH_ROWS);
      const values: (string | number)[] = [first + offset, at];
      for (const { type, payloadJson } of rows) values.push(type, payloadJson);
      this.#sql.exec(insertRows(rows.length), ...values);
    }
    const high = first + events.length - 1;
    const standing = events.findLast(({ type }) => STANDING.includes(type as (typeof STANDING)[number]));
    if (standing !== undefined) {
      // Worked out when tasks/get asks, not per event: most progress is never read that way.
      this.#lineSource = { type: standing.type, payloadJson: standing.payloadJson, at };
      this.#line = undefined;
    }
    const low = stored?.low ?? first;
    if (high - low + 1 > this.#maxEvents) {
      // Past the bound: the oldest go as new ones come (a delete is a row written too).
      this.#sql.exec(`DELETE FROM task_events WHERE seq <= ?`, high - this.#maxEvents);
      this.#stored = { low: high - this.#maxEvents + 1, high };
    } else {
      this.#stored = { low, high };
    }
    return first;
  }

  /**
   * The terminal event's seq for a task ending now: one past everything stored. The caller
   * keeps it with the task's final state (it is that state's place in the timeline).
   */
  finalSeq(): number {
    return (this.#range()?.high ?? 0) + 1;
  }

  /**
   * What the task last reported while working — its newest progress or log line, unless a
   * status change came after it — or undefined. tasks/get reads a working task's
   * `statusMessage` from here, so a progress event costs one row (its own), not two.
   */
  statusLine(): StatusLine | undefined {
    if (this.#line === undefined && this.#lineSource !== undefined) {
      const { type, payloadJson, at } = this.#lineSource;
      this.#line = lineOf({ type, payload: JSON.parse(payloadJson) as Record<string, unknown> }, at);
    } else if (this.#line === undefined) {
      const row =
        this.#range() === null
          ? undefined
          : this.#sql
              .exec<{ type: string; payload: string; at: number }>(
                `SELECT type, payload, at FROM task_events WHERE type IN (?, ?, ?) ORDER BY seq DESC LIMIT 1`,
                ...STANDING,
              )
              .toArray()[0];
      this.#line =
        row === undefined ? null : lineOf({ type: row.type, payload: JSON.parse(row.payload) as Record<string, unknown> }, row.at);
    }
    return this.#line ?? undefined;
  }

  /**
   * Where the timeline stands, for core/task-stream.ts. An ended task's last event is the
   * `finalSeq` kept with it (a task stored before timelines existed has none: it ended at 1).
   */
  state(task: TaskRecord): Timeline {
    const stored = this.#range();
    const terminal = isTerminal(task.status);
    const nextSeq = terminal ? (task.finalSeq ?? this.finalSeq()) + 1 : (stored?.high ?? 0) + 1;
    // Nothing dropped: from the creation event; else from the oldest stored event.
    const earliestSeq = stored === null || stored.low === 1 ? 0 : stored.low;
    return { nextSeq, earliestSeq, terminal };
  }

  /** Events from `fromSeq` on (at most `limit` stored ones, plus the derived ones in range), in order. */
  events(task: TaskRecord, fromSeq: number, limit = PAGE): TaskEvent[] {
    return this.encodedEvents(task, fromSeq, limit).map(({ seq, type, payloadJson }) => ({
      seq,
      type,
      payload: JSON.parse(payloadJson) as Record<string, unknown>,
    }));
  }

  /**
   * `events`, their payloads as stored (JSON text): what a stream sends, unparsed; with when
   * each was stored (the creation's is the task's, the terminal one's its last update).
   */
  encodedEvents(task: TaskRecord, fromSeq: number, limit = PAGE): (EncodedEvent & TimedEvent)[] {
    const events: (EncodedEvent & TimedEvent)[] = [];
    const { nextSeq, earliestSeq, terminal } = this.state(task);
    const from = Math.max(fromSeq, earliestSeq);
    if (from === 0) {
      const created = newTask(task.taskId, task.createdAt, task.ttlMs, task.pollIntervalMs);
      events.push({ seq: 0, ...encodeBody(statusEvent(created)), at: task.createdAt });
    }
    if (this.#range() !== null && limit > 0) {
      const rows = this.#sql
        .exec(`SELECT seq, type, payload, at FROM task_events WHERE seq >= ? ORDER BY seq LIMIT ?`, Math.max(from, 1), limit)
        .raw<[number, string, string, number]>();
      for (const [seq, type, payloadJson, at] of rows) events.push({ seq, type, payloadJson, at });
    }
    const last = events.at(-1)?.seq ?? from - 1;
    if (terminal && last === nextSeq - 2 && from <= nextSeq - 1) {
      events.push({ seq: nextSeq - 1, ...encodeBody(statusEvent(task)), at: task.updatedAt });
    }
    return events;
  }

  /**
   * The first retained seq stored at or after `since` (epoch ms), `nextSeq` when none is: the
   * `maxAgeMs` floor of a task event source (core/event-cursor.ts `MaxAgeFloor`). Stored times
   * grow with seq; the stored events are scanned (no index on time: a second row per event).
   */
  floorSeq(task: TaskRecord, since: number): number {
    const { nextSeq, earliestSeq, terminal } = this.state(task);
    if (earliestSeq === 0 && task.createdAt >= since) return 0;
    if (this.#range() !== null) {
      const { seq } = this.#sql.exec<{ seq: number | null }>(`SELECT min(seq) AS seq FROM task_events WHERE at >= ?`, since).one();
      if (seq !== null) return Math.max(seq, earliestSeq);
    }
    return terminal && task.updatedAt >= since ? nextSeq - 1 : nextSeq;
  }

  /** Reads what is stored again next time: a transaction that appended was rolled back. */
  forget(): void {
    this.#stored = undefined;
    this.#line = undefined;
    this.#lineSource = undefined;
  }

  #range(): { low: number; high: number } | null {
    if (this.#stored !== undefined) return this.#stored;
    const row = tableExists(this.#sql, 'task_events')
      ? this.#sql.exec<{ low: number | null; high: number | null }>(`SELECT min(seq) AS low, max(seq) AS high FROM task_events`).one()
      : { low: null, high: null };
    this.#stored = row.low === null || row.high === null ? null : { low: row.low, high: row.high };
    return this.#stored;
  }
}

function lineOf(event: TaskEventBody, at: number): StatusLine | null {
  const line = statusLineOf(event);
  return line === undefined ? null : { line, at };
}
