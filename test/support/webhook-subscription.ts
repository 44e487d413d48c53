/**
 * The webhook tests' hands on a subscription's object and on the receiver
 * (scripts/support/webhook-test-receiver.mjs): a subscription of `demo.note` made by calling the
 * object's `create` directly (as the Worker does once the URL is verified), occurrences appended
 * to its log, pokes, and the receiver's script and log, each request checked with the library's
 * own verifier. Waits are bounded conditions, never timings.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { decodeCursor, type EventCursor } from '../../src/core/event-cursor.ts';
import { WEBHOOK_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import { parseWebhookSecret, verifyWebhook } from '../../src/core/webhook-signature.ts';
import { grantTtl, type TtlGrant } from '../../src/core/webhook-subscription-key.ts';
import { type CursorKeySecrets, cursorKeys } from '../../src/events/cursor-keys.ts';
import { eventLog } from '../../src/events/event-logs.ts';
import { readWebhookConfig } from '../../src/events/webhook-config.ts';
import { type WebhookSubscriptionStub, webhookSubscription } from '../../src/events/webhook-subscriptions.ts';
import { hookedEvents, noteEvents } from '../fixture-server/note-events.ts';

export const RECEIVER = (env as unknown as { WEBHOOK_RECEIVER: string }).WEBHOOK_RECEIVER;
/** The Worker's origin a subscription is made at: loopback, so WEBHOOK_DEV_ORIGINS counts. */
export const ORIGIN = 'http://localhost';
export const NOTE_LOG = { type: 'demo.note', partition: '' } as const;
export const HOOKED_LOG = { type: 'demo.hooked', partition: '' } as const;
type LogOf = typeof NOTE_LOG | typeof HOOKED_LOG;
const eventTypeOf = (log: LogOf) => (log.type === 'demo.note' ? noteEvents : hookedEvents);
export const config = readWebhookConfig(env);

export const SECRET_A = `whsec_${btoa('a'.repeat(32))}`;
export const SECRET_B = `whsec_${btoa('b'.repeat(32))}`;

export interface Behaviour {
  readonly kind: 'ok' | 'wrong' | 'status' | 'redirect' | 'slow' | 'drop' | 'big';
  readonly status?: number;
  readonly location?: string;
  readonly delayMs?: number;
  readonly then?: Behaviour;
}

export interface Received {
  readonly at: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly answered: number | string | null;
}

/** A received POST's `webhook-id`, its JSON body, and its control envelope's `type` (undefined for an event). */
export const idOf = (request: Received) => request.headers[WEBHOOK_ID_HEADER];
export const bodyOf = (request: Received) => JSON.parse(request.body) as Record<string, unknown>;
export const typeOf = (request: Received) => (JSON.parse(request.body) as { type?: string }).type;

export const hookUrl = (endpoint: string) => `${RECEIVER}/hook/${endpoint}`;

export async function script(endpoint: string, script: readonly Behaviour[], otherwise: Behaviour = { kind: 'ok' }): Promise<void> {
  const response = await fetch(`${RECEIVER}/_control/${endpoint}`, { method: 'PUT', body: JSON.stringify({ script, otherwise }) });
  if (response.status !== 204) throw new Error(`receiver control: ${response.status}`);
}

export async function received(endpoint: string): Promise<Received[]> {
  return (await fetch(`${RECEIVER}/_log/${endpoint}`)).json();
}

/** Waits (bounded) until `check` of the endpoint's log holds; answers that log. */
export async function receivedUntil(endpoint: string, check: (log: Received[]) => boolean, what = 'the receiver'): Promise<Received[]> {
  for (let i = 0; i < 400; i++) {
    const log = await received(endpoint);
    if (check(log)) return log;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what}: condition not reached; log: ${JSON.stringify(await received(endpoint)).slice(0, 2000)}`);
}

/** Waits (bounded) until `check()` is true. */
export async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what}: condition not reached`);
}

/** Whether a received request's signature verifies under `secret` (and its timestamp is within the window). */
export async function verifiesUnder(request: Received, secret: string): Promise<boolean> {
  const parsed = parseWebhookSecret(secret);
  if (!parsed.ok) throw new Error('bad test secret');
  return (await verifyWebhook({ secrets: [parsed.key], headers: request.headers, body: request.body })).ok;
}

/** A received body's cursor, decoded (its MAC checked). */
export async function cursorOf(request: Received): Promise<EventCursor> {
  const { cursor } = JSON.parse(request.body) as { cursor: string };
  const decoded = await decodeCursor(cursor, await cursorKeys(env as CursorKeySecrets, ORIGIN));
  if (!decoded.ok || 'upstream' in decoded.cursor) throw new Error(`cursor does not decode: ${cursor}`);
  return decoded.cursor;
}

export const subscriptionStub = (id: string): WebhookSubscriptionStub => webhookSubscription(env.MCP_WEBHOOKS, id);
export const objectOf = (id: string) => env.MCP_WEBHOOKS.get(env.MCP_WEBHOOKS.idFromName(id));

/** Rows the subscription's object has written since its instance opened its database (total_changes()). */
export const rowsWritten = (id: string) =>
  runInDurableObject(objectOf(id), (_instance, state) => state.storage.sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n);

export interface Made {
  readonly id: string;
  readonly stub: WebhookSubscriptionStub;
  readonly endpoint: string;
  /** The token notes must contain to match (the subscription's `contains`). */
  readonly tok: string;
  readonly result: { readonly cursor: string | null; readonly truncated: boolean; readonly refreshBefore: string | null };
  readonly ttl: TtlGrant;
}

export interface MakeOptions {
  readonly ttlMs?: number | null;
  readonly cursor?: EventCursor | null;
  readonly secret?: string;
  readonly tok?: string;
  /** demo.note unless told. */
  readonly log?: LogOf;
  /** `alice` unless told: a test that reads its metrics points tells them apart by their principal. */
  readonly principal?: string;
}

/** A subscription of `demo.note` notes containing a fresh token, delivered to a fresh endpoint. */
export async function subscribe(options: MakeOptions = {}): Promise<Made> {
  const tok = options.tok ?? `t${crypto.randomUUID().slice(0, 12)}`;
  const id = `sub_${crypto.randomUUID().replaceAll('-', '')}`;
  const endpoint = `e-${id}`;
  const stub = subscriptionStub(id);
  const ttl = grantTtl(options.ttlMs === undefined ? 600_000 : options.ttlMs, Date.now(), config.ttl);
  const answer = await stub.create({
    id,
    principal: options.principal ?? 'alice',
    grant: 'grant-1',
    name: (options.log ?? NOTE_LOG).type,
    args: { contains: tok },
    log: options.log ?? NOTE_LOG,
    url: hookUrl(endpoint),
    secret: options.secret ?? SECRET_A,
    ttl,
    cursor: options.cursor ?? null,
    verifiedAt: Date.now(),
    origin: ORIGIN,
    bindings: { logs: 'MCP_EVENTS', webhooks: 'MCP_WEBHOOKS' },
  });
  if (!('result' in answer)) throw new Error(`create refused: ${JSON.stringify(answer)}`);
  return { id, stub, endpoint, tok, result: answer.result, ttl };
}

/** Appends a note to demo.note's log (as post_note does); answers where it was stored. */
export async function note(text: string, log: LogOf = NOTE_LOG) {
  return eventLog(env.MCP_EVENTS, log).append(log, eventTypeOf(log).retention, { data: JSON.stringify({ text, n: text.length }) });
}

/**
 * Drops the subscription's row at its log, so the log no longer pokes it by itself: a test that
 * counts rows per batch then decides the batches with its own pokes.
 */
export async function detachFromLog(id: string, log: LogOf = NOTE_LOG): Promise<void> {
  await eventLog(env.MCP_EVENTS, log).removeSubscriber(log, id);
}

/** Pokes the subscription up to the log's head, as the log does after an append (no occurrences: it reads its pages). */
export async function pokeToHead(stub: WebhookSubscriptionStub, log: LogOf = NOTE_LOG) {
  const { logId, nextSeq } = await eventLog(env.MCP_EVENTS, log).read({
    ...log,
    retention: eventTypeOf(log).retention,
    cursor: null,
    limit: 1,
    maxBytes: 1,
  });
  return stub.poke({ logId, head: nextSeq, earliestSeq: 0 });
}
