/**
 * How the Worker and an event log reach a webhook subscription's object (`McpWebhookSubscription`,
 * webhook-object.ts; docs/events.md, *Webhooks*): one object per subscription, named by the
 * subscription's derived id (`sub_…`, core/webhook-subscription-key.ts), called by RPC. This file
 * is the contract between the three: what each call carries and answers. It holds no behaviour
 * but the stub's guard, so the Worker side (webhook-methods.ts), the log side (log-subscribers.ts)
 * and the object can each be read against it alone.
 *
 * Who calls what:
 * - the Worker: `refresh` first (a live subscription of the key answers, and nothing else is
 *   asked), else `create` once the URL is verified and the principal admitted; `unsubscribe`;
 *   `terminate` for a revocation, an operator's end, or a subscribe its type's `authorize` refused; `describe` and `probe` for the operator's
 *   view and the per-principal bound (principals/);
 * - the subscription's log: `poke` after an append, and from its fan-out check alarm;
 * - the object itself calls its log (`addSubscriber` at creation, `read` to catch up,
 *   `removeSubscriber` at its end: event-logs.ts).
 */
import { BINDING_USES } from '../core/binding-check.ts';
import type { EventCursor } from '../core/event-cursor.ts';
import type { EventsError, JsonObject, StreamError } from '../core/events-wire.ts';
import type { SubscribeResult } from '../core/events-webhook-wire.ts';
import type { CallbackFailure } from '../core/events-wire.ts';
import type { TtlGrant } from '../core/webhook-subscription-key.ts';
import { namespaceGuard } from '../edge/storage-guard.ts';
import type { LogName, StoredOccurrence } from './event-log-store.ts';

/** What a subscription is: its key's parts (core/webhook-subscription-key.ts) and what was derived from them. */
export interface WebhookIdentity {
  /** `sub_…`: the object's name. */
  readonly id: string;
  readonly principal: string;
  /** The grant (token family) that created it: a revocation of the grant ends it. */
  readonly grant: string;
  /** The event type's name. */
  readonly name: string;
  /** The arguments as the type's schema output them (canonical JSON is what the id was derived from). */
  readonly args: JsonObject;
  /** The log the subscription reads. */
  readonly log: LogName;
  /** `delivery.url` as WHATWG serializes it: what is POSTed to. */
  readonly url: string;
}

/** A subscription to make: the Worker has verified the URL for the principal and admitted it. */
export interface WebhookCreate extends WebhookIdentity {
  /** `whsec_…`, checked by parseWebhookSecret. */
  readonly secret: string;
  /** The granted TTL (`expiresAt` null: no expiry, asked for). */
  readonly ttl: TtlGrant;
  /** Where delivery starts: the client's cursor (decoded, MAC verified, of this type), or null: from now. */
  readonly cursor: EventCursor | null;
  readonly maxAgeMs?: number;
  /** When the URL was verified for the principal (the handshake, or the registry's cached one). */
  readonly verifiedAt: number;
  /** The Worker's origin: where the cursor keys' loopback rule is judged (events/cursor-keys.ts). */
  readonly origin: string;
  /** The env keys of the bindings the object reaches: the event logs (`MCP_EVENTS`) and its own namespace (`MCP_WEBHOOKS`, which its log pokes). */
  readonly bindings: { readonly logs: string; readonly webhooks: string };
}

/** A subscribe of a key whose object may hold a live subscription. */
export interface WebhookRefresh {
  readonly secret: string;
  readonly ttl: TtlGrant;
  /** The client's cursor, decoded: a no-op for a live subscription ("at or behind" the watermark; ahead: also a no-op, docs/events.md). */
  readonly cursor: EventCursor | null;
  /** The grant of the refreshing request: a refresh under another grant of the same principal takes it over. */
  readonly grant: string;
}

/** `live: false`: no live subscription (never made, expired, ended): the Worker creates one. */
export type RefreshAnswer = { readonly live: false } | { readonly live: true; readonly result: SubscribeResult };

/** Created, or refused by the log (a cursor of another generation is not refused: it starts `truncated`; at the log's bound: ResourceExhausted). */
export type CreateAnswer = { readonly result: SubscribeResult } | { readonly refusal: EventsError };

/**
 * Why a subscription is ended with a `terminated` envelope (revocation, operator, its type gone,
 * the 7-day drop, its type's `authorize` refusing the principal at a refresh).
 */
export interface Termination {
  /** The envelope's error (events-wire.ts `eventsError`). */
  readonly error: StreamError;
  /** For metrics and the log line: what ended it. */
  readonly cause: 'revoked' | 'operator' | 'type_removed' | 'dropped' | 'not_permitted';
}

/**
 * What a log tells a subscriber after appends: the log's generation and head, the earliest seq it
 * still keeps, and the occurrences since what it last sent this subscriber when it knows (in
 * order, contiguous, ending at `head - 1`); without them the subscriber reads from its own
 * position with the log's `read`.
 */
export interface Poke {
  readonly logId: string;
  /** The log's next seq: every occurrence below it is stored. */
  readonly head: number;
  readonly earliestSeq: number;
  readonly occurrences?: readonly StoredOccurrence[];
}

/** `processed`: every matching occurrence below `head` is delivered, declined, or durably failing (its retry on the alarm). `gone`: no live subscription: the log drops its row. */
export type PokeAnswer = 'processed' | 'gone';

/** A subscription as the operator sees it (GET /admin/principals/{id}); no secret. */
export interface WebhookDescription {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly state: 'active' | 'suspended' | 'terminating';
  /** ISO 8601, or null: no expiry. */
  readonly refreshBefore: string | null;
  readonly createdAt: string;
  readonly verifiedAt: string;
  readonly lastDeliveryAt: string | null;
  readonly lastError: CallbackFailure | null;
  readonly failedSince: string | null;
  /** Occurrences with a failing row (retrying, or held by a suspension). */
  readonly failing: number;
  /** The seq the safe watermark stands at. */
  readonly watermarkSeq: number;
}

/** The RPC surface of an `McpWebhookSubscription` stub, as the library calls it. */
export interface WebhookSubscriptionStub {
  refresh(request: WebhookRefresh): Promise<RefreshAnswer>;
  create(request: WebhookCreate): Promise<CreateAnswer>;
  /** false: no live subscription (the Worker answers NotFound `{kind: "subscription"}`). No envelope is sent. */
  unsubscribe(): Promise<boolean>;
  /** Sends `terminated` (retried by the policy from the alarm) and ends; false: no live subscription. */
  terminate(termination: Termination): Promise<boolean>;
  describe(): Promise<WebhookDescription | null>;
  /** null: gone; else how long it lives at least (its expiry; far future for no expiry): the registry's probe. */
  probe(): Promise<{ readonly liveUntil: number } | null>;
  poke(poke: Poke): Promise<PokeAnswer>;
}

/** The binding of the subscription class (`MCP_WEBHOOKS`). */
export interface WebhookNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): unknown;
}

/** Subscription `id`'s object, its calls guarded (a class declared without SQLite is answered with the error that names the fix). */
export function webhookSubscription(namespace: WebhookNamespace, id: string): WebhookSubscriptionStub {
  const guard = namespaceGuard(namespace, BINDING_USES.webhooks.usualName, 'McpWebhookSubscription, the webhook subscriptions');
  const stub = namespace.get(namespace.idFromName(id)) as WebhookSubscriptionStub;
  return {
    refresh: (request) => guard.call(() => stub.refresh(request)),
    create: (request) => guard.call(() => stub.create(request)),
    unsubscribe: () => guard.call(() => stub.unsubscribe()),
    terminate: (termination) => guard.call(() => stub.terminate(termination)),
    describe: () => guard.call(() => stub.describe()),
    probe: () => guard.call(() => stub.probe()),
    poke: (poke) => guard.call(() => stub.poke(poke)),
  };
}
