/**
 * A webhook subscription's storage (docs/events.md, *Webhooks*): its object's own SQLite, holding
 * the subscription's one-row record and ONLY its failing deliveries. What is pending is derived:
 * `scanned_to` is a position in the type's log such that every matching occurrence below it was
 * delivered, declined, or has a row in `failing`; so an occurrence delivered at its first attempt
 * writes no row of its own, only its share of its batch's one UPDATE of `scanned_to`.
 *
 * Rows written, per operation (a row inserted, updated or deleted each counts one):
 * - creation: CREATE TABLE 2 + INSERT 1 (record);
 * - a delivery batch: ≤ 1 (`writeProgress`: scanned_to and health in one UPDATE), 0 if nothing moved;
 * - an occurrence's first failure: INSERT 1 (+ 2 once in the subscription's life: `failing`'s
 *   CREATE TABLE); each retry: UPDATE 1; its success or its receiver's 410: DELETE 1; giving up:
 *   the UPDATE (or INSERT) that marks it `abandoned`, then a DELETE once a `gap` announced it;
 * - a refresh, a suspension, a `gap` or `terminated` envelope stored or cleared: UPDATE 1 each;
 * - a log reset: UPDATE 1 + 1 per pending row (abandoned); its `gap` acknowledged: UPDATE 1 +
 *   DELETE 1 per row of the old generation;
 * - the end: `deleteAll` (the object's storage, not counted as rows by workerd's total_changes).
 *
 * Failing rows (webhook-failing.ts) have two states: `pending` (a retry due at `next_at`) and `abandoned` (retries exhausted:
 * the watermark stops at it until a `gap` envelope announcing it is acknowledged). A suspension
 * rewrites no row: the pending rows of a suspended subscription are its held ones (nothing is
 * attempted while suspended); a reactivation adds the suspended time to `paused_total_ms`, and
 * each row's pause is `paused_total_ms − paused_at_first`, so resuming is one UPDATE, not one
 * per held occurrence. The row keeps the occurrence (id, time, data) so a retry needs nothing
 * the log may have pruned since.
 *
 * Nothing is created for an id nobody subscribed: reading an absent record writes nothing. The
 * record is cached in the instance and every write goes through here, so the cache is the truth.
 */
import type { SubscriptionHealth } from '../core/webhook-retry.ts';
import { tableExists } from '../storage/migrator.ts';
import { FailingRows } from './webhook-failing.ts';
import {
  CREATE_SUBSCRIPTION,
  HEALTH_COLUMNS,
  healthValues,
  type PendingEnvelope,
  type RecordRow,
  recordOf,
  type SubscriptionRecord,
  textOf,
} from './webhook-record.ts';

export type { FailingRow } from './webhook-failing.ts';
export type { PendingEnvelope, SubscriptionRecord } from './webhook-record.ts';

export class WebhookStore {
  readonly #storage: DurableObjectStorage;
  readonly #sql: SqlStorage;
  /** undefined: not read yet; null: none stored. */
  #record: SubscriptionRecord | null | undefined;
  /** The failing rows (webhook-failing.ts), in the same database. */
  readonly failing: FailingRows;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    this.failing = new FailingRows(storage.sql);
  }

  /** The record, or null. Reads only (the first call per instance). */
  get record(): SubscriptionRecord | null {
    if (this.#record === undefined) {
      this.#record = tableExists(this.#sql, 'subscription')
        ? (this.#sql.exec<RecordRow>(`SELECT * FROM subscription`).toArray().map(recordOf)[0] ?? null)
        : null;
    }
    return this.#record;
  }

  /** CREATE TABLE 2 + INSERT 1, in one transaction. The storage must be empty (a previous life ended with deleteAll). */
  create(record: Omit<SubscriptionRecord, 'storedHealth'>): void {
    this.#storage.transactionSync(() => {
      if (!tableExists(this.#sql, 'subscription')) this.#sql.exec(CREATE_SUBSCRIPTION);
      this.#sql.exec(
        `INSERT INTO subscription (singleton, id, principal, grant_id, name, args, partition, url, log_id, scanned_to, secret,
           expires_at, state, verified_at, created_at, origin, logs_binding, webhooks_binding)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?)`,
        record.id,
        record.principal,
        record.grant,
        record.name,
        record.args,
        record.partition,
        record.url,
        record.logId,
        record.scannedTo,
        record.secret,
        record.expiresAt,
        record.verifiedAt,
        record.createdAt,
        record.origin,
        record.bindings.logs,
        record.bindings.webhooks,
      );
    });
    this.#record = { ...record, storedHealth: record.health };
  }

  /** Health changes kept in memory until the next write of the record (a lower bound after a restart: suspension only later). */
  noteHealth(health: SubscriptionHealth): void {
    this.#record = { ...this.#current(), health };
  }

  /**
   * UPDATE 1 when the health changed in a way a restart must not lose: a streak ended (a stored
   * streak would otherwise suspend the subscription sooner after a restart) or began (its start,
   * once per streak); else nothing. A failure that only lengthens a streak is kept in memory: after
   * a restart the streak is shorter, so suspension can only come later, never sooner.
   */
  flushHealth(): void {
    const stored = this.#current().storedHealth;
    const { health } = this.#current();
    const ended = stored.consecutiveFailures > 0 && health.consecutiveFailures === 0;
    const began = stored.failingSince === null && health.failingSince !== null;
    if (ended || began) this.writeProgress(this.#current().scannedTo);
  }

  /** UPDATE 1: the delivery position and the health, after a batch. */
  writeProgress(scannedTo: number): void {
    const record = this.#current();
    const { health } = record;
    this.#sql.exec(`UPDATE subscription SET scanned_to = ?, ${HEALTH_COLUMNS}`, scannedTo, ...healthValues(health));
    this.#record = { ...record, scannedTo, storedHealth: health };
  }

  /** UPDATE 1: everything a refresh may change, in one statement. */
  refresh(
    change: Pick<
      SubscriptionRecord,
      'grant' | 'secret' | 'previousSecret' | 'previousUntil' | 'expiresAt' | 'state' | 'suspendedAt' | 'pausedTotalMs' | 'health'
    >,
  ): void {
    const { health } = change;
    this.#sql.exec(
      `UPDATE subscription SET grant_id = ?, secret = ?, previous_secret = ?, previous_until = ?, expires_at = ?, state = ?,
         suspended_at = ?, paused_total_ms = ?, ${HEALTH_COLUMNS}`,
      change.grant,
      change.secret,
      change.previousSecret,
      change.previousUntil,
      change.expiresAt,
      change.state,
      change.suspendedAt,
      change.pausedTotalMs,
      ...healthValues(health),
    );
    this.#record = { ...this.#current(), ...change, storedHealth: change.health };
  }

  /** UPDATE 1: suspended ("the server MAY suspend delivery"): nothing is attempted until a refresh reactivates it. */
  suspend(at: number): void {
    const { health } = this.#current();
    this.#sql.exec(`UPDATE subscription SET state = 'suspended', suspended_at = ?, ${HEALTH_COLUMNS}`, at, ...healthValues(health));
    this.#record = { ...this.#current(), state: 'suspended', suspendedAt: at, storedHealth: health };
  }

  /** UPDATE 1: the pending `gap` envelope set, advanced or cleared (with the health, which its attempts change). */
  setGap(gap: PendingEnvelope | null): void {
    const { health } = this.#current();
    this.#sql.exec(`UPDATE subscription SET gap = ?, ${HEALTH_COLUMNS}`, textOf(gap), ...healthValues(health));
    this.#record = { ...this.#current(), gap, storedHealth: health };
  }

  /** UPDATE 1: `terminating`, with the `terminated` envelope owed (or its next attempt). */
  setTerminated(terminated: PendingEnvelope): void {
    this.#sql.exec(`UPDATE subscription SET state = 'terminating', terminated = ?`, textOf(terminated));
    this.#record = { ...this.#current(), state: 'terminating', terminated };
  }

  /**
   * The log was reset (a new log id): the old generation's pending rows are abandoned (their
   * occurrences are gone with the log) and the `gap` announcing the loss is stored, carrying the
   * new log to move to. The position stays in the old log until the gap is acknowledged
   * (`moveToNewLog`): the watermark, old-log, never passes the loss unannounced. 1 + the pending
   * rows, in one transaction.
   */
  resetLog(gap: PendingEnvelope): void {
    this.#storage.transactionSync(() => {
      this.failing.abandonAll();
      this.#sql.exec(`UPDATE subscription SET gap = ?`, textOf(gap));
    });
    this.#record = { ...this.#current(), gap };
  }

  /**
   * The reset's `gap` was acknowledged: every row of the old generation deleted, the position
   * moved to the new log, the gap cleared (with the health its attempt changed). 1 + the rows,
   * in one transaction.
   */
  moveToNewLog(logId: string, scannedTo: number): void {
    const { health } = this.#current();
    this.#storage.transactionSync(() => {
      this.failing.clear();
      this.#sql.exec(
        `UPDATE subscription SET log_id = ?, scanned_to = ?, gap = NULL, ${HEALTH_COLUMNS}`,
        logId,
        scannedTo,
        ...healthValues(health),
      );
    });
    this.#record = { ...this.#current(), logId, scannedTo, gap: null, storedHealth: health };
  }

  /** The end: the alarm and every row, table and record of the object (the record cache forgotten). */
  async deleteAll(): Promise<void> {
    await this.#storage.deleteAlarm();
    await this.#storage.deleteAll();
    this.#record = null;
    this.failing.forget();
  }

  #current(): SubscriptionRecord {
    const record = this.record;
    if (record === null) throw new Error('webhook store: no subscription record');
    return record;
  }
}
