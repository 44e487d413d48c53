/**
 * One Durable Object per webhook subscription (MCP Events, SEP-3415, *Webhook-Based Delivery*;
 * docs/events.md, *Webhooks*), named by its derived `sub_…` id, called by RPC as
 * webhook-subscriptions.ts's contract says: the Worker creates, refreshes, unsubscribes and
 * terminates it; its log pokes it after appends; its one alarm retries, expires and drops it.
 * Subclass it with the server's event types (the same list given to createMcpWorker), as the
 * task object is subclassed with its tools:
 *   export class AppWebhooks extends McpWebhookSubscription<Env> { types = [notes] }
 * bound as MCP_WEBHOOKS, a SQLite class.
 *
 * Thin: storage is webhook-store.ts's (failing rows webhook-failing.ts's), attempts and their
 * consequences webhook-delivery.ts's, what a wake does (new occurrences, due retries, the `gap`
 * owed, a log reset, the alarm) webhook-wake.ts's, where occurrences come from webhook-feed.ts's,
 * the alarm's time and the breaker core/webhook-schedule.ts's, a refresh's change
 * core/webhook-refresh.ts's, whether its type is still served webhook-type-removal.ts's. This file keeps:
 * - one chain: pokes, alarm runs, the creation and the end run one at a time, so a batch's
 *   position is written by the run that attempted it, and a poke arriving during the creation
 *   waits for the record it needs (a poke finding none answers `gone`, dropping the log's row);
 * - "processed" before a poke returns: every matching occurrence below its head is delivered,
 *   declined, held by the breaker (the position stays before it), or in a failing row with the
 *   alarm set for it (the log's check alarm re-pokes a subscription that never answered);
 * - never an event POST before the record exists with its verification time (the Worker
 *   verified the URL: "MUST persist their verification status alongside them"), nor once it is
 *   terminating;
 * - the end: expired (silently: "at `expires_at` … no `terminated`"), unsubscribed (no
 *   envelope), or after its `terminated` envelope: the log's row removed, the alarm and every
 *   row deleted.
 * The one writer of `webhook_subscription` points (no row), where each is decided: a create that
 * finds a live one refreshes, a refresh may reactivate, an end is counted when its cause is known.
 * The alarm handler never throws: it logs and sets its next alarm, so the platform's retries of a
 * throwing alarm never stand in for the retry policy.
 */
import { DurableObject } from 'cloudflare:workers';
import { eventsError } from '../core/events-wire.ts';
import { subscribeResult, terminatedEnvelope, type SubscribeResult } from '../core/events-webhook-wire.ts';
import { log } from '../core/log.ts';
import { canonicalJson } from '../core/webhook-subscription-key.ts';
import { decideRefresh } from '../core/webhook-refresh.ts';
import { dropSuspended } from '../core/webhook-retry.ts';
import { placedNamespace } from '../edge/placement.ts';
import { Metrics } from '../metrics/metrics.ts';
import { cursorKeys } from './cursor-keys.ts';
import type { EventType } from './event-type.ts';
import { eventLog, type EventLogNamespace } from './event-logs.ts';
import { readWebhookConfig, type WebhookConfig } from './webhook-config.ts';
import { Deliverer, newEnvelope } from './webhook-delivery.ts';
import { sealPosition } from './webhook-send.ts';
import { WebhookStore, type SubscriptionRecord } from './webhook-store.ts';
import { typeRemoval } from './webhook-type-removal.ts';
import { SubscriptionWake } from './webhook-wake.ts';
import type {
  CreateAnswer,
  Poke,
  PokeAnswer,
  RefreshAnswer,
  Termination,
  WebhookCreate,
  WebhookDescription,
  WebhookRefresh,
  WebhookSubscriptionStub,
} from './webhook-subscriptions.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export abstract class McpWebhookSubscription<E extends object = object> extends DurableObject<E> implements WebhookSubscriptionStub {
  /** The server's event types, as given to createMcpWorker: a subscription finds its own by name. */
  abstract readonly types: readonly EventType[];

  readonly #store: WebhookStore;
  readonly #config: WebhookConfig;
  readonly #deliverer: Deliverer;
  readonly #metrics: Metrics;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #wake: SubscriptionWake;
  /** Set by unsubscribe: no POST starts while the end waits its turn. */
  #ending = false;

  constructor(ctx: DurableObjectState, env: E) {
    super(ctx, env);
    this.#store = new WebhookStore(ctx.storage);
    this.#config = readWebhookConfig(env);
    this.#metrics = Metrics.of(env, (promise) => ctx.waitUntil(promise));
    this.#deliverer = new Deliverer({
      metrics: this.#metrics,
      store: this.#store,
      config: this.#config,
      keys: () => cursorKeys(env, this.#store.record?.origin ?? 'http://invalid'),
      stopped: () => this.#ending || this.#store.record?.state === 'terminating',
    });
    this.#wake = new SubscriptionWake({
      store: this.#store,
      deliverer: this.#deliverer,
      config: this.#config,
      storage: ctx.storage,
      type: (name) => this.#type(name),
      logs: (binding) => this.#logs(binding),
      keys: (origin) => cursorKeys(env, origin),
      ending: () => this.#ending,
    });
  }

  async create(request: WebhookCreate): Promise<CreateAnswer> {
    return this.#serial(async () => {
      const existing = this.#live();
      if (existing !== null) return { result: await this.#refreshed(existing, request) };
      if (this.#store.record?.state === 'terminating') {
        return {
          refusal: eventsError('Forbidden', 'this subscription is being ended; subscribe again once it is', { reason: 'terminating' }),
        };
      }
      // Expired, its alarm not run yet: that life ends here (its log row is kept: addSubscriber is idempotent).
      if (this.#store.record !== null)
        await this.#forget().then(() => this.#metrics.write({ kind: 'webhook_subscription', outcome: 'expired' }, request.principal));
      const type = this.#type(request.name);
      if (type === undefined)
        return { refusal: eventsError('NotFound', `no event type ${JSON.stringify(request.name)}`, { kind: 'event' }) };
      const added = await eventLog(this.#logs(request.bindings.logs), request.log).addSubscriber({
        ...request.log,
        retention: type.retention,
        subscriber: { id: request.id, binding: request.bindings.webhooks },
        cursor: request.cursor,
        ...(request.maxAgeMs === undefined ? {} : { maxAgeMs: request.maxAgeMs }),
      });
      if ('refusal' in added) return { refusal: added.refusal };
      const { decision } = added;
      const record: Omit<SubscriptionRecord, 'storedHealth'> = {
        id: request.id,
        principal: request.principal,
        grant: request.grant,
        name: request.name,
        args: canonicalJson(request.args),
        partition: request.log.partition,
        url: request.url,
        logId: added.logId,
        scannedTo: decision.fromSeq,
        secret: request.secret,
        previousSecret: null,
        previousUntil: null,
        expiresAt: request.ttl.expiresAt,
        state: 'active',
        suspendedAt: null,
        pausedTotalMs: 0,
        verifiedAt: request.verifiedAt,
        createdAt: Date.now(),
        health: { consecutiveFailures: 0, failingSince: null, lastError: null, lastDeliveryAt: null },
        gap: null,
        terminated: null,
        origin: request.origin,
        bindings: request.bindings,
      };
      this.#store.create(record);
      this.#metrics.write({ kind: 'webhook_subscription', outcome: 'created' }, record.principal);
      await this.#wake.schedule();
      const cursor = await sealPosition(await cursorKeys(this.env, record.origin), this.#store.record!, decision.fromSeq);
      // The backlog of a replayed cursor, after this answer (its turn on the chain comes next); a
      // crash before it is done is covered by the log's check alarm, which addSubscriber armed.
      if (decision.fromSeq < added.nextSeq) this.ctx.waitUntil(this.#serial(() => this.#safely(() => this.#wake.deliverNew())));
      return {
        result: subscribeResult({ id: record.id, refreshBefore: request.ttl.refreshBefore, cursor, truncated: decision.truncated }),
      };
    });
  }

  async refresh(request: WebhookRefresh): Promise<RefreshAnswer> {
    const record = this.#live();
    if (record === null) return { live: false };
    return { live: true, result: await this.#refreshed(record, request) };
  }

  /** One UPDATE (+ the alarm, moved earlier when reactivated or made finite); the answer's cursor is our watermark, whatever the client's said. */
  async #refreshed(record: SubscriptionRecord, request: WebhookRefresh | WebhookCreate): Promise<SubscribeResult> {
    const now = Date.now();
    const { change, deliveryStatus, reactivated } = decideRefresh(
      record,
      { grant: request.grant, secret: request.secret, expiresAt: request.ttl.expiresAt },
      now,
      this.#config.secretGraceMs,
    );
    this.#store.refresh(change);
    this.#metrics.write({ kind: 'webhook_subscription', outcome: reactivated ? 'reactivated' : 'refreshed' }, record.principal);
    await this.#wake.schedule();
    const cursor = await this.#sealedWatermark();
    return subscribeResult({ id: record.id, refreshBefore: request.ttl.refreshBefore, cursor, truncated: false, deliveryStatus });
  }

  async poke(poke: Poke): Promise<PokeAnswer> {
    return this.#serial(async () => {
      const record = this.#live();
      if (record === null) {
        if (this.#expired()) await this.#end('expired');
        return 'gone';
      }
      const removed = typeRemoval(this.types, record.name);
      if (removed !== null) {
        await this.#terminate(removed);
        return 'gone';
      }
      if (poke.logId !== record.logId) await this.#wake.reset(poke.logId, poke.earliestSeq);
      await this.#wake.deliverNew(poke);
      return 'processed';
    });
  }

  async unsubscribe(): Promise<boolean> {
    if (this.#live() === null) return false;
    this.#ending = true;
    try {
      await this.#serial(() => this.#end('unsubscribed'));
    } finally {
      this.#ending = false;
    }
    return true;
  }

  async terminate(termination: Termination): Promise<boolean> {
    if (this.#live() === null) return false;
    await this.#terminate(termination);
    return true;
  }

  /** `terminating` (1 row): no event POST starts from now on; the envelope is sent by the alarm, set at once (1 row). */
  async #terminate({ error, cause }: Termination): Promise<void> {
    this.#store.setTerminated(newEnvelope('terminated', JSON.stringify(terminatedEnvelope(error)), Date.now()));
    log({ msg: 'mcp.webhook.ended', subscription: this.#store.record!.id.slice(0, 12), cause: `terminating:${cause}` });
    this.#metrics.write({ kind: 'webhook_subscription', outcome: cause }, this.#store.record!.principal);
    await this.#wake.schedule();
  }

  async describe(): Promise<WebhookDescription | null> {
    const record = this.#store.record;
    if (record === null) return null;
    const rows = this.#store.failing.rows();
    return {
      id: record.id,
      name: record.name,
      url: record.url,
      state: record.state,
      refreshBefore: record.expiresAt === null ? null : iso(record.expiresAt),
      createdAt: iso(record.createdAt),
      verifiedAt: iso(record.verifiedAt),
      lastDeliveryAt: record.health.lastDeliveryAt === null ? null : iso(record.health.lastDeliveryAt),
      lastError: record.health.lastError,
      failedSince: record.health.failingSince === null ? null : iso(record.health.failingSince),
      failing: rows.filter((row) => row.state === 'pending').length,
      watermarkSeq: this.#deliverer.watermarkAt(record.scannedTo, rows),
    };
  }

  /** How long it lives at least (the registry's bound): capped at the TTL floor from now, as a refresh (unseen by the registry) may shorten it. */
  async probe(): Promise<{ readonly liveUntil: number } | null> {
    const record = this.#live();
    if (record === null) return null;
    return { liveUntil: Math.min(record.expiresAt ?? Number.MAX_SAFE_INTEGER, Date.now() + this.#config.ttl.minTtlMs) };
  }

  override async alarm(): Promise<void> {
    this.#wake.alarmGone();
    await this.#serial(() => this.#safely(() => this.#alarmRun()));
  }

  async #alarmRun(): Promise<void> {
    const record = this.#store.record;
    if (record === null) return;
    const now = Date.now();
    if (this.#expired()) return this.#end('expired');
    if (record.state === 'terminating') {
      if ((record.terminated?.nextAt ?? 0) <= now && (await this.#deliverer.attemptTerminated())) return this.#end('terminated');
      return;
    }
    const removed = typeRemoval(this.types, record.name);
    if (removed !== null) return this.#terminate(removed);
    if (record.state === 'suspended') {
      if (record.suspendedAt !== null && dropSuspended(record.expiresAt === null, record.suspendedAt, now, this.#config.retry)) {
        const error = eventsError('NotFound', 'delivery kept failing: the subscription was dropped', {
          kind: 'subscription',
          reason: 'delivery_failed',
        });
        return this.#terminate({ error, cause: 'dropped' });
      }
      return;
    }
    await this.#wake.retryAndCatchUp(now);
  }

  /** The end: the log's row removed (a failure is healed by the next poke's `gone`), then the alarm and every row deleted. */
  async #end(cause: 'expired' | 'unsubscribed' | 'terminated'): Promise<void> {
    const record = this.#store.record;
    if (record === null) return;
    try {
      await eventLog(this.#logs(record.bindings.logs), { type: record.name, partition: record.partition }).removeSubscriber(
        { type: record.name, partition: record.partition },
        record.id,
      );
    } catch (error) {
      log({ msg: 'mcp.webhook.error', subscription: record.id.slice(0, 12), error: String(error) });
    }
    await this.#forget();
    log({ msg: 'mcp.webhook.ended', subscription: record.id.slice(0, 12), cause });
    if (cause !== 'terminated') this.#metrics.write({ kind: 'webhook_subscription', outcome: cause }, record.principal);
  }

  async #forget(): Promise<void> {
    await this.#store.deleteAll();
    this.#wake.alarmGone();
  }

  async #sealedWatermark(): Promise<string> {
    const record = this.#store.record!;
    return sealPosition(await cursorKeys(this.env, record.origin), record, this.#deliverer.watermarkAt(record.scannedTo));
  }

  /** The record if the subscription is live: stored, not terminating, not past a finite expiry. */
  #live(): SubscriptionRecord | null {
    const record = this.#store.record;
    return record === null || record.state === 'terminating' || this.#expired() ? null : record;
  }

  #expired(): boolean {
    const expiresAt = this.#store.record?.expiresAt;
    return expiresAt !== undefined && expiresAt !== null && expiresAt <= Date.now();
  }

  #type(name: string): EventType | undefined {
    return this.types.find((type) => type.name === name && type.offers('webhook'));
  }

  /** The log binding its record names, placed as this object's env says (as the Worker placed it). */
  #logs(binding: string): EventLogNamespace {
    return placedNamespace((this.env as Record<string, unknown>)[binding] as EventLogNamespace, this.env as object);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work, work);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** A run that must not throw (the alarm, the backlog after creation): its error logged, the alarm set again. */
  async #safely(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      log({ msg: 'mcp.webhook.error', subscription: this.#store.record?.id.slice(0, 12) ?? '', error: String(error) });
    }
    try {
      await this.#wake.schedule();
    } catch (error) {
      log({ msg: 'mcp.webhook.error', subscription: this.#store.record?.id.slice(0, 12) ?? '', error: String(error) });
    }
  }
}
