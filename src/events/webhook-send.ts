/**
 * One attempt of a subscription's POST, as its record dictates (docs/events.md, *Webhooks*): the
 * URL re-checked under the policy of now (WEBHOOK_DEV_ORIGINS as configured, the Worker's origin
 * the subscription was made at), signed under the current secret and, while a rotation's grace
 * lasts, the replaced one too ("SHOULD dual-sign … for a short grace window"), and reduced to what
 * core/webhook-retry.ts judges: an AttemptOutcome. The POST itself (no redirects, a timeout, a
 * fresh timestamp and signature per attempt: "Each retry attempt MUST regenerate the timestamp and
 * signature") is webhook-post.ts's; what the outcome leads to is webhook-delivery.ts's.
 *
 * Also the sealing of the subscription's position as a log cursor (`[1, type, partition, logId,
 * next]`): a webhook's cursor is the same position a poll's is, so a client can move between modes.
 */
import { type CursorKeys, mintCursor } from '../core/event-cursor.ts';
import type { AttemptOutcome } from '../core/webhook-retry.ts';
import { postWebhook } from './webhook-post.ts';
import type { WebhookConfig } from './webhook-config.ts';
import type { SubscriptionRecord } from './webhook-store.ts';

/** The secrets a POST is signed under at `now`: the current, and the replaced one until its grace ends. */
export function signingSecrets(record: SubscriptionRecord, now: number): string[] {
  const { secret, previousSecret, previousUntil } = record;
  return previousSecret !== null && previousUntil !== null && now < previousUntil ? [secret, previousSecret] : [secret];
}

/**
 * POSTs `body` with `webhook-id` `webhookId` to the subscription's URL. A URL the policy no longer
 * allows sends nothing and counts as a failed attempt (`connection_refused`: the endpoint cannot
 * be reached from here), so it is retried, then given up or suspended, as an unreachable one is.
 */
export async function sendAttempt(
  record: SubscriptionRecord,
  config: WebhookConfig,
  webhookId: string,
  body: string,
): Promise<AttemptOutcome> {
  const result = await postWebhook({
    url: record.url,
    policy: { devOrigins: config.devOrigins, serverOrigin: record.origin },
    subscriptionId: record.id,
    webhookId,
    body,
    secrets: signingSecrets(record, Date.now()),
    timeoutMs: config.attemptTimeoutMs,
  });
  return result.sent ? result.classification.outcome : { kind: 'unreachable', reason: 'connection_refused' };
}

/** The subscription's position `next` as a cursor of its log. */
export function sealPosition(keys: CursorKeys, record: SubscriptionRecord, next: number): Promise<string> {
  return mintCursor({ type: record.name, partition: record.partition, logId: record.logId, next }, keys);
}
