/**
 * `events/subscribe` and `events/unsubscribe` at the edge (MCP Events, SEP-3415, *Webhook-Based
 * Delivery* through *Unsubscribing*; docs/events.md, *Webhooks*): served beside poll and stream
 * (event-methods.ts, whose error path they share) only where the Worker was given `webhooks`,
 * and otherwise `-32601` as any method not served.
 *
 * Subscribe, in this order, each refusal its own typed error and nothing written before it:
 * 1. the principal: "MUST reject calls without an authorized principal with `Forbidden`"
 *    (`{reason: "unauthenticated"}`: AUTH=none's anonymous principal is everyone, and a
 *    subscription keyed by it would be anyone's), checked before the params are looked at;
 * 2. the params (core/events-webhook-wire.ts): `delivery.url` against the callback policy
 *    ("MUST reject … a non-`https` `delivery.url`", no private or special-purpose address, no
 *    credentials, WEBHOOK_DEV_ORIGINS on loopback only), `delivery.secret`, `ttlMs` → `-32602`;
 * 3. the subscription as poll's (event-subscription.ts: NotFound, Unsupported, InvalidParams,
 *    Forbidden, a cursor not ours); an upstream-backed type or the task type is Unsupported
 *    `{feature: "deliveryMode", value: "webhook"}` (neither offers it); Forbidden (the type's
 *    `authorize`, run again on every refresh) also ends a live subscription of the key, with
 *    `terminated` (`endUnpermitted`);
 * 4. the key → `id` (core/webhook-subscription-key.ts), and a refresh of its object: a live
 *    subscription answers, and nothing else is asked (no handshake, no admission);
 * 5. otherwise a creation: the principal's registry admits it (`revoked` → Forbidden
 *    `grant_revoked`; `recalled` → the credential's 401; at MAX_WEBHOOKS_PER_PRINCIPAL →
 *    ResourceExhausted `{limit: "events/subscribe", max}`, before anything is POSTed: "enforce
 *    the subscription limit … before they invoke on_subscribe"), or asks for a handshake;
 * 6. the handshake (webhook-handshake.ts), when asked, or always where the Worker has no
 *    registry (no verification cache then): a failure is CallbackEndpointError `{reason}` and
 *    writes nothing anywhere; a success is admitted again with its `verifiedAt` (the holding and
 *    the verification, one transaction);
 * 7. the object's `create`: its result, or its refusal (the log at its bound) answered as the
 *    error it is, the holding forgotten.
 *
 * Unsubscribe: the same principal rule, the key resolved the same way (name, arguments as the
 * type's schema outputs them, the URL keyed) to the same `id`; the object ends it (no envelope:
 * the client asked) and the holding is forgotten; no live subscription → NotFound `{kind:
 * "subscription"}`, which the client takes as done.
 *
 * Writes, at the edge: nothing. The object writes the subscription; the registry its holding and
 * verification (principals/webhook-holdings.ts); both counted where they are made. A creation's
 * verification is a `webhook_verification` point (no row): the handshake's verdict, or `cached`.
 * Its subscription's `created`/`refreshed`/`unsubscribed` points are the object's, where each is decided.
 */
import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import { ANONYMOUS } from '../auth/principal.ts';
import type { CursorKeys } from '../core/event-cursor.ts';
import { McpHttpError } from '../core/errors.ts';
import { eventsError, EventsErrorCode, EventsMethod, type EventsError, isRefusal, type JsonObject } from '../core/events-wire.ts';
import {
  parseSubscribeParams,
  parseUnsubscribeParams,
  type SubscribeParams,
  subscribeResult,
  unsubscribeResult,
} from '../core/events-webhook-wire.ts';
import { utf8Length } from '../core/utf8.ts';
import { canonicalJson, grantTtl, keyedUrl, MAX_ARGUMENTS_BYTES, NotJsonError, subscriptionId } from '../core/webhook-subscription-key.ts';
import type { CallbackUrlPolicy } from '../core/webhook-url.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { ANY_PARAMS, answered, type EventsHost, protocolError } from './event-methods.ts';
import { resolveSubscription } from './event-subscription.ts';
import { taskEventType } from './task-source.ts';
import type { WebhookAdmissionAsk } from '../principals/principal-holdings.ts';
import type { WebhookAdmission } from '../principals/webhook-holdings.ts';
import type { WebhookConfig } from './webhook-config.ts';
import { type HostLimiter, mayVerify, verificationOutcome, verifyEndpoint } from './webhook-handshake.ts';
import { type WebhookCreate, type WebhookNamespace, webhookSubscription } from './webhook-subscriptions.ts';

/** The registry's side of a subscribe, as principals/principal-holdings.ts's PrincipalHoldings offers it. */
export interface WebhookHoldings {
  admitWebhook(ask: WebhookAdmissionAsk): Promise<WebhookAdmission>;
  forget(kind: 'webhook', id: string): Promise<void>;
}

/** What serving the webhook methods needs beside the events host: built per request by the Worker (edge-events.ts). */
export interface WebhookHost {
  readonly namespace: WebhookNamespace;
  /** The env keys the object reaches its logs and its own namespace by. */
  readonly bindings: WebhookCreate['bindings'];
  readonly config: WebhookConfig;
  /** The origin the Worker was reached at: the callback policy's and the cursor keys' loopback rule. */
  readonly origin: string;
  /** The principal's registry; undefined where the Worker has none (no bound, no verification cache). */
  readonly holdings: WebhookHoldings | undefined;
  /** The grant (token family) of the request's credential ('' where there are none). */
  readonly grant: string;
  /** The credential's 401 when its principal was revoked after it was issued (principal-holdings.ts does the same for sessions). */
  readonly recalled: () => McpHttpError;
  /** The Worker's rate-limit binding, where it has one: verifications per destination host. */
  readonly limiter: HostLimiter | undefined;
  /** Where a subscribe's `webhook_verification` point goes (Metrics.off where MCP_METRICS is not bound). */
  readonly metrics: Metrics;
}

const UNAUTHENTICATED = eventsError('Forbidden', 'events/subscribe and events/unsubscribe need an authenticated principal', {
  reason: 'unauthenticated',
});

/** Registers the two methods on `server`; the caller does so only where the Worker has `webhooks`. */
export function serveWebhookMethods(server: McpServer, host: EventsHost, webhooks: WebhookHost): void {
  const policy: CallbackUrlPolicy = { devOrigins: webhooks.config.devOrigins, serverOrigin: webhooks.origin };

  server.server.setRequestHandler(EventsMethod.subscribe, { params: ANY_PARAMS }, async (params, ctx) => {
    if (isAnonymous(host)) throw protocolError(UNAUTHENTICATED);
    const parsed = parseSubscribeParams(params, policy);
    if (isRefusal(parsed)) throw protocolError(parsed.invalid);
    return answered(host, ctx, (keys) => subscribe(host, webhooks, policy, parsed, keys, ctx));
  });

  server.server.setRequestHandler(EventsMethod.unsubscribe, { params: ANY_PARAMS }, async (params) => {
    if (isAnonymous(host)) throw protocolError(UNAUTHENTICATED);
    const parsed = parseUnsubscribeParams(params);
    if (isRefusal(parsed)) throw protocolError(parsed.invalid);
    const type = host.catalog.get(parsed.name);
    if (type === undefined) throw protocolError(eventsError('NotFound', `no event type ${JSON.stringify(parsed.name)}`, { kind: 'event' }));
    // A type not delivered by webhook holds no webhook subscription: none of this key.
    if (!type.offers('webhook')) throw protocolError(noSubscription());
    const checked = await type.parseArguments(parsed.arguments);
    if (!checked.ok) throw protocolError(invalidArguments(checked.invalid));
    const id = await keyedId(host, type.name, parsed.delivery.url, checked.value);
    if (!(await webhookSubscription(webhooks.namespace, id).unsubscribe())) throw protocolError(noSubscription());
    // The registry's row goes too (1 row there); a row left by a failure here is found gone by the next probe at the bound.
    await webhooks.holdings?.forget('webhook', id);
    return { ...unsubscribeResult() };
  });
}

async function subscribe(
  host: EventsHost,
  webhooks: WebhookHost,
  policy: CallbackUrlPolicy,
  params: SubscribeParams,
  keys: CursorKeys,
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  const subscription = await resolveSubscription(host.catalog, params, 'webhook', host.principal, keys);
  if ('error' in subscription) {
    if (subscription.error.code === EventsErrorCode.Forbidden) await endUnpermitted(host, webhooks, params, subscription.error);
    throw protocolError(subscription.error);
  }
  // Neither offers webhook (their `delivery` leaves it out, so resolveSubscription refused them already): said again where it is decided.
  if (subscription.upstream !== undefined || subscription.type.name === taskEventType.name) {
    throw protocolError(unsupported(subscription.type.name));
  }
  const { namespace, config, holdings } = webhooks;
  const { name } = subscription.type;
  const url = keyedUrl(params.delivery.url);
  const { secret } = params.delivery;
  const id = await keyedId(host, name, url, subscription.args);
  const stub = webhookSubscription(namespace, id);

  // A live subscription of the key: a refresh, answered by its object ("The server grants a TTL again on each refresh").
  const refreshed = await stub.refresh({
    secret,
    ttl: grantTtl(params.ttlMs, Date.now(), config.ttl),
    cursor: subscription.cursor,
    grant: webhooks.grant,
  });
  if (refreshed.live) return { ...refreshed.result };

  const probe = (other: string) => webhookSubscription(namespace, other).probe();
  let admission: WebhookAdmission = holdings === undefined ? { verify: true } : await holdings.admitWebhook({ id, url, probe });
  if ('refused' in admission) return refuseAdmission(host, webhooks, admission, ctx);
  let verifiedAt: number;
  if ('verify' in admission) {
    // "SHOULD be rate-limited per destination host": past it nothing is sent (webhook-handshake.ts says why this error).
    if (!(await mayVerify(url, webhooks.limiter))) {
      throw protocolError(
        eventsError('ResourceExhausted', 'too many endpoint verifications to this host just now; try again later', {
          limit: 'webhook_verifications',
        }),
      );
    }
    const handshake = await verifyEndpoint({ url, policy, subscriptionId: id, secret, timeoutMs: config.attemptTimeoutMs });
    const counted = verificationOutcome(handshake);
    if (counted !== undefined) webhooks.metrics.write({ kind: 'webhook_verification', outcome: counted }, host.principal.id);
    if (!handshake.verified) {
      if ('refused' in handshake) {
        throw protocolError(
          eventsError('InvalidParams', 'delivery.url is not a callback this server may call', {
            reason: 'invalid_callback_url',
            refusal: handshake.refused,
          }),
        );
      }
      // "MUST NOT begin delivering to a callback URL until the endpoint's intent to receive deliveries is confirmed": nothing written.
      throw protocolError(eventsError('CallbackEndpointError', 'the callback endpoint did not verify', { reason: handshake.reason }));
    }
    verifiedAt = Date.now();
    if (holdings !== undefined) {
      admission = await holdings.admitWebhook({ id, url, probe, verifiedAt });
      if ('refused' in admission) return refuseAdmission(host, webhooks, admission, ctx);
      if (!('admitted' in admission)) throw new Error('the principal registry asked for a handshake of a URL it was just told is verified');
    }
  } else {
    verifiedAt = admission.verifiedAt;
    webhooks.metrics.write({ kind: 'webhook_verification', outcome: 'cached' }, host.principal.id);
  }

  const create: WebhookCreate = {
    id,
    principal: host.principal.id,
    grant: webhooks.grant,
    name,
    args: subscription.args,
    log: subscription.log,
    url,
    secret,
    // Granted from now: the handshake may have taken a while since the refresh's grant.
    ttl: grantTtl(params.ttlMs, Date.now(), config.ttl),
    cursor: subscription.cursor,
    ...(params.maxAgeMs !== undefined && { maxAgeMs: params.maxAgeMs }),
    verifiedAt,
    origin: webhooks.origin,
    bindings: webhooks.bindings,
  };
  const forget = () => holdings?.forget('webhook', id).catch(() => undefined);
  const created = await stub.create(create).catch(async (error: unknown) => {
    await forget();
    throw error;
  });
  if ('refusal' in created) {
    await forget();
    throw protocolError(created.refusal);
  }
  return { ...subscribeResult(created.result) };
}

/**
 * The type's `authorize` refused the principal: the refresh is refused, and a live subscription of
 * the key ends too. "The server SHOULD periodically re-verify permissions" and, access revoked,
 * "terminates the subscription with the signal for its mode": a refresh is that re-verification
 * (each one runs `authorize`), and a refusal that left the subscription delivering would hand
 * events to a principal no longer permitted until its TTL, or for good with no expiry. Its
 * `terminated` carries the refusal's error. Writes: nothing where no subscription of the key is
 * live (the object only reads); else the object's 2 rows (terminating, its alarm) and the
 * registry's holding (1).
 */
async function endUnpermitted(host: EventsHost, webhooks: WebhookHost, params: SubscribeParams, error: EventsError): Promise<void> {
  const type = host.catalog.get(params.name);
  const checked = type === undefined ? undefined : await type.parseArguments(params.arguments);
  if (type === undefined || checked === undefined || !checked.ok) return;
  const id = await keyedId(host, type.name, keyedUrl(params.delivery.url), checked.value);
  if (await webhookSubscription(webhooks.namespace, id).terminate({ error, cause: 'not_permitted' })) {
    await webhooks.holdings?.forget('webhook', id);
  }
}

/** The registry refused the creation: for the credential (403, or its 401, as a session's would be) or at the bound. */
function refuseAdmission(
  host: EventsHost,
  webhooks: WebhookHost,
  admission: Extract<WebhookAdmission, { refused: string }>,
  ctx: ServerContext,
): Record<string, unknown> {
  switch (admission.refused) {
    case 'revoked':
      throw protocolError(
        eventsError('Forbidden', 'the grant this request was authorized by has been revoked', { reason: 'grant_revoked' }),
      );
    case 'recalled': {
      // The credential itself is refused: the HTTP 401 with its challenge, as for any request of a revoked token.
      const { status, code, message, data, headers } = webhooks.recalled();
      host.refuse(new McpHttpError(status, code, message, data, ctx.mcpReq.id, headers));
      return {};
    }
    case 'limit':
      throw protocolError(
        eventsError('ResourceExhausted', `at most ${admission.max} webhook subscriptions per principal`, {
          limit: 'events/subscribe',
          max: admission.max,
        }),
      );
  }
}

/** The subscription key's `id`; arguments JSON cannot spell (none parsed from a request) are -32602. */
async function keyedId(host: EventsHost, name: string, url: string, args: JsonObject): Promise<string> {
  try {
    // A bound on what is stored (the record keeps the arguments), checked on their stored form.
    if (utf8Length(canonicalJson(args)) > MAX_ARGUMENTS_BYTES) {
      throw protocolError(invalidArguments(`longer than ${MAX_ARGUMENTS_BYTES} bytes as canonical JSON`));
    }
    return await subscriptionId({ principal: host.principal.id, url, name, arguments: args });
  } catch (error) {
    if (error instanceof NotJsonError) throw protocolError(invalidArguments(error.message));
    throw error;
  }
}

const isAnonymous = (host: EventsHost) => host.principal === ANONYMOUS || host.principal.id === ANONYMOUS.id;

const noSubscription = (): EventsError =>
  eventsError('NotFound', 'no webhook subscription of this name, arguments and delivery.url', { kind: 'subscription' });

const invalidArguments = (why: string): EventsError =>
  eventsError('InvalidParams', `arguments do not match the inputSchema: ${why}`, { reason: 'invalid_arguments' });

const unsupported = (name: string): EventsError =>
  eventsError('Unsupported', `${name} is not delivered by webhook`, { feature: 'deliveryMode', value: 'webhook' });
