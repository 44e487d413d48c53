/**
 * One authenticated principal's registry: a SQLite-backed Durable Object addressed by
 * `idFromName(principal.id)`, holding a row per live session and per unexpired task of that
 * principal. It is what makes the bounds per principal atomic (MAX_SESSIONS_PER_PRINCIPAL,
 * MAX_TASKS_PER_PRINCIPAL): every admission is one synchronous section of this object — read
 * the rows, decide (core/holdings.ts), insert — so concurrent creations are serialized here and
 * never exceed the limit, on any number of isolates. It is also what an operator lists and ends
 * (principal-control.ts), and what a revocation walks.
 *
 * Cost: one row written per session or task (its row: a WITHOUT ROWID table, no index), one
 * deleted when it ends — at a DELETE, an operator's end, or when a sweep finds it gone — and
 * nothing per call; at the bound, one per live session a probe asked (how long it lives at
 * least, core/holdings.ts: at most once per TTL each); one row per revoked grant, kept. The anonymous principal (AUTH=none) has no
 * registry: it is everyone.
 *
 * Webhook subscriptions (issue 47) are held here too, in tables of their own with the cache of
 * the principal's verified callback URLs (webhook-holdings.ts: 1 row per subscription created,
 * +1 per verification), checked against the fence and the recall as sessions and tasks are.
 *
 * A revoked grant is fenced before what it holds is listed and ended (principal-control.ts): a
 * request its token authorized just before the revocation, admitted after the list, would
 * otherwise create a session or a task under a grant that no longer exists, which no walk would
 * end. Admissions and the fence are serialized here, so each admission either comes before the
 * fence (and is in the list) or after it (and is refused). Grant ids are never reused, so the
 * fence is kept.
 *
 * A token cannot be recalled at its issuer (AUTH=jwt), so a revocation of the whole principal
 * leaves a mark here (`recall`, one row, kept), written before what it holds is listed: every
 * admission after it of a credential issued until then — a token whose `iat` is not later, or
 * that has none — is refused (`recalled`), and its client, told 401 `invalid_token`, gets a new
 * token. The mark is checked where an admission already comes, so it costs no request and no
 * row per call; what needs no admission (a call in a session, a stateless 2026-07-28 request,
 * a listen stream) is not checked (docs/operations.md).
 */
import { DurableObject } from 'cloudflare:workers';
import { decideAdmission, type Holding, type HoldingKind } from '../core/holdings.ts';
import { type WebhookAdmissionAnswer, type WebhookAdmissionRequest, WebhookRows } from './webhook-holdings.ts';

export interface AdmissionRequest {
  /** A webhook subscription is admitted by `admitWebhook` (webhook-holdings.ts). */
  readonly kind: Exclude<HoldingKind, 'webhook'>;
  readonly id: string;
  readonly grant: string;
  readonly limit: number;
  /** A task's expiry; absent for a session. */
  readonly expiresAt?: number;
  /**
   * Since when the request's credential is known good, in ms (auth/authenticate.ts): refused
   * when a revocation of the principal marked a later time (null: unknown, refused once marked).
   * Absent: not checked.
   */
  readonly issuedAt?: number | null;
  /** Sessions the caller found gone when it probed them (dropped first). */
  readonly gone?: readonly string[];
  /** Sessions the caller found live, each with how long it lives at least (kept, so not asked again before). */
  readonly live?: readonly { readonly id: string; readonly liveUntil: number }[];
  /** Every session this admission has probed so far (answered or not). */
  readonly probed?: readonly string[];
}

export type AdmissionAnswer =
  | { readonly admitted: true }
  /** The request's grant was revoked (`fence`) after the request was authorized by it. */
  | { readonly admitted: false; readonly revoked: true }
  /** The request's credential was issued before the principal was revoked (`recall`). */
  | { readonly admitted: false; readonly recalled: true }
  | { readonly admitted: false; readonly probe: readonly string[] }
  | { readonly admitted: false; readonly probe?: undefined; readonly retryAt: number | null };

/** What the Worker and an operator call on a registry (a namespace's stub has these methods). */
export interface PrincipalRegistryStub {
  admit(request: AdmissionRequest): Promise<AdmissionAnswer>;
  admitWebhook(request: WebhookAdmissionRequest): Promise<WebhookAdmissionAnswer>;
  forget(kind: HoldingKind, ids: readonly string[]): Promise<void>;
  list(): Promise<Holding[]>;
  fence(grant: string): Promise<void>;
  recall(at: number): Promise<void>;
}

/**
 * The `MCP_PRINCIPALS` namespace, typed or not: `wrangler types` leaves the namespace of a class a
 * Worker re-exports from a package untyped (`DurableObjectNamespace`), so its stubs are typed here.
 */
export interface PrincipalRegistryNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): object;
}

/** The registry object of `principalId`. */
export function registryOf(namespace: PrincipalRegistryNamespace, principalId: string): PrincipalRegistryStub {
  return namespace.get(namespace.idFromName(principalId)) as PrincipalRegistryStub;
}

const CREATE = `CREATE TABLE IF NOT EXISTS holdings (
  kind       TEXT    NOT NULL CHECK (kind IN ('session', 'task')),
  id         TEXT    NOT NULL,
  grant_id   TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID`;

const CREATE_FENCES = `CREATE TABLE IF NOT EXISTS revoked_grants (grant_id TEXT PRIMARY KEY) WITHOUT ROWID`;

/** The key of the principal's revocation mark, in the object's key-value storage. */
const REVOKED_BEFORE = 'revoked_before';

type Row = { kind: 'session' | 'task'; id: string; grant_id: string; created_at: number; expires_at: number | null };

export class McpPrincipalRegistry extends DurableObject {
  /** Whether the table exists: created by the first admission, so a registry only read writes nothing. */
  #created: boolean | undefined;
  /** Whether a grant of the principal was ever revoked (the fences' table exists). */
  #fences: boolean | undefined;
  /** The revocation mark (`recall`): undefined until read, null for none. */
  #revokedBefore: number | null | undefined;
  /** The webhook subscriptions' and verified URLs' tables (webhook-holdings.ts). */
  #webhookRows: WebhookRows | undefined;

  get #webhooks(): WebhookRows {
    this.#webhookRows ??= new WebhookRows(this.ctx.storage);
    return this.#webhookRows;
  }

  admit(request: AdmissionRequest): AdmissionAnswer {
    const { sql } = this.ctx.storage;
    if (request.grant !== '' && this.#fenced(request.grant)) return { admitted: false, revoked: true };
    if (request.issuedAt !== undefined && this.#recalled(request.issuedAt)) return { admitted: false, recalled: true };
    return this.ctx.storage.transactionSync(() => {
      this.#create();
      for (const id of request.gone ?? []) sql.exec(`DELETE FROM holdings WHERE kind = 'session' AND id = ?`, id);
      // A session's known life only grows (its activity only postpones its expiry): one row each.
      for (const { id, liveUntil } of request.live ?? []) {
        sql.exec(
          `UPDATE holdings SET expires_at = ? WHERE kind = 'session' AND id = ? AND (expires_at IS NULL OR expires_at < ?)`,
          liveUntil,
          id,
          liveUntil,
        );
      }
      const now = Date.now();
      const decision = decideAdmission({
        kind: request.kind,
        limit: request.limit,
        held: this.#rows(request.kind),
        now,
        probed: request.probed ?? [],
      });
      if (decision.kind === 'probe') return { admitted: false, probe: decision.sessions };
      for (const id of decision.drop) sql.exec(`DELETE FROM holdings WHERE kind = ? AND id = ?`, request.kind, id);
      if (decision.kind === 'refuse') return { admitted: false, retryAt: decision.retryAt };
      sql.exec(
        `INSERT OR IGNORE INTO holdings (kind, id, grant_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
        request.kind,
        request.id,
        request.grant,
        now,
        request.expiresAt ?? null,
      );
      return { admitted: true };
    });
  }

  /**
   * A webhook subscription about to be created (webhook-holdings.ts): refused for its credential
   * first, as sessions and tasks are (the fence, then the recall), then by the bound, then
   * `verify` unless the URL's verification for the principal is current.
   */
  admitWebhook(request: WebhookAdmissionRequest): WebhookAdmissionAnswer {
    if (request.grant !== '' && this.#fenced(request.grant)) return { refused: 'revoked' };
    if (request.issuedAt !== undefined && this.#recalled(request.issuedAt)) return { refused: 'recalled' };
    return this.#webhooks.admit(request, Date.now());
  }

  forget(kind: HoldingKind, ids: readonly string[]): void {
    if (kind === 'webhook') {
      this.#webhooks.forget(ids);
      return;
    }
    if (!this.#exists()) return;
    this.ctx.storage.transactionSync(() => {
      for (const id of ids) this.ctx.storage.sql.exec(`DELETE FROM holdings WHERE kind = ? AND id = ?`, kind, id);
    });
  }

  /** `grant` was revoked: no admission under it from now on (read by `admit`). */
  fence(grant: string): void {
    if (grant === '') throw new RangeError('a fence names a grant');
    const { sql } = this.ctx.storage;
    sql.exec(CREATE_FENCES);
    this.#fences = true;
    sql.exec(`INSERT OR IGNORE INTO revoked_grants (grant_id) VALUES (?)`, grant);
  }

  /**
   * The principal was revoked at `at` (ms): no admission from now on of a credential issued
   * until then (read by `admit`). One row (the object's key-value storage), kept: a mark only
   * moves later, so revoking again refuses what was issued before the latest revocation.
   */
  recall(at: number): void {
    if (!Number.isSafeInteger(at)) throw new RangeError('a revocation is marked at a time in ms');
    const mark = this.#mark();
    if (mark !== null && mark >= at) return;
    this.ctx.storage.kv.put(REVOKED_BEFORE, at);
    this.#revokedBefore = at;
  }

  /** Every row, sessions then tasks then webhook subscriptions, oldest first (an expired task's included until it is swept). */
  list(): Holding[] {
    const webhooks = this.#webhooks.list();
    if (!this.#exists()) return webhooks;
    return [...this.#rows('session'), ...this.#rows('task'), ...webhooks];
  }

  #rows(kind: 'session' | 'task'): Holding[] {
    return this.ctx.storage.sql
      .exec<Row>(`SELECT kind, id, grant_id, created_at, expires_at FROM holdings WHERE kind = ? ORDER BY created_at, id`, kind)
      .toArray()
      .map((row) => ({ kind: row.kind, id: row.id, grant: row.grant_id, createdAt: row.created_at, expiresAt: row.expires_at }));
  }

  /** Whether a credential known good since `issuedAt` (null: not known) was issued before the principal's revocation. */
  #recalled(issuedAt: number | null): boolean {
    const mark = this.#mark();
    return mark !== null && (issuedAt === null || issuedAt <= mark);
  }

  /** The principal's revocation mark (ms), null for none: read once per instance, a row read. */
  #mark(): number | null {
    if (this.#revokedBefore === undefined) this.#revokedBefore = this.ctx.storage.kv.get<number>(REVOKED_BEFORE) ?? null;
    return this.#revokedBefore;
  }

  #fenced(grant: string): boolean {
    this.#fences ??=
      this.ctx.storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'revoked_grants'`).toArray().length > 0;
    return this.#fences && this.ctx.storage.sql.exec(`SELECT 1 FROM revoked_grants WHERE grant_id = ?`, grant).toArray().length > 0;
  }

  #exists(): boolean {
    this.#created ??=
      this.ctx.storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'holdings'`).toArray().length > 0;
    return this.#created;
  }

  #create(): void {
    if (this.#exists()) return;
    this.ctx.storage.sql.exec(CREATE);
    this.#created = true;
  }
}
