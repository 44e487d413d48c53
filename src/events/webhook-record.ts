/**
 * A webhook subscription's one-row record (webhook-store.ts writes it): its columns, the table
 * that holds them, and how a row reads as a `SubscriptionRecord`. Apart from the store so that
 * what a subscription *is* can be read in one place, and the store holds only what is done to it.
 */
import type { CallbackFailure } from '../core/events-wire.ts';
import type { RefreshableState } from '../core/webhook-refresh.ts';
import type { SubscriptionState } from '../core/webhook-schedule.ts';
import type { SubscriptionHealth } from '../core/webhook-retry.ts';

/** A `gap` or `terminated` envelope owed to the receiver: its body and webhook-id fixed when drawn, retried by the policy. */
export interface PendingEnvelope {
  /** `msg_<type>_<random>`, stable across attempts ("so that receivers can deduplicate retries"). */
  readonly id: string;
  /** The JSON text POSTed: the same bytes on every attempt. */
  readonly body: string;
  /** Attempts made so far. */
  readonly attempts: number;
  /** The first attempt's time (0 before it). */
  readonly firstAttemptAt: number;
  readonly nextAt: number;
  /** A `gap`'s abandoned rows it announces: deleted once it is acknowledged. */
  readonly seqs?: readonly number[];
  /**
   * A `gap` announcing a log reset: the new log the subscription moves to (from `earliestSeq`)
   * once the gap is acknowledged, and not before — so no cursor of the new generation, in a
   * delivery or a refresh, reaches the client before it was told of the loss.
   */
  readonly reset?: { readonly logId: string; readonly earliestSeq: number };
}

/** The record: what a refresh may change (core/webhook-refresh.ts: grant, secrets, expiry — null: none —, state, health) and the rest. */
export interface SubscriptionRecord extends RefreshableState {
  readonly id: string;
  readonly principal: string;
  readonly name: string;
  /** Canonical JSON of the arguments. */
  readonly args: string;
  readonly partition: string;
  readonly url: string;
  readonly logId: string;
  readonly scannedTo: number;
  readonly verifiedAt: number;
  readonly createdAt: number;
  /** The health as last written (the rest of `health` is in memory only: see flushHealth). */
  readonly storedHealth: SubscriptionHealth;
  readonly gap: PendingEnvelope | null;
  readonly terminated: PendingEnvelope | null;
  readonly origin: string;
  readonly bindings: { readonly logs: string; readonly webhooks: string };
}

export const CREATE_SUBSCRIPTION = `CREATE TABLE subscription (
  singleton            INTEGER PRIMARY KEY CHECK (singleton = 1),
  schema_version       INTEGER NOT NULL DEFAULT 1,
  id                   TEXT    NOT NULL,
  principal            TEXT    NOT NULL,
  grant_id             TEXT    NOT NULL,
  name                 TEXT    NOT NULL,
  args                 TEXT    NOT NULL,
  partition            TEXT    NOT NULL,
  url                  TEXT    NOT NULL,
  log_id               TEXT    NOT NULL,
  scanned_to           INTEGER NOT NULL,
  secret               TEXT    NOT NULL,
  previous_secret      TEXT,
  previous_until       INTEGER,
  expires_at           INTEGER,
  state                TEXT    NOT NULL CHECK (state IN ('active', 'suspended', 'terminating')),
  suspended_at         INTEGER,
  paused_total_ms      INTEGER NOT NULL DEFAULT 0,
  verified_at          INTEGER NOT NULL,
  created_at           INTEGER NOT NULL,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  failing_since        INTEGER,
  last_error           TEXT,
  last_delivery_at     INTEGER,
  -- JSON PendingEnvelope, or NULL.
  gap                  TEXT,
  terminated           TEXT,
  origin               TEXT    NOT NULL,
  logs_binding         TEXT    NOT NULL,
  webhooks_binding     TEXT    NOT NULL
)`;

export type RecordRow = {
  id: string;
  principal: string;
  grant_id: string;
  name: string;
  args: string;
  partition: string;
  url: string;
  log_id: string;
  scanned_to: number;
  secret: string;
  previous_secret: string | null;
  previous_until: number | null;
  expires_at: number | null;
  state: SubscriptionState;
  suspended_at: number | null;
  paused_total_ms: number;
  verified_at: number;
  created_at: number;
  consecutive_failures: number;
  failing_since: number | null;
  last_error: CallbackFailure | null;
  last_delivery_at: number | null;
  gap: string | null;
  terminated: string | null;
  origin: string;
  logs_binding: string;
  webhooks_binding: string;
};

/** The health's columns, written together whenever the record is (core/webhook-retry.ts `SubscriptionHealth`). */
export const HEALTH_COLUMNS = 'consecutive_failures = ?, failing_since = ?, last_error = ?, last_delivery_at = ?';
export const healthValues = (h: SubscriptionHealth) => [h.consecutiveFailures, h.failingSince, h.lastError, h.lastDeliveryAt] as const;

const envelopeOf = (text: string | null): PendingEnvelope | null => (text === null ? null : (JSON.parse(text) as PendingEnvelope));
export const textOf = (envelope: PendingEnvelope | null): string | null => (envelope === null ? null : JSON.stringify(envelope));

export function recordOf(row: RecordRow): SubscriptionRecord {
  const health: SubscriptionHealth = {
    consecutiveFailures: row.consecutive_failures,
    failingSince: row.failing_since,
    lastError: row.last_error,
    lastDeliveryAt: row.last_delivery_at,
  };
  return {
    id: row.id,
    principal: row.principal,
    grant: row.grant_id,
    name: row.name,
    args: row.args,
    partition: row.partition,
    url: row.url,
    logId: row.log_id,
    scannedTo: row.scanned_to,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousUntil: row.previous_until,
    expiresAt: row.expires_at,
    state: row.state,
    suspendedAt: row.suspended_at,
    pausedTotalMs: row.paused_total_ms,
    verifiedAt: row.verified_at,
    createdAt: row.created_at,
    health,
    storedHealth: health,
    gap: envelopeOf(row.gap),
    terminated: envelopeOf(row.terminated),
    origin: row.origin,
    bindings: { logs: row.logs_binding, webhooks: row.webhooks_binding },
  };
}
