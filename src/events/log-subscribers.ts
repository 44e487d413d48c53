/**
 * An event log's webhook subscribers (docs/events.md, *Webhooks*; design-47 §3, the log's side):
 * the rows of the subscriptions that read this log, one each, so that the log can poke them
 * after an append. The log keeps WHO reads it, never WHERE each reader stands: a subscription's
 * position is its own object's (webhook-object.ts), so an occurrence costs the log no row per
 * subscriber.
 *
 * The table (`webhook_subscriber`) is created at the first subscriber of a log's life, checked
 * once per wake in `sqlite_master`, not by a schema version of event-log-store.ts: a version bump
 * would write its rows into every existing log at its next open, subscribers or not. Rows, each
 * counted: the table once per log (its CREATE, at the first add), 1 per subscriber added,
 * 1 per subscriber dropped; nothing per append.
 *
 * Which subscriber is poked with what, and when the check alarm is due, is core/webhook-fanout.ts
 * (pure); sending the pokes is event-log-object.ts's.
 */

/** A subscriber: its subscription's id, and the env key of the namespace its object is reached by. */
export interface SubscriberRow {
  readonly id: string;
  readonly binding: string;
}

/** How an add went: a new row, the id's row kept (idempotent), or refused at the bound. */
export type SubscriberAdded = 'added' | 'kept' | 'full';

const TABLE = 'webhook_subscriber';

export class LogSubscribers {
  readonly #sql: SqlStorage;
  /** The rows, read once per wake (the object is their only writer); undefined until first asked. */
  #rows: Map<string, string> | undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Every subscriber, in no promised order (0 rows read after the first call of a wake). */
  list(): SubscriberRow[] {
    return [...this.#loaded()].map(([id, binding]) => ({ id, binding }));
  }

  get size(): number {
    return this.#loaded().size;
  }

  has(id: string): boolean {
    return this.#loaded().has(id);
  }

  /**
   * Adds `id` (1 row; and the table at the log's first subscriber), or keeps its row if it
   * is already there (INSERT OR IGNORE: 0 rows, its binding unchanged); a new id past `max`
   * subscribers is refused and nothing is written. Synchronous, so the caller's start decision
   * and this row share one turn.
   */
  add(row: SubscriberRow, max: number): SubscriberAdded {
    const rows = this.#loaded();
    if (rows.has(row.id)) return 'kept';
    if (rows.size >= max) return 'full';
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id TEXT PRIMARY KEY, binding TEXT NOT NULL) WITHOUT ROWID`);
    this.#sql.exec(`INSERT OR IGNORE INTO ${TABLE} (id, binding) VALUES (?, ?)`, row.id, row.binding);
    rows.set(row.id, row.binding);
    return 'added';
  }

  /** Drops `id`'s row (1 row; 0 when it is not there). Answers whether one was dropped. */
  remove(id: string): boolean {
    const rows = this.#loaded();
    if (!rows.has(id)) return false;
    this.#sql.exec(`DELETE FROM ${TABLE} WHERE id = ?`, id);
    rows.delete(id);
    return true;
  }

  #loaded(): Map<string, string> {
    if (this.#rows === undefined) {
      const exists = this.#sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, TABLE).toArray().length > 0;
      this.#rows = new Map(
        exists
          ? this.#sql
              .exec<{ id: string; binding: string }>(`SELECT id, binding FROM ${TABLE}`)
              .toArray()
              .map(({ id, binding }) => [id, binding])
          : [],
      );
    }
    return this.#rows;
  }
}
