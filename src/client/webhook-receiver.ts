/**
 * The receiving side of MCP Events webhooks (SEP-3415, *Webhook-Based Delivery*, *Webhook
 * security*): what an application's HTTP endpoint calls for each POST it is sent, so that
 * at-least-once delivery becomes exactly-once processing. One call per request:
 *
 * 1. the body is read to MAX_WEBHOOK_BODY_BYTES ("Servers SHOULD keep delivery bodies at or under
 *    256 KiB"), else 413, before any work on it;
 * 2. the signature and timestamp are verified (core/webhook-signature.ts's verifyWebhook, either
 *    of two secrets while they rotate): "The receiver MUST verify the signature before
 *    processing, SHOULD reject deliveries whose `webhook-timestamp` is more than 5 minutes old";
 *    a failure is 401 and nothing is parsed, answered or handed over;
 * 3. the body is parsed (core/events-webhook-wire.ts's readWebhookBody), else 400;
 * 4. a `verification` envelope is answered 200 `{"challenge":"<nonce>"}` ("The endpoint proves
 *    intent by echoing the nonce in a `2xx` body");
 * 5. a delivery whose `webhook-id` the application's DeliveryStore holds is answered 200 and not
 *    handed over again ("SHOULD deduplicate on `webhook-id`");
 * 6. otherwise `onDelivery` is awaited; when it resolves, the id is added to the store and the
 *    answer is 200; when it throws, nothing is added and the answer is 503, so the server retries.
 *
 * Why a callback rather than a returned delivery with an `ack()`: the text says "The endpoint
 * SHOULD NOT return `2xx` until the event has been durably persisted or forwarded". With a
 * callback the 200 exists only after the application's work resolved, and the store is written
 * only then, in one place; with `ack()` the caller would hold a ready 200 before processing, and
 * forgetting `ack()` (or acking before a failure) would silently break deduplication.
 *
 * Left to the application: where the secrets come from (`X-MCP-Subscription-Id` is handed over
 * so it can route), the store's durability, and atomicity: a crash after `onDelivery` resolved
 * and before `seen.add` did is processed again on the retry, so exactly-once needs `add` in the
 * same transaction as the processing, or processing idempotent by `eventId`. Two concurrent
 * attempts of one id (a retry overtaking a slow first attempt) both pass `has`: a store that
 * must exclude that makes `add` a unique insert inside the processing transaction.
 */
import { readBoundedBytes } from '../core/bounded-body.ts';
import {
  challengeAnswer,
  type DeliveryBody,
  MAX_WEBHOOK_BODY_BYTES,
  readWebhookBody,
  SUBSCRIPTION_ID_HEADER,
  WEBHOOK_CONTENT_TYPE,
  WEBHOOK_METHOD,
} from '../core/events-webhook-wire.ts';
import type { StreamError } from '../core/events-wire.ts';
import { parseWebhookSecret, verifyWebhook, type WebhookRefusal, type WebhookSecretRefusal } from '../core/webhook-signature.ts';

/** The `webhook-id`s an application has processed: its database in production, memoryDeliveryStore in tests. */
export interface DeliveryStore {
  has(webhookId: string): Promise<boolean>;
  /** Called once `onDelivery` resolved for this id. */
  add(webhookId: string): Promise<void>;
}

/** What every handed-over delivery carries besides its body. */
interface DeliveryHeaders {
  /** The verified `webhook-id`: the occurrence's `eventId`, or a control envelope's `msg_<type>_…`. */
  readonly webhookId: string;
  /** The verified `webhook-timestamp`, Unix seconds. */
  readonly timestamp: number;
  /** `X-MCP-Subscription-Id` as sent (not signed), undefined if absent. */
  readonly subscriptionId: string | undefined;
}

export type WebhookDelivery = DeliveryHeaders &
  (
    | { readonly kind: 'event'; readonly body: DeliveryBody }
    /** "The client persists `cursor` and treats it as `truncated: true`." */
    | { readonly kind: 'gap'; readonly cursor: string | null }
    /** The subscription ended; `error` is the nested error every mode's termination carries. */
    | { readonly kind: 'terminated'; readonly error: StreamError }
  );

export interface ReceiveWebhookOptions {
  /** `whsec_` secrets: the current one, and the previous one while a rotation's grace window lasts. */
  readonly secrets: readonly [string, string?] | readonly string[];
  readonly seen: DeliveryStore;
  /** Processes one delivery; resolve only once it is durably persisted or forwarded. */
  readonly onDelivery: (delivery: WebhookDelivery) => Promise<void> | void;
  /** Now, in epoch milliseconds (Date.now() unless given). */
  readonly now?: number;
}

/** Why a request was refused, with the status it was answered. */
export type ReceiptRefusal =
  | { readonly status: 405; readonly reason: 'not_post' }
  | { readonly status: 413; readonly reason: 'too_large' }
  | { readonly status: 401; readonly reason: WebhookRefusal }
  | { readonly status: 400; readonly reason: 'malformed_body' };

/** What happened, for the application's logs and metrics; `response` is what to answer. */
export type WebhookReceipt = { readonly response: Response } & (
  | { readonly outcome: 'delivered'; readonly delivery: WebhookDelivery; readonly unrecorded?: unknown }
  | { readonly outcome: 'duplicate'; readonly webhookId: string }
  | { readonly outcome: 'challenge_answered' }
  /** A control envelope `type` this revision does not define: acknowledged, not handed over. */
  | { readonly outcome: 'ignored'; readonly type: string }
  /** `onDelivery` threw: 503, not recorded, the server retries. */
  | { readonly outcome: 'failed'; readonly delivery: WebhookDelivery; readonly error: unknown }
  | ({ readonly outcome: 'refused' } & ReceiptRefusal)
);

/** A `secrets` entry that is not a `whsec_` secret: the application's configuration, never a delivery's fault. */
export class WebhookSecretError extends Error {
  override readonly name = 'WebhookSecretError';
  constructor(
    readonly index: number,
    readonly reason: WebhookSecretRefusal,
  ) {
    super(`secrets[${index}] is not a whsec_ secret of 24 to 64 bytes (${reason})`);
  }
}

/** Handles one POST to a webhook endpoint; see the file's header for the order of checks. */
export async function receiveWebhook(request: Request, options: ReceiveWebhookOptions): Promise<WebhookReceipt> {
  const { seen, onDelivery, now } = options;
  const secrets = parseSecrets(options.secrets);
  if (request.method !== WEBHOOK_METHOD) return refused({ status: 405, reason: 'not_post' });
  const body = await readCapped(request);
  if (body === undefined) return refused({ status: 413, reason: 'too_large' });
  const verified = await verifyWebhook({ secrets, headers: request.headers, body, ...(now === undefined ? {} : { now }) });
  if (!verified.ok) return refused({ status: 401, reason: verified.reason });
  const reading = readWebhookBody(parseJson(body));
  if (reading.kind === 'malformed') return refused({ status: 400, reason: 'malformed_body' });
  if (reading.kind === 'unknown_control') return { outcome: 'ignored', type: reading.type, response: answer(200) };
  const headers: DeliveryHeaders = {
    webhookId: verified.id,
    timestamp: verified.timestamp,
    subscriptionId: request.headers.get(SUBSCRIPTION_ID_HEADER) ?? undefined,
  };
  let delivery: WebhookDelivery;
  if (reading.kind === 'event') delivery = { ...headers, kind: 'event', body: reading.body };
  else {
    const { envelope } = reading;
    if (envelope.type === 'verification') {
      return { outcome: 'challenge_answered', response: answer(200, challengeAnswer(envelope.challenge)) };
    }
    delivery =
      envelope.type === 'gap'
        ? { ...headers, kind: 'gap', cursor: envelope.cursor }
        : { ...headers, kind: 'terminated', error: envelope.error };
  }
  if (await seen.has(verified.id)) return { outcome: 'duplicate', webhookId: verified.id, response: answer(200) };
  try {
    await onDelivery(delivery);
  } catch (error) {
    return { outcome: 'failed', delivery, error, response: answer(503) };
  }
  try {
    await seen.add(verified.id);
  } catch (unrecorded) {
    // Processed: a 5xx now would ask for it again, which is the duplicate the store exists to stop.
    return { outcome: 'delivered', delivery, unrecorded, response: answer(200) };
  }
  return { outcome: 'delivered', delivery, response: answer(200) };
}

/**
 * A DeliveryStore in memory holding the `limit` most recently added ids (the oldest leaves
 * first): for tests and development. It forgets on restart, and an application with more than
 * one process needs its shared store; a repeat older than `limit` deliveries is processed again.
 */
export function memoryDeliveryStore(limit = 10_000): DeliveryStore {
  if (!(Number.isSafeInteger(limit) && limit >= 1)) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const ids = new Set<string>();
  return {
    has: async (id) => ids.has(id),
    add: async (id) => {
      ids.delete(id);
      ids.add(id);
      if (ids.size > limit) ids.delete(ids.values().next().value as string);
    },
  };
}

function parseSecrets(secrets: readonly (string | undefined)[]): Uint8Array[] {
  const keys: Uint8Array[] = [];
  secrets.forEach((secret, index) => {
    if (secret === undefined) return;
    const parsed = parseWebhookSecret(secret);
    if (!parsed.ok) throw new WebhookSecretError(index, parsed.reason);
    keys.push(parsed.key);
  });
  if (keys.length === 0) throw new RangeError('receiveWebhook needs at least one secret');
  return keys;
}

/** The body's bytes, or undefined past MAX_WEBHOOK_BODY_BYTES (a declared length over it is not read at all). */
async function readCapped(request: Request): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > MAX_WEBHOOK_BODY_BYTES) {
    await request.body?.cancel();
    return undefined;
  }
  return readBoundedBytes(request.body, MAX_WEBHOOK_BODY_BYTES);
}

/** The body as JSON from strict UTF-8, or undefined (which readWebhookBody calls malformed). */
function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    return undefined;
  }
}

function refused(refusal: ReceiptRefusal): WebhookReceipt {
  return { outcome: 'refused', ...refusal, response: answer(refusal.status, { error: refusal.reason }) };
}

function answer(status: number, json?: object): Response {
  if (json === undefined) return new Response(null, { status });
  return new Response(JSON.stringify(json), { status, headers: { 'content-type': WEBHOOK_CONTENT_TYPE } });
}
