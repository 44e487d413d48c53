/**
 * The webhook half of the MCP Events wire (SEP-3415 at 5eb6862: *Webhook-Based Delivery*,
 * *Non-event webhook bodies*, *Webhook delivery status*, *Webhook security*): every name and shape
 * of `events/subscribe`, `events/unsubscribe` and the POSTs they cause, so that the server that
 * sends and the client that receives build and read one shape. events-wire.ts re-exports all of
 * it (import from there, as for every name of the extension); a sibling only to keep both files
 * under 350 lines. Pure: names, shapes, params parsing into typed values or a typed -32602, the
 * builders of results, bodies and envelopes, and the reading of a POST's body and a challenge answer.
 *
 * The parser enforces the params' MUSTs itself, so no caller can forget them: "Servers MUST reject
 * `events/subscribe` with a non-`https` `delivery.url` (`InvalidParams`)" through checkCallbackUrl
 * (webhook-url.ts; the WEBHOOK_DEV_ORIGINS policy is an argument), and "Servers MUST reject a
 * `delivery.secret` that is not `whsec_` followed by base64 that decodes to 24 to 64 bytes" through
 * parseWebhookSecret (webhook-signature.ts); `data.refusal` names the failed check, and no refusal
 * repeats the secret. Left to neighbours: the principal (the authorization layer's), `arguments`
 * against `inputSchema`, the key, `id` and TTL grant (webhook-subscription-key.ts), signatures
 * (webhook-signature.ts), the safe `cursor` (webhook-watermark.ts), when a `gap` or `terminated` is
 * due (webhook-retry.ts, the delivery layer), the challenge nonce and its constant-time comparison.
 */
import { type CallbackUrlPolicy, checkCallbackUrl, MAX_CALLBACK_URL_LENGTH } from './webhook-url.ts';
import { parseWebhookSecret, type WebhookHeaders } from './webhook-signature.ts';
import {
  type CallbackFailure,
  type EventOccurrence,
  eventsError,
  type InvalidParamsReason,
  isObject,
  isRefusal,
  type JsonObject,
  type ParamsRefusal,
  parseEventTarget,
  parseSubscriptionParams,
  type StreamError,
  type SubscriptionParams,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './events-wire.ts';

export { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER };

/** "`X-MCP-Subscription-Id` … carries the subscription `id`": "the only MCP-specific header" (HTTP names are case-insensitive). */
export const SUBSCRIPTION_ID_HEADER = 'X-MCP-Subscription-Id';
/** *Delivery profile*: "present on every delivery. A WAF MAY drop requests that are missing any of them". */
export const WEBHOOK_REQUIRED_HEADERS = [
  WEBHOOK_ID_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  SUBSCRIPTION_ID_HEADER,
] as const;
/** "Deliveries are HTTP `POST` only." "Content-Type. `application/json`." */
export const WEBHOOK_METHOD = 'POST';
export const WEBHOOK_CONTENT_TYPE = 'application/json';
/** "Servers SHOULD keep delivery bodies at or under 256 KiB." */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;
/** Reserved well-known paths: the receiver's consent document and the server's `v1a,` keys (neither served yet). */
export const WEBHOOK_RECEIVER_WELL_KNOWN_PATH = '/.well-known/mcp-webhook-receiver.json';
export const WEBHOOK_JWKS_WELL_KNOWN_PATH = '/.well-known/mcp-webhook-jwks.json';
/** The prefix of a derived subscription id, as the SEP's example spells it: `sub_a3f1c8e2b0d49f7e`. */
export const SUBSCRIPTION_ID_PREFIX = 'sub_';
/** `delivery.mode`, when a client sends it: "`events/subscribe` is used only for webhook delivery." */
export const WEBHOOK_DELIVERY_MODE = 'webhook';

/** "A body with a top-level `type` field is a control envelope, and a body without one is an `EventOccurrence`." */
export const ControlEnvelopeType = { verification: 'verification', gap: 'gap', terminated: 'terminated' } as const;
export type ControlEnvelopeTypeName = (typeof ControlEnvelopeType)[keyof typeof ControlEnvelopeType];

/** "`webhook-id` for a control envelope is a per-message identifier of the form `msg_<type>_<random>`." */
export const CONTROL_WEBHOOK_ID_PREFIX = 'msg_';
/** Random bytes in a control envelope's `webhook-id`: 128 bits, as hex (no `.`, which Standard Webhooks forbids in an id). */
export const CONTROL_WEBHOOK_ID_RANDOM_BYTES = 16;

export interface SubscribeParams extends SubscriptionParams {
  /** `url` as WHATWG serializes it (what is keyed and POSTed to); `secret` the `whsec_` text as given, checked. */
  readonly delivery: { readonly url: string; readonly secret: string };
  /** Omitted: "server default" (`undefined`); `null`: "no expiry" asked; else whole ms, any value (grantTtl clamps). */
  readonly ttlMs: number | null | undefined;
}

export interface UnsubscribeParams {
  readonly name: string;
  readonly arguments: JsonObject;
  readonly delivery: { readonly url: string };
}

/** "`active`, `lastDeliveryAt`, `lastError`" as in every example; `failedSince` while failing; `throttled` and `retryAfterMs` advisory. */
export interface DeliveryStatus {
  readonly active: boolean;
  /** ISO 8601; `null` before any delivery (ours: the examples always have one). */
  readonly lastDeliveryAt: string | null;
  /** "MUST be a server-generated category string … MUST NOT include raw response bodies, headers or status lines." */
  readonly lastError: CallbackFailure | null;
  readonly failedSince?: string;
  readonly throttled?: boolean;
  readonly retryAfterMs?: number;
}

export interface SubscribeResult {
  readonly resultType: 'complete';
  readonly id: string;
  /** "always present, nullable": ISO 8601, or `null` for no expiry. */
  readonly refreshBefore: string | null;
  /** The safe watermark; "`null` for event types that do not support replay". */
  readonly cursor: string | null;
  /** "true if delivery started later than the supplied cursor". */
  readonly truncated: boolean;
  /** "MAY include … when it refreshes an existing subscription." */
  readonly deliveryStatus?: DeliveryStatus;
}

/** "The result is an empty `Result`", which in this extension still carries `resultType`. */
export interface UnsubscribeResult {
  readonly resultType: 'complete';
}

/** The POST body of an occurrence: an EventOccurrence whose `cursor` is the subscription's safe watermark, not its own position. */
export type DeliveryBody = EventOccurrence & { readonly cursor: string | null };

export interface VerificationEnvelope {
  readonly type: 'verification';
  readonly challenge: string;
}
export interface GapEnvelope {
  readonly type: 'gap';
  readonly cursor: string | null;
}
export interface TerminatedEnvelope {
  readonly type: 'terminated';
  readonly error: StreamError;
}
export type ControlEnvelope = VerificationEnvelope | GapEnvelope | TerminatedEnvelope;

/** The endpoint's `2xx` body answering a `verification`: "echoing the nonce … (`{"challenge":"<nonce>"}`)". */
export interface ChallengeAnswer {
  readonly challenge: string;
}

// Parsing incoming params. Unknown members are ignored, as for poll and stream.

/** -32602 with our reason and, in `refusal`, the check that failed. */
function refuse(reason: InvalidParamsReason, refusal: string, detail: string): ParamsRefusal {
  return { invalid: eventsError('InvalidParams', detail, { reason, refusal }) };
}

/** `delivery` is an object whose `mode`, if sent, is `"webhook"`. */
function parseDelivery(delivery: unknown): JsonObject | ParamsRefusal {
  if (!isObject(delivery)) return refuse('invalid_delivery', 'not_an_object', 'delivery must be an object');
  if (delivery.mode !== undefined && delivery.mode !== WEBHOOK_DELIVERY_MODE) {
    return refuse('invalid_delivery', 'not_webhook', 'delivery.mode must be "webhook": events/subscribe is webhook delivery only');
  }
  return delivery;
}

/**
 * `ttlMs`: "optional, nullable integer". Any integer is a suggestion, held in the safe range ("no
 * rejection path for TTL values": the grant clamps); a fraction, a string or Infinity is malformed.
 */
function parseTtl(ttlMs: unknown): number | null | undefined | ParamsRefusal {
  if (ttlMs === undefined || ttlMs === null) return ttlMs;
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs)) {
    return refuse('invalid_ttl', 'not_an_integer', 'ttlMs must be an integer (milliseconds) or null');
  }
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, ttlMs));
}

/**
 * `events/subscribe` params. `urlPolicy` is WEBHOOK_DEV_ORIGINS and the Worker's own origin
 * (webhook-url.ts). Refusals, in this order: the subscription (name, arguments, cursor, maxAgeMs,
 * as poll's), `delivery`, `delivery.url`, `delivery.secret` ("REQUIRED"), `ttlMs`.
 */
export function parseSubscribeParams(params: unknown, urlPolicy: CallbackUrlPolicy): SubscribeParams | ParamsRefusal {
  const subscription = parseSubscriptionParams(params);
  if (isRefusal(subscription)) return subscription;
  const { delivery: rawDelivery, ttlMs: rawTtl } = params as { delivery?: unknown; ttlMs?: unknown };
  const delivery = parseDelivery(rawDelivery);
  if (isRefusal(delivery)) return delivery;
  if (typeof delivery.url !== 'string') return refuse('invalid_callback_url', 'malformed_url', 'delivery.url must be a string');
  const url = checkCallbackUrl(delivery.url, urlPolicy);
  if (!url.ok) return refuse('invalid_callback_url', url.reason, url.detail);
  const secret = parseWebhookSecret(delivery.secret);
  if (!secret.ok) {
    return refuse('invalid_secret', secret.reason, 'delivery.secret must be whsec_ and the base64 of 24 to 64 random bytes');
  }
  const ttlMs = parseTtl(rawTtl);
  if (ttlMs !== null && typeof ttlMs === 'object') return ttlMs;
  return { ...subscription, delivery: { url: url.url.href, secret: delivery.secret as string }, ttlMs };
}

/**
 * `events/unsubscribe` params: `name`, `arguments`, `delivery.url` ("The derived `id` is not
 * accepted as input"). The URL must parse, and no more: it only looks a subscription up, so one
 * the callback policy would now refuse can still be unsubscribed, and one never subscribed is
 * the caller's NotFound.
 */
export function parseUnsubscribeParams(params: unknown): UnsubscribeParams | ParamsRefusal {
  const target = parseEventTarget(params);
  if (isRefusal(target)) return target;
  const delivery = parseDelivery((params as { delivery?: unknown }).delivery);
  if (isRefusal(delivery)) return delivery;
  const { url } = delivery;
  if (typeof url !== 'string') return refuse('invalid_callback_url', 'malformed_url', 'delivery.url must be a string');
  if (url.length > MAX_CALLBACK_URL_LENGTH) {
    return refuse('invalid_callback_url', 'too_long', `delivery.url is longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  }
  let href: string;
  try {
    href = new URL(url).href;
  } catch {
    return refuse('invalid_callback_url', 'malformed_url', 'delivery.url is not an absolute URL');
  }
  return { ...target, delivery: { url: href } };
}

// Builders: one shape for the server that writes and the tests and client that read.

export function subscribeResult(result: Omit<SubscribeResult, 'resultType'>): SubscribeResult {
  const { id, refreshBefore, cursor, truncated, deliveryStatus } = result;
  return { resultType: 'complete', id, refreshBefore, cursor, truncated, ...(deliveryStatus === undefined ? {} : { deliveryStatus }) };
}

export function unsubscribeResult(): UnsubscribeResult {
  return { resultType: 'complete' };
}

/** What deliveryStatus is built from: webhook-retry.ts's SubscriptionHealth fits, times in epoch ms. */
export interface DeliveryStatusInput {
  /** `false` only in the refresh that "has just reactivated" a suspended subscription. */
  readonly active: boolean;
  readonly lastDeliveryAt: number | null;
  readonly lastError: CallbackFailure | null;
  readonly failingSince: number | null;
  /** Only a server that rate-limits its outbound deliveries sends these ("servers that do not … never send them"). */
  readonly throttle?: { readonly retryAfterMs?: number };
}

export function deliveryStatus(input: DeliveryStatusInput): DeliveryStatus {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    active: input.active,
    lastDeliveryAt: input.lastDeliveryAt === null ? null : iso(input.lastDeliveryAt),
    lastError: input.lastError,
    ...(input.failingSince === null ? {} : { failedSince: iso(input.failingSince) }),
    ...(input.throttle === undefined ? {} : { throttled: true }),
    ...(input.throttle?.retryAfterMs === undefined ? {} : { retryAfterMs: input.throttle.retryAfterMs }),
  };
}

/**
 * The POST body of `occurrence`, carrying `cursor`, the subscription's safe watermark ("It does not
 * include `cursor_N` in event N's payload until the events at positions before N have been
 * acknowledged or given up on"), in place of any cursor of its own. Members in the text's order.
 */
export function deliveryBody(occurrence: EventOccurrence, cursor: string | null): DeliveryBody {
  const { eventId, name, timestamp, data, _meta } = occurrence;
  return { eventId, name, timestamp, data, cursor, ...(_meta === undefined ? {} : { _meta }) };
}

export function verificationEnvelope(challenge: string): VerificationEnvelope {
  return { type: 'verification', challenge };
}

/** "The client persists `cursor` and treats it as `truncated: true`." */
export function gapEnvelope(cursor: string | null): GapEnvelope {
  return { type: 'gap', cursor };
}

/** "The termination signal carries the same nested `error` shape in every mode." */
export function terminatedEnvelope(error: StreamError): TerminatedEnvelope {
  return { type: 'terminated', error };
}

export function challengeAnswer(challenge: string): ChallengeAnswer {
  return { challenge };
}

/** A control envelope's `webhook-id`, `msg_<type>_<32 hex digits>`; `random` (16 bytes) from the CSPRNG unless given. */
export function controlWebhookId(type: ControlEnvelopeTypeName, random?: Uint8Array): string {
  const bytes = random ?? crypto.getRandomValues(new Uint8Array(CONTROL_WEBHOOK_ID_RANDOM_BYTES));
  if (bytes.byteLength !== CONTROL_WEBHOOK_ID_RANDOM_BYTES)
    throw new RangeError(`a control webhook-id takes ${CONTROL_WEBHOOK_ID_RANDOM_BYTES} random bytes`);
  return `${CONTROL_WEBHOOK_ID_PREFIX}${type}_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** Every header of one POST: the signed three (webhookHeaders), `X-MCP-Subscription-Id` and the content type. */
export function webhookRequestHeaders(subscriptionId: string, signed: WebhookHeaders): Record<string, string> {
  return { 'content-type': WEBHOOK_CONTENT_TYPE, ...signed, [SUBSCRIPTION_ID_HEADER]: subscriptionId };
}

// Reading what arrives: a POST's JSON body (the receiver, once verified) and a challenge's answer (the server).

export type WebhookBodyReading =
  | { readonly kind: 'event'; readonly body: DeliveryBody }
  | { readonly kind: 'control'; readonly envelope: ControlEnvelope }
  /** A `type` this revision does not define: a later revision's envelope, the receiver's to ignore or refuse. */
  | { readonly kind: 'unknown_control'; readonly type: string }
  | { readonly kind: 'malformed'; readonly why: string };

const cursorOf = (value: unknown): string | null | undefined =>
  value === undefined || value === null ? null : typeof value === 'string' ? value : undefined;

/** Classifies a POST's body; "An absent `cursor` field MUST be treated identically to an explicit `cursor: null`." */
export function readWebhookBody(json: unknown): WebhookBodyReading {
  if (!isObject(json)) return { kind: 'malformed', why: 'the body is not a JSON object' };
  if ('type' in json) return readControlEnvelope(json);
  const { eventId, name, timestamp, data, _meta } = json;
  const cursor = cursorOf(json.cursor);
  if (typeof eventId !== 'string' || typeof name !== 'string' || typeof timestamp !== 'string' || !isObject(data)) {
    return { kind: 'malformed', why: 'an occurrence needs eventId, name and timestamp strings and a data object' };
  }
  if (cursor === undefined) return { kind: 'malformed', why: 'cursor must be a string or null' };
  if (_meta !== undefined && !isObject(_meta)) return { kind: 'malformed', why: '_meta must be an object' };
  return { kind: 'event', body: deliveryBody({ eventId, name, timestamp, data, ...(_meta === undefined ? {} : { _meta }) }, cursor) };
}

function readControlEnvelope(json: JsonObject): WebhookBodyReading {
  const { type } = json;
  if (type === ControlEnvelopeType.verification) {
    const { challenge } = json;
    if (typeof challenge !== 'string' || challenge === '') return { kind: 'malformed', why: 'a verification needs a challenge string' };
    return { kind: 'control', envelope: verificationEnvelope(challenge) };
  }
  if (type === ControlEnvelopeType.gap) {
    const cursor = cursorOf(json.cursor);
    if (cursor === undefined) return { kind: 'malformed', why: 'cursor must be a string or null' };
    return { kind: 'control', envelope: gapEnvelope(cursor) };
  }
  if (type === ControlEnvelopeType.terminated) {
    const { error } = json;
    if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') {
      return { kind: 'malformed', why: 'a terminated envelope needs error {code, message}' };
    }
    if (error.data !== undefined && !isObject(error.data)) return { kind: 'malformed', why: 'error.data must be an object' };
    const nested = { code: error.code as number, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
    return { kind: 'control', envelope: terminatedEnvelope(nested) };
  }
  if (typeof type !== 'string') return { kind: 'malformed', why: 'type must be a string' };
  return { kind: 'unknown_control', type };
}

/** The nonce a verification's `2xx` body echoes (`{"challenge":"<nonce>"}`, other members ignored), else undefined. */
export function readChallengeAnswer(json: unknown): string | undefined {
  return isObject(json) && typeof json.challenge === 'string' ? json.challenge : undefined;
}
