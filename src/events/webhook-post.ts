/**
 * One webhook POST (MCP Events, SEP-3415, *Webhook event delivery*, *Webhook security*): a
 * delivery, a control envelope or the verification handshake, made the one way all three must be.
 * The URL is checked again before every attempt (core/webhook-url.ts: the policy may have changed
 * since the subscription was made — WEBHOOK_DEV_ORIGINS removed, the Worker moved off loopback);
 * the body is signed afresh — "Each retry attempt MUST regenerate the timestamp and signature" —
 * under the current secret and, during a rotation's grace window, the replaced one too
 * ("SHOULD dual-sign … for a short grace window"); redirects are never followed ("Webhook
 * delivery requests MUST NOT follow HTTP redirects": `redirect: 'manual'`, a 3xx is the answer);
 * the attempt is bounded in time (one AbortSignal over the request and the body's read) and in
 * what it reads (core/webhook-attempt.ts). In production the runtime's
 * `global_fetch_strictly_public` keeps the fetch itself off non-public addresses whatever a name
 * resolves to; a literal or `localhost` is refused here before any fetch.
 *
 * Judging what came back is core/webhook-attempt.ts's; what a failure does next,
 * core/webhook-retry.ts's; a challenge's answer, core/webhook-verification.ts's.
 */
import { type AttemptClassification, type CappedBody, classifyAttempt, discardBody, readCapped } from '../core/webhook-attempt.ts';
import { webhookRequestHeaders, WEBHOOK_METHOD } from '../core/events-webhook-wire.ts';
import { parseWebhookSecret, webhookHeaders } from '../core/webhook-signature.ts';
import { type CallbackUrlPolicy, type CallbackUrlRefusal, checkCallbackUrl } from '../core/webhook-url.ts';

export interface WebhookPost {
  readonly url: string;
  readonly policy: CallbackUrlPolicy;
  readonly subscriptionId: string;
  /** `webhook-id`: the occurrence's `eventId`, or a control envelope's `msg_<type>_<random>`, the same on every attempt. */
  readonly webhookId: string;
  /** The JSON text sent: exactly the bytes signed. */
  readonly body: string;
  /** `whsec_` secrets, the current first; two during a rotation's grace window. */
  readonly secrets: readonly string[];
  readonly timeoutMs: number;
  /** Read the answer's body (to MAX_RESPONSE_BYTES): only the handshake needs it; a delivery's is cancelled unread. */
  readonly readBody?: boolean;
  /** The clock (ms): the signature's timestamp. */
  readonly now?: () => number;
}

export type WebhookPostResult =
  /** The POST was made: how it ended, the answer's status when one came, its body when asked for and read. */
  | { readonly sent: true; readonly classification: AttemptClassification; readonly status?: number; readonly body?: CappedBody }
  /** The URL is no longer one the policy allows: nothing was sent. */
  | { readonly sent: false; readonly refusal: CallbackUrlRefusal };

export async function postWebhook(post: WebhookPost): Promise<WebhookPostResult> {
  const checked = checkCallbackUrl(post.url, post.policy);
  if (!checked.ok) return { sent: false, refusal: checked.reason };
  const secrets = post.secrets.map((text) => {
    const parsed = parseWebhookSecret(text);
    // Stored only after parseWebhookSecret accepted it (events/subscribe): a refusal here is a bug, not a receiver's doing.
    if (!parsed.ok) throw new TypeError(`a stored webhook secret does not parse (${parsed.reason})`);
    return parsed.key;
  });
  const now = post.now ?? Date.now;
  const signed = await webhookHeaders({ secrets, id: post.webhookId, timestamp: Math.floor(now() / 1000), body: post.body });
  const signal = AbortSignal.timeout(post.timeoutMs);
  let response: Response;
  try {
    response = await fetch(checked.url.href, {
      method: WEBHOOK_METHOD,
      headers: webhookRequestHeaders(post.subscriptionId, signed),
      body: post.body,
      redirect: 'manual',
      signal,
    });
  } catch (error) {
    return { sent: true, classification: classifyAttempt({ error, timedOut: signal.aborted, redirected: false }) };
  }
  const observed = { status: response.status, timedOut: false, redirected: response.redirected };
  if (post.readBody !== true) {
    await discardBody(response);
    return { sent: true, classification: classifyAttempt(observed), status: response.status };
  }
  try {
    const body = await readCapped(response);
    return { sent: true, classification: classifyAttempt(observed), status: response.status, body };
  } catch (error) {
    return { sent: true, classification: classifyAttempt({ ...observed, error, timedOut: signal.aborted }), status: response.status };
  }
}
