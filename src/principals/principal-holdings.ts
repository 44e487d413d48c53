/**
 * The Worker's side of the bounds per principal: before a session or a task is created, its
 * principal's registry admits it (principal-registry.ts), or the creation is refused with a
 * typed error that says what to do — 429 `session_limit` (end a session, or wait for an idle
 * one to expire) or 429 `task_limit` with `Retry-After` (when the first task expires) — or 403
 * `grant_revoked`, for a request whose grant was revoked after it was authorized, or 401
 * `token_revoked` with the challenge, for a token issued before its principal was revoked.
 *
 * A session the registry may count although it has expired is probed: its object answers
 * whether it is still stored, and if so how long it lives at least (the session object's
 * `probe` route), which wakes it but writes nothing there. Probes happen only when the
 * principal is at its limit, batch after batch until a session is found gone or every one not
 * known live has answered (core/holdings.ts): a refusal means every session counted is live.
 * A webhook subscription is admitted the same way (`admitWebhook`, MAX_WEBHOOKS_PER_PRINCIPAL),
 * its object probed through the caller's `probe`, with the cache of verified URLs on top; its
 * refusals are answered as data, for `events/subscribe` to put in its JSON-RPC error.
 */
import { objectName } from '../auth/principal.ts';
import { sha256Hex } from '../core/digest.ts';
import { httpErrors, type McpHttpError } from '../core/errors.ts';
import { verificationScopeText } from '../core/webhook-subscription-key.ts';
import { OBJECT_ROUTES, SESSION_ORIGIN } from '../core/wire.ts';
import type { ObjectNamespace } from './principal-control.ts';
import type { HoldingKind } from '../core/holdings.ts';
import {
  type AdmissionAnswer,
  type AdmissionRequest,
  type PrincipalRegistryNamespace,
  type PrincipalRegistryStub,
  registryOf,
} from './principal-registry.ts';
import type { WebhookAdmission, WebhookAdmissionAnswer, WebhookAdmissionRequest } from './webhook-holdings.ts';

export type { WebhookAdmission } from './webhook-holdings.ts';

/** A webhook subscription about to be created, as `events/subscribe` asks (principal-holdings.ts `admitWebhook`). */
export interface WebhookAdmissionAsk {
  /** The subscription's id (`sub_…`). */
  readonly id: string;
  /** `delivery.url` (keyed as core/webhook-subscription-key.ts's keyedUrl spells it). */
  readonly url: string;
  /** When a handshake just verified `url`: written with the holding. Absent: the registry's cache decides. */
  readonly verifiedAt?: number;
  /**
   * Asks a subscription's object whether it is still live (its `probe`): null when gone (its
   * row is dropped), else how long it lives at least. A throw counts it as held, as a session
   * that fails to answer is: one failing object never lets its principal past the bound.
   */
  readonly probe: (id: string) => Promise<{ readonly liveUntil: number } | null>;
}

/** A session's object's answer to a probe: gone, live until at least `liveUntil`, or held (no answer to keep). */
type Probed = 'gone' | 'held' | { readonly liveUntil: number };

/** What the Worker established about the request's credential (auth/authenticate.ts `Authenticated`). */
export interface Credential {
  /** The OAuth grant it belongs to; '' or absent where there are none. */
  readonly grant?: string;
  /** Since when it is known good, in ms (null: unknown); absent: not checked against a revocation. */
  readonly issuedAt?: number | null;
  /** Its refusal when its principal was revoked after it was issued. */
  readonly revokedToken?: () => McpHttpError;
}

export interface HoldingLimits {
  readonly maxSessionsPerPrincipal: number;
  readonly maxTasksPerPrincipal: number;
  /** MAX_WEBHOOKS_PER_PRINCIPAL (events/webhook-config.ts `maxPerPrincipal`); absent or 0: unbounded. */
  readonly maxWebhooksPerPrincipal?: number;
}

export class PrincipalHoldings {
  readonly #registry: PrincipalRegistryStub;
  readonly #principalId: string;
  readonly #grant: string;
  readonly #issuedAt: number | null | undefined;
  readonly #revokedToken: () => McpHttpError;
  readonly #limits: HoldingLimits;
  /**
   * Whether a session is still stored, and how long it lives at least: its object's answer to
   * a probe. Only a 404 says it is gone; anything else (a 500 from a storage error, a failed
   * fetch) is taken as still held, or one failing object would let its principal past the
   * bound — for this admission, since it told no life to keep.
   */
  readonly #probe: (sessionId: string) => Promise<Probed>;

  constructor(
    registry: PrincipalRegistryNamespace,
    sessions: ObjectNamespace,
    principalId: string,
    credential: Credential,
    limits: HoldingLimits,
  ) {
    this.#registry = registryOf(registry, principalId);
    this.#principalId = principalId;
    this.#grant = credential.grant ?? '';
    this.#issuedAt = credential.issuedAt;
    this.#revokedToken = credential.revokedToken ?? (() => httpErrors.tokenRevoked('Bearer error="invalid_token"'));
    this.#limits = limits;
    this.#probe = async (sessionId) => {
      const stub = sessions.get(sessions.idFromName(objectName({ id: principalId }, sessionId)));
      const answer = await stub.fetch(new Request(`${SESSION_ORIGIN}${OBJECT_ROUTES.probe}`)).catch(() => undefined);
      if (answer?.status === 404) return 'gone';
      const told = answer?.ok === true ? ((await answer.json().catch(() => undefined)) as { liveUntil?: unknown } | undefined) : undefined;
      return typeof told?.liveUntil === 'number' && Number.isSafeInteger(told.liveUntil) ? { liveUntil: told.liveUntil } : 'held';
    };
  }

  /** The OAuth grant the request's token belongs to ('' where there are none). */
  get grant(): string {
    return this.#grant;
  }

  /** Registers a session about to be created, or throws the `session_limit` refusal. */
  async admitSession(sessionId: string): Promise<void> {
    const limit = this.#limits.maxSessionsPerPrincipal;
    const request: AdmissionRequest = { kind: 'session', id: sessionId, ...this.#credential(), limit };
    let answer: AdmissionAnswer = await this.#registry.admit(request);
    const probed: string[] = [];
    // Each round asks sessions no earlier round asked (core/holdings.ts): it ends.
    while (!answer.admitted && 'probe' in answer && answer.probe !== undefined) {
      const asked = answer.probe;
      const answers = await Promise.all(asked.map((id) => this.#probe(id)));
      const gone = asked.filter((_, i) => answers[i] === 'gone');
      const live = asked.flatMap((id, i) => {
        const told = answers[i]!;
        return typeof told === 'object' ? [{ id, liveUntil: told.liveUntil }] : [];
      });
      probed.push(...asked);
      answer = await this.#registry.admit({ ...request, gone, live, probed });
    }
    if (!answer.admitted) throw this.#refusal(answer) ?? httpErrors.sessionLimit(limit);
  }

  /** Registers a task about to be created (it expires at `expiresAt`), or throws the `task_limit` refusal. */
  async admitTask(taskId: string, expiresAt: number): Promise<void> {
    const limit = this.#limits.maxTasksPerPrincipal;
    const answer = await this.#registry.admit({ kind: 'task', id: taskId, ...this.#credential(), limit, expiresAt });
    if (answer.admitted) return;
    const refusal = this.#refusal(answer);
    if (refusal !== undefined) throw refusal;
    const retryAt = 'retryAt' in answer ? answer.retryAt : null;
    throw httpErrors.taskLimit(limit, Math.max(1, Math.ceil(((retryAt ?? Date.now() + 1_000) - Date.now()) / 1_000)));
  }

  /**
   * A webhook subscription about to be created (`events/subscribe`, no live subscription of the
   * key): refused for its credential (`revoked`, `recalled`) or at MAX_WEBHOOKS_PER_PRINCIPAL
   * (`limit`) before anything is POSTed — "Servers MUST enforce the subscription limit … before
   * they invoke on_subscribe" — else `verify` when the URL has no current verification for this
   * principal (nothing written: handshake, then call again with `verifiedAt`), else admitted.
   * Rows written: 0 refused or `verify`; 1 admitted under a cached verification; 2 with
   * `verifiedAt` (webhook-holdings.ts). At the bound, rows not known live are probed batch after
   * batch, as sessions are (core/holdings.ts).
   */
  async admitWebhook(ask: WebhookAdmissionAsk): Promise<WebhookAdmission> {
    const limit = this.#limits.maxWebhooksPerPrincipal ?? 0;
    // The principal's scope hashed: one principal's verification never waives another's challenge, and no URL is kept.
    const scope = await sha256Hex(verificationScopeText(this.#principalId, ask.url));
    const request: WebhookAdmissionRequest = {
      id: ask.id,
      scope,
      limit,
      ...this.#credential(),
      ...(ask.verifiedAt !== undefined && { verifiedAt: ask.verifiedAt }),
    };
    let answer: WebhookAdmissionAnswer = await this.#registry.admitWebhook(request);
    const probed: string[] = [];
    // Each round asks subscriptions no earlier round asked (core/holdings.ts): it ends.
    while ('probe' in answer) {
      const asked = answer.probe;
      const answers = await Promise.all(
        asked.map((id) =>
          ask.probe(id).then(
            (told) => told ?? ('gone' as const),
            () => 'held' as const,
          ),
        ),
      );
      const gone = asked.filter((_, i) => answers[i] === 'gone');
      const live = asked.flatMap((id, i) => {
        const told = answers[i]!;
        return typeof told === 'object' && Number.isSafeInteger(told.liveUntil) ? [{ id, liveUntil: told.liveUntil }] : [];
      });
      probed.push(...asked);
      answer = await this.#registry.admitWebhook({ ...request, gone, live, probed });
    }
    return answer;
  }

  /** What the registry checks of the request's credential. */
  #credential(): Pick<AdmissionRequest, 'grant' | 'issuedAt'> {
    return { grant: this.#grant, ...(this.#issuedAt !== undefined && { issuedAt: this.#issuedAt }) };
  }

  /** A refusal for what the credential is (revoked), rather than for the bound; undefined for the bound's. */
  #refusal(answer: Exclude<AdmissionAnswer, { admitted: true }>): McpHttpError | undefined {
    if ('revoked' in answer) return httpErrors.grantRevoked();
    if ('recalled' in answer) return this.#revokedToken();
    return undefined;
  }

  /** The session, task or webhook subscription ended, or was never created after all: its row goes. */
  forget(kind: HoldingKind, id: string): Promise<void> {
    return this.#registry.forget(kind, [id]);
  }
}
