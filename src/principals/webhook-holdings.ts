/**
 * A principal's webhook subscriptions in its registry (issue 47; docs/events.md, *Webhooks*):
 * the rows that bound how many it holds (MAX_WEBHOOKS_PER_PRINCIPAL), that a revocation walks
 * and an operator lists, and the cache of its verified callback URLs. The registry object
 * (principal-registry.ts) checks the credential (fence, recall) and then hands the admission to
 * this file, in the same synchronous section, so concurrent subscribes of one principal are
 * serialized and never exceed the bound.
 *
 * Two tables, created lazily by the first admission that writes (not a schema rebuild of
 * `holdings`, whose `CHECK (kind IN ('session','task'))` SQLite cannot alter in place), each
 * WITHOUT ROWID and with no index beyond its key:
 * - `webhook_subscriptions (id, grant_id, created_at, live_until)`: one row per subscription
 *   created. Its life is extended by refreshes the registry is not told of (no request per
 *   refresh), so a row is treated as a session's (core/holdings.ts): at the bound the rows not
 *   known live are probed through the subscription's object (`probe`: null when gone, else how
 *   long it lives at least, which `live_until` keeps, one row each).
 * - `webhook_endpoints (scope, verified_at)`: one row per verified URL, replaced in place. "Verification
 *   is cached per `(principal, url)`"; "one principal's verification never waives the challenge
 *   for another" holds because the table is the principal's own. The key is the SHA-256 of
 *   core/webhook-subscription-key.ts's `verificationScopeText(principal, url)`, computed by the
 *   caller (principal-holdings.ts): a fixed 64 characters whatever the URL's length (a WITHOUT
 *   ROWID table keeps its key in every page of its tree), no URL kept in the registry, and a key
 *   bound to its principal even if a table were ever read out of its registry.
 *
 * Rows written per admission: 0 for a `verify` answer or a refusal (a gone row a probe found is
 * 1 deleted, and a live one's `live_until` 1 updated, as for sessions); 1 for a creation under a
 * cached verification (the holding); 2 after a handshake (the holding, the verification). An id
 * already held is admitted without a new row, and without the bound: it adds no holding.
 *
 * Left to neighbours: the handshake (the Worker, events/), the subscription itself (its object),
 * ending subscriptions (principal-control.ts).
 */
import { decideAdmission, type Holding } from '../core/holdings.ts';
import { verificationCurrent } from '../core/webhook-verification.ts';

/** What `PrincipalHoldings.admitWebhook` answers the Worker's `events/subscribe`. */
export type WebhookAdmission =
  /** Held (a new row, or one already there); `verifiedAt` is when the URL was verified for the principal. */
  | { readonly admitted: true; readonly verifiedAt: number }
  /** No current verification of the URL for the principal: handshake, then admit again with `verifiedAt`. Nothing written. */
  | { readonly verify: true }
  /** The request's grant was revoked after the request was authorized by it. */
  | { readonly refused: 'revoked' }
  /** The request's credential was issued before its principal was revoked. */
  | { readonly refused: 'recalled' }
  /** At MAX_WEBHOOKS_PER_PRINCIPAL, every subscription counted live. */
  | { readonly refused: 'limit'; readonly max: number };

/** A webhook admission as the registry is asked it (principal-holdings.ts builds it). */
export interface WebhookAdmissionRequest {
  /** The subscription's id (`sub_…`). */
  readonly id: string;
  /** The verification cache's key: SHA-256 hex of `verificationScopeText(principal, url)`. */
  readonly scope: string;
  readonly grant: string;
  /** MAX_WEBHOOKS_PER_PRINCIPAL; 0 = unbounded. */
  readonly limit: number;
  /** Since when the credential is known good (principal-registry.ts `AdmissionRequest.issuedAt`). */
  readonly issuedAt?: number | null;
  /** When a handshake just verified the URL: written with the holding. Absent: the cache decides. */
  readonly verifiedAt?: number;
  /** Subscriptions the caller found gone when it probed them (dropped first). */
  readonly gone?: readonly string[];
  /** Subscriptions the caller found live, with how long each lives at least. */
  readonly live?: readonly { readonly id: string; readonly liveUntil: number }[];
  /** Every subscription this admission has probed so far. */
  readonly probed?: readonly string[];
}

/** The registry's answer: the Worker's, or rows to probe before it asks again. */
export type WebhookAdmissionAnswer = WebhookAdmission | { readonly probe: readonly string[] };

const CREATE_SUBSCRIPTIONS = `CREATE TABLE IF NOT EXISTS webhook_subscriptions (
  id         TEXT    PRIMARY KEY,
  grant_id   TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  live_until INTEGER
) WITHOUT ROWID`;

const CREATE_ENDPOINTS = `CREATE TABLE IF NOT EXISTS webhook_endpoints (
  scope       TEXT    PRIMARY KEY,
  verified_at INTEGER NOT NULL
) WITHOUT ROWID`;

type Row = { id: string; grant_id: string; created_at: number; live_until: number | null };

/** The webhook tables of one registry object (its `ctx.storage`); the registry calls it inside its own checks. */
export class WebhookRows {
  readonly #storage: DurableObjectStorage;
  /** Whether the tables exist: created by the first admission that writes, so a registry only read writes nothing. */
  #created: boolean | undefined;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** The bound, then the verification cache, then the rows: one synchronous section (the caller checked fence and recall). */
  admit(request: WebhookAdmissionRequest, now: number): WebhookAdmissionAnswer {
    try {
      return this.#storage.transactionSync(() => this.#admit(request, now));
    } catch (error) {
      this.#created = undefined; // a table created by a section rolled back is gone with it
      throw error;
    }
  }

  #admit(request: WebhookAdmissionRequest, now: number): WebhookAdmissionAnswer {
    const { sql } = this.#storage;
    {
      const exists = this.#exists();
      if (exists) {
        for (const id of request.gone ?? []) sql.exec(`DELETE FROM webhook_subscriptions WHERE id = ?`, id);
        // A subscription's known life only grows here (a probe's answer), one row each.
        for (const { id, liveUntil } of request.live ?? []) {
          sql.exec(
            `UPDATE webhook_subscriptions SET live_until = ? WHERE id = ? AND (live_until IS NULL OR live_until < ?)`,
            liveUntil,
            id,
            liveUntil,
          );
        }
      }
      // "Servers MUST enforce the subscription limit … before they invoke on_subscribe": decided
      // here, before any verification POST. An id already held adds no holding: not bounded.
      const held = exists && sql.exec(`SELECT 1 FROM webhook_subscriptions WHERE id = ?`, request.id).toArray().length > 0;
      if (!held) {
        const decision = decideAdmission({
          kind: 'webhook',
          limit: request.limit,
          held: exists ? this.list() : [],
          now,
          probed: request.probed ?? [],
        });
        if (decision.kind === 'probe') return { probe: decision.sessions };
        if (decision.kind === 'refuse') return { refused: 'limit', max: request.limit };
      }
      let verifiedAt = request.verifiedAt;
      if (verifiedAt === undefined) {
        const cached = exists
          ? sql.exec<{ verified_at: number }>(`SELECT verified_at FROM webhook_endpoints WHERE scope = ?`, request.scope).toArray()[0]
          : undefined;
        if (cached === undefined || !verificationCurrent({ verifiedAt: cached.verified_at }, now)) return { verify: true };
        verifiedAt = cached.verified_at;
      }
      this.#create();
      sql.exec(
        `INSERT OR IGNORE INTO webhook_subscriptions (id, grant_id, created_at, live_until) VALUES (?, ?, ?, NULL)`,
        request.id,
        request.grant,
        now,
      );
      if (request.verifiedAt !== undefined) {
        // Replaced in place (one row); a later verification only moves it later.
        sql.exec(
          `INSERT INTO webhook_endpoints (scope, verified_at) VALUES (?, ?)
           ON CONFLICT (scope) DO UPDATE SET verified_at = max(verified_at, excluded.verified_at)`,
          request.scope,
          request.verifiedAt,
        );
      }
      return { admitted: true, verifiedAt };
    }
  }

  /** The subscriptions held, oldest first, as holdings of kind `webhook` (`expiresAt`: what a probe last told). */
  list(): Holding[] {
    if (!this.#exists()) return [];
    return this.#storage.sql
      .exec<Row>(`SELECT id, grant_id, created_at, live_until FROM webhook_subscriptions ORDER BY created_at, id`)
      .toArray()
      .map((row) => ({ kind: 'webhook', id: row.id, grant: row.grant_id, createdAt: row.created_at, expiresAt: row.live_until }));
  }

  /** The subscriptions ended (or found gone): one row deleted each. */
  forget(ids: readonly string[]): void {
    if (!this.#exists()) return;
    this.#storage.transactionSync(() => {
      for (const id of ids) this.#storage.sql.exec(`DELETE FROM webhook_subscriptions WHERE id = ?`, id);
    });
  }

  #exists(): boolean {
    this.#created ??=
      this.#storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_subscriptions'`).toArray().length > 0;
    return this.#created;
  }

  #create(): void {
    if (this.#exists()) return;
    this.#storage.sql.exec(CREATE_SUBSCRIPTIONS);
    this.#storage.sql.exec(CREATE_ENDPOINTS);
    this.#created = true;
  }
}
