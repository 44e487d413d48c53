/**
 * What an operator can do about one principal (the Worker's `/admin` routes, admin-routes.ts,
 * and the revocation of an OAuth grant): list what it holds (its registry's sessions and tasks;
 * its open streams, counted by the bus shards that hold their sockets), end a session, end a
 * task, and revoke — end everything it holds, or everything created under one grant:
 * - each session is ended by its object: its running calls are answered with an error,
 *   `grant_revoked`, on their streams, then it is dropped (404 afterwards);
 * - each task not yet ended fails, `grant_revoked`, and its tool is stopped; its streams end
 *   with that terminal event;
 * - its `subscriptions/listen` streams, on every isolate, end with an error, and its
 *   `events/stream` push streams with `notifications/events/terminated` Forbidden (the bus
 *   closes their sockets: stateless/event-bus.ts) — all of them, or those opened with a token
 *   of the grant (a socket carries its principal's tag and its grant's);
 * - each webhook subscription (issue 47) is told by its object to end: it sends
 *   `terminated` Forbidden `grant_revoked` to its callback URL (retried by the policy) and
 *   ends; a subscription holds no socket, so the registry's rows are what a revocation walks;
 * - revoking the whole principal also marks its registry (`recall`): a token issued before
 *   then opens no new session or task (401 `invalid_token`), though its issuer cannot recall it.
 * Each step is idempotent and the registry rows go only once their object has answered, so a
 * revocation cut short is finished by calling it again.
 */
import { objectName } from '../auth/principal.ts';
import { eventsError } from '../core/events-wire.ts';
import type { Holding } from '../core/holdings.ts';
import { OBJECT_ROUTES, HEADERS, SESSION_ORIGIN, TASK_ROUTES } from '../core/wire.ts';
import { placedNamespace } from '../edge/placement.ts';
import type { EndReason } from '../session/session-object.ts';
import { type BusStreams, grantListenTag, principalListenTag } from '../stateless/event-bus.ts';
import type { TaskNamespace } from '../tasks/task-directory.ts';
import { type Termination, type WebhookDescription, type WebhookNamespace, webhookSubscription } from '../events/webhook-subscriptions.ts';
import { type PrincipalRegistryNamespace, type PrincipalRegistryStub, registryOf } from './principal-registry.ts';

/** An object namespace as the control uses it (a `DurableObjectNamespace` is one). */
export interface ObjectNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): { fetch(request: Request): Promise<Response> };
}

export interface ControlBindings {
  readonly registry: PrincipalRegistryNamespace;
  readonly sessions: ObjectNamespace;
  readonly tasks?: TaskNamespace;
  /** The streams held on the bus (listens, event streams), reached by tag on every shard; absent without a bus. */
  readonly streams?: StreamControl;
  /** The webhook subscriptions' objects (`MCP_WEBHOOKS`); absent where webhooks are not served. */
  readonly webhooks?: WebhookNamespace;
}

/** What the control asks of the bus (stateless/event-bus.ts `DurableEventBus`). */
export interface StreamControl {
  /** Closes the streams carrying a tag (a principal's, or a grant's), answering how many of each kind. */
  revoke(tag: string): Promise<BusStreams>;
  /** How many streams of each kind are open under a tag now. */
  streams(tag: string): Promise<BusStreams>;
}

/** What a revocation ended. */
export interface Revocation {
  readonly sessions: number;
  readonly tasks: number;
  /** `subscriptions/listen` streams (task watches included). */
  readonly listens: number;
  /** `events/stream` push streams. */
  readonly eventStreams: number;
  /** Webhook subscriptions told to end (`terminated` Forbidden `grant_revoked`). */
  readonly webhooks: number;
}

/** Why a webhook subscription ends at a revocation, and at an operator's DELETE (docs/events.md, *Choices where the text leaves one (webhooks)*, 8). */
export const REVOKED_WEBHOOK: Termination = {
  error: eventsError('Forbidden', 'the grant was revoked', { reason: 'grant_revoked' }),
  cause: 'revoked',
};
export const OPERATOR_ENDED_WEBHOOK: Termination = {
  error: eventsError('Forbidden', 'ended by the operator', { reason: 'ended_by_operator' }),
  cause: 'operator',
};

export class PrincipalControl {
  readonly #bindings: ControlBindings;

  /** `bindings`' namespaces are placed as the Worker's DO_JURISDICTION and DO_LOCATION_HINT say (edge/placement.ts), unless placed already. */
  constructor(bindings: ControlBindings) {
    const { registry, sessions, tasks, webhooks } = bindings;
    this.#bindings = {
      ...bindings,
      registry: placedNamespace(registry),
      sessions: placedNamespace(sessions),
      ...(tasks !== undefined && { tasks: placedNamespace(tasks) }),
      ...(webhooks !== undefined && { webhooks: placedNamespace(webhooks) }),
    };
  }

  /** The principal's sessions and tasks, oldest first (sessions that expired idle included until swept). */
  list(principalId: string): Promise<Holding[]> {
    return this.#registry(principalId).list();
  }

  /**
   * The principal's streams open now on every isolate, of each kind, as the bus shards count
   * their sockets under its tag (no registry row: a stream is not registered); null without a bus.
   */
  async streams(principalId: string): Promise<BusStreams | null> {
    const bus = this.#bindings.streams;
    return bus === undefined ? null : bus.streams(await principalListenTag(principalId));
  }

  /** Ends one session; false when the principal has none of that id. */
  async endSession(principalId: string, sessionId: string, reason: EndReason = 'ended_by_operator'): Promise<boolean> {
    const stub = this.#bindings.sessions.get(this.#bindings.sessions.idFromName(objectName({ id: principalId }, sessionId)));
    const response = await stub.fetch(
      new Request(`${SESSION_ORIGIN}${OBJECT_ROUTES.end}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [HEADERS.sessionId]: sessionId },
        body: JSON.stringify({ reason }),
      }),
    );
    if (response.status !== 204 && response.status !== 404) throw new Error(`session object answered ${response.status} to end`);
    await this.#registry(principalId).forget('session', [sessionId]);
    return response.status === 204;
  }

  /** Ends one task (it fails, `grant_revoked`, unless it had ended); false when the principal has none of that id. */
  async endTask(principalId: string, taskId: string): Promise<boolean> {
    const tasks = this.#bindings.tasks;
    if (tasks === undefined) return false;
    const stub = tasks.get(tasks.idFromName(JSON.stringify([principalId, taskId])));
    const response = await stub.fetch(
      new Request(`https://task.internal${TASK_ROUTES.revoke}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      }),
    );
    if (response.status !== 200 && response.status !== 404) throw new Error(`task object answered ${response.status} to revoke`);
    return response.status === 200;
  }

  /**
   * The principal's webhook subscriptions as their objects describe them (N requests, N ≤
   * MAX_WEBHOOKS_PER_PRINCIPAL; nothing written but a row found gone: its object answers null,
   * the row is forgotten, 1 row deleted, and it is left out). Empty without a namespace.
   */
  async webhooks(principalId: string): Promise<WebhookDescription[]> {
    const namespace = this.#bindings.webhooks;
    if (namespace === undefined) return [];
    const rows = (await this.list(principalId)).filter((h) => h.kind === 'webhook');
    const described = await Promise.all(rows.map((h) => webhookSubscription(namespace, h.id).describe()));
    const gone = rows.filter((_, i) => described[i] === null).map((h) => h.id);
    if (gone.length > 0) await this.#registry(principalId).forget('webhook', gone);
    return described.filter((d): d is WebhookDescription => d !== null);
  }

  /**
   * Ends one webhook subscription of the principal (it sends `terminated`, then ends; the row
   * goes once its object answered). False when the principal's registry holds no such row — the
   * object is not asked, so an operator naming another principal's `sub_…` ends nothing — or
   * when its object had no live subscription (the row is forgotten all the same).
   */
  async endWebhook(principalId: string, subscriptionId: string, termination: Termination = OPERATOR_ENDED_WEBHOOK): Promise<boolean> {
    const held = (await this.list(principalId)).some((h) => h.kind === 'webhook' && h.id === subscriptionId);
    return held && this.#terminate(principalId, subscriptionId, termination);
  }

  /** Ends what the principal holds — under `grant` only, when given — and closes its listen and event streams. */
  async revoke(principalId: string, grant?: string): Promise<Revocation> {
    // Fenced first: a request the grant authorized before now, admitted after the list, is refused (principal-registry.ts).
    if (grant !== undefined && grant !== '') await this.#registry(principalId).fence(grant);
    // The whole principal: marked first, so that no token issued until now opens anything after the list.
    if (grant === undefined) await this.#registry(principalId).recall(Date.now());
    const held = (await this.list(principalId)).filter((h) => grant === undefined || h.grant === grant);
    const now = Date.now();
    const [sessions, tasks, webhooks, streams] = await Promise.all([
      countTrue(held.filter((h) => h.kind === 'session').map((h) => this.endSession(principalId, h.id, 'grant_revoked'))),
      countTrue(held.filter((h) => h.kind === 'task' && (h.expiresAt ?? 0) > now).map((h) => this.endTask(principalId, h.id))),
      countTrue(held.filter((h) => h.kind === 'webhook').map((h) => this.#terminate(principalId, h.id, REVOKED_WEBHOOK))),
      this.#bindings.streams?.revoke(await listenTagOf(principalId, grant)) ?? NO_STREAMS,
    ]);
    return { sessions, tasks, listens: streams.listens, eventStreams: streams.events, webhooks };
  }

  /**
   * Tells subscription `id` to end with `termination`, then forgets its row (1 row deleted) once
   * its object answered, true or false; a throw leaves the row, so calling again finishes it.
   * Without a namespace nothing can end it: false, the row kept.
   */
  async #terminate(principalId: string, id: string, termination: Termination): Promise<boolean> {
    const namespace = this.#bindings.webhooks;
    if (namespace === undefined) return false;
    const ended = await webhookSubscription(namespace, id).terminate(termination);
    await this.#registry(principalId).forget('webhook', [id]);
    return ended;
  }

  #registry(principalId: string): PrincipalRegistryStub {
    return registryOf(this.#bindings.registry, principalId);
  }
}

const NO_STREAMS: BusStreams = { listens: 0, events: 0 };

/**
 * The tag a revocation closes streams by: a grant's closes the streams opened with its
 * tokens; the principal's, every one of its streams. The grant '' is that of every token of a
 * principal without grants (AUTH=jwt), whose streams carry its principal's tag alone.
 */
function listenTagOf(principalId: string, grant: string | undefined): Promise<string> {
  return grant === undefined || grant === '' ? principalListenTag(principalId) : grantListenTag(principalId, grant);
}

async function countTrue(pending: readonly Promise<boolean>[]): Promise<number> {
  return (await Promise.all(pending)).filter(Boolean).length;
}
