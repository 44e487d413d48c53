/**
 * A webhook subscription's failing deliveries: the only occurrences its object keeps a row for
 * (webhook-store.ts says why pending is otherwise derived). A row keeps the occurrence itself
 * (id, time, data), so a retry needs nothing the log may have pruned since; its attempts, its
 * first attempt's time and the subscription's pause total then (its own pause is the
 * difference: resuming a suspension rewrites no row); when it is next due; and its state:
 * `pending` (a retry due at `next_at`; held while the subscription is suspended) or `abandoned`
 * (retries spent, or a loss of the log: the watermark stops at it until a `gap` envelope
 * announcing it is acknowledged, and the row is deleted then).
 *
 * The table is created at the first failure of the subscription's life (2 rows once), never for
 * a subscription that never failed. Rows: INSERT 1 at a first failure, UPDATE 1 per retry, DELETE
 * 1 at a success, a 410, or an acknowledged `gap`.
 */
import { tableExists } from '../storage/migrator.ts';

export interface FailingRow {
  readonly seq: number;
  /** JSON of {eventId, timestamp, data}: what is POSTed again. */
  readonly occurrence: string;
  readonly attempts: number;
  readonly firstAttemptAt: number;
  /** `paused_total_ms` at the first attempt: the row's pause is the difference. */
  readonly pausedAtFirst: number;
  readonly nextAt: number;
  readonly state: 'pending' | 'abandoned';
}

const CREATE_FAILING = `CREATE TABLE failing (
  seq              INTEGER PRIMARY KEY,
  occurrence       TEXT    NOT NULL,
  attempts         INTEGER NOT NULL,
  first_attempt_at INTEGER NOT NULL,
  paused_at_first  INTEGER NOT NULL,
  next_at          INTEGER NOT NULL,
  state            TEXT    NOT NULL CHECK (state IN ('pending', 'abandoned'))
)`;

type FailingSqlRow = {
  seq: number;
  occurrence: string;
  attempts: number;
  first_attempt_at: number;
  paused_at_first: number;
  next_at: number;
  state: 'pending' | 'abandoned';
};

function failingOf(row: FailingSqlRow): FailingRow {
  return {
    seq: row.seq,
    occurrence: row.occurrence,
    attempts: row.attempts,
    firstAttemptAt: row.first_attempt_at,
    pausedAtFirst: row.paused_at_first,
    nextAt: row.next_at,
    state: row.state,
  };
}

export class FailingRows {
  readonly #sql: SqlStorage;
  #table: boolean | undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Every failing row (few: the breaker bounds them by the in-flight window), by seq. Reads only. */
  rows(): FailingRow[] {
    if (!this.#exists()) return [];
    return this.#sql.exec<FailingSqlRow>(`SELECT * FROM failing ORDER BY seq`).toArray().map(failingOf);
  }

  /** INSERT 1 (+ CREATE TABLE 2 the first time in the subscription's life). */
  insert(row: FailingRow): void {
    if (!this.#exists()) {
      this.#sql.exec(CREATE_FAILING);
      this.#table = true;
    }
    this.#sql.exec(
      `INSERT OR REPLACE INTO failing (seq, occurrence, attempts, first_attempt_at, paused_at_first, next_at, state) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      row.seq,
      row.occurrence,
      row.attempts,
      row.firstAttemptAt,
      row.pausedAtFirst,
      row.nextAt,
      row.state,
    );
  }

  /** UPDATE 1: a retry's outcome. */
  update(row: FailingRow): void {
    this.#sql.exec(`UPDATE failing SET attempts = ?, next_at = ?, state = ? WHERE seq = ?`, row.attempts, row.nextAt, row.state, row.seq);
  }

  /** DELETE 1 per row: delivered, declined, or announced by an acknowledged `gap`. */
  delete(seqs: readonly number[]): void {
    for (const seq of seqs) this.#sql.exec(`DELETE FROM failing WHERE seq = ?`, seq);
  }

  /**
   * UPDATE 1 per pending row: every pending row abandoned (a log reset: the old generation's
   * occurrences are lost with it; no retry, and the watermark stays at them until the reset's
   * `gap` is acknowledged).
   */
  abandonAll(): void {
    if (this.#exists()) this.#sql.exec(`UPDATE failing SET state = 'abandoned' WHERE state = 'pending'`);
  }

  /** Every row deleted (a log reset's `gap` acknowledged: the old generation's seqs name nothing in the new log). */
  clear(): void {
    if (this.#exists()) this.#sql.exec(`DELETE FROM failing`);
  }

  /** The database was emptied (deleteAll): the table is gone. */
  forget(): void {
    this.#table = false;
  }

  #exists(): boolean {
    this.#table ??= tableExists(this.#sql, 'failing');
    return this.#table;
  }
}
