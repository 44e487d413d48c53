/**
 * The verification handshake of `events/subscribe`, made from the Worker before anything about
 * the subscription is written anywhere (MCP Events, SEP-3415, *Webhook security*, "Endpoint
 * verification (anti-flooding)"): "a server therefore MUST NOT begin delivering to a callback URL
 * until the endpoint's intent to receive deliveries is confirmed". One POST of a `verification`
 * envelope carrying a fresh challenge (core/webhook-verification.ts: 32 random bytes, held only
 * in this request's memory — "single-use", spent by its one check — and "short-lived": it
 * expires with the attempt's timeout, WEBHOOK_ATTEMPT_TIMEOUT_MS, since its own response answers
 * it), signed under the subscription's new secret, with `webhook-id: msg_verification_<random>`
 * and `X-MCP-Subscription-Id` the derived id: "signed and headed like any delivery". The POST is
 * webhook-post.ts's, the one every webhook POST is: the URL checked again, `redirect: 'manual'`
 * (a 3xx is the answer, never followed: no request reaches its Location), bounded in time and in
 * what it reads.
 *
 * The verdict: verified only on a 2xx whose JSON body echoes the challenge ("compares in
 * constant time"); any other answer — a wrong echo, a non-2xx, a 3xx, a body over the cap or not
 * JSON — is `challenge_failed` ("A reachable endpoint that fails to echo the challenge yields
 * CallbackEndpointError with data.reason: "challenge_failed""); no answer is the connection's
 * category, `connection_refused`, `timeout` or `tls_error` ("An unreachable one yields the same
 * error with the relevant connection-failure category"). The endpoint's words never leave: the
 * category is all the client is told.
 *
 * Rate-limited per destination host ("SHOULD be rate-limited per destination host"), so that a
 * server cannot be made to knock on one victim's door faster than the bound, whoever asks:
 * through the Worker's rate-limit binding where it has one (key `whverify:<host>`: every
 * isolate counts together), else an isolate-local window of {@link VERIFICATIONS_PER_HOST} per
 * minute. Past it nothing is sent and the subscribe is answered ResourceExhausted `{limit:
 * "webhook_verifications"}`, not CallbackEndpointError: the endpoint did nothing wrong and none of
 * the `lastError` categories is true of it; what ran out is the server's budget, and a client
 * told ResourceExhausted waits and tries again instead of suspecting its receiver.
 *
 * Writes nothing: no row anywhere, whatever the verdict (the caller writes the verification with
 * the holding, once verified). Left to neighbours: whether a handshake is needed at all (the
 * registry's cache per (principal, url), principals/), and what follows it (webhook-methods.ts).
 */
import type { CallbackFailure } from '../core/events-wire.ts';
import type { WebhookVerificationOutcome } from '../core/metrics.ts';
import { checkChallengeAnswer, type ChallengeRefusal, VerificationChallenge } from '../core/webhook-verification.ts';
import type { CallbackUrlPolicy, CallbackUrlRefusal } from '../core/webhook-url.ts';
import { postWebhook } from './webhook-post.ts';

/** Verifications one isolate sends to one host per minute, where the Worker has no rate-limit binding. */
export const VERIFICATIONS_PER_HOST = 10;
const WINDOW_MS = 60_000;
/** Hosts one isolate tracks at most; past it the oldest windows are dropped (an attacker's many hosts cost memory, bounded). */
const MAX_TRACKED_HOSTS = 10_000;

export interface Handshake {
  readonly url: string;
  readonly policy: CallbackUrlPolicy;
  /** The derived `sub_…` id: `X-MCP-Subscription-Id`. */
  readonly subscriptionId: string;
  /** The subscription's new `whsec_` secret, checked by the params' parser. */
  readonly secret: string;
  readonly timeoutMs: number;
  readonly now?: () => number;
}

export type HandshakeResult =
  | { readonly verified: true }
  /** `why`: for the server's log, never the wire (the challenge check's reason, or how the POST failed). */
  | { readonly verified: false; readonly reason: CallbackFailure; readonly why: ChallengeRefusal | 'unreachable' }
  /** The URL no longer passes the callback policy (it changed since the params were parsed): nothing was sent. */
  | { readonly verified: false; readonly refused: CallbackUrlRefusal };

/** One verification POST and its verdict. Sends exactly one request, or none when the URL is refused. */
export async function verifyEndpoint(handshake: Handshake): Promise<HandshakeResult> {
  const now = handshake.now ?? Date.now;
  const challenge = VerificationChallenge.issue(now(), handshake.timeoutMs);
  const { id, body } = challenge.message();
  const posted = await postWebhook({
    url: handshake.url,
    policy: handshake.policy,
    subscriptionId: handshake.subscriptionId,
    webhookId: id,
    body,
    secrets: [handshake.secret],
    timeoutMs: handshake.timeoutMs,
    readBody: true,
    now,
  });
  if (!posted.sent) return { verified: false, refused: posted.refusal };
  const { classification, status, body: answer } = posted;
  // No whole answer (refused, timed out, TLS, or the body's read failed): the connection's category.
  if (classification.outcome.kind === 'unreachable' || status === undefined || answer === undefined) {
    const reason = classification.verdict === 'delivered' ? 'connection_refused' : classification.verdict;
    return { verified: false, reason, why: 'unreachable' };
  }
  const checked = checkChallengeAnswer(challenge, status, answer, now());
  return checked.ok ? { verified: true } : { verified: false, reason: checked.reason, why: checked.why };
}

/**
 * A handshake's `webhook_verification` outcome (core/metrics.ts): `verified`, or its failure's
 * category; none for a URL the policy refused, to which nothing was sent.
 */
export function verificationOutcome(result: HandshakeResult): WebhookVerificationOutcome | undefined {
  if (result.verified) return 'verified';
  return 'reason' in result ? result.reason : undefined;
}

/** The limiter the Worker has, if any: a Workers Rate Limiting binding. */
export interface HostLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

const windows = new Map<string, { readonly startedAt: number; count: number }>();

/**
 * Whether one more verification may be sent to `url`'s host now: through `limiter` (key
 * `whverify:<host>`) when the Worker has one, else this isolate's window. Counts the one asked
 * for when it answers true.
 */
export async function mayVerify(url: string, limiter: HostLimiter | undefined, now: number = Date.now()): Promise<boolean> {
  const host = new URL(url).hostname;
  if (limiter !== undefined) return (await limiter.limit({ key: `whverify:${host}` })).success;
  let window = windows.get(host);
  if (window === undefined || now - window.startedAt >= WINDOW_MS || now < window.startedAt) {
    windows.delete(host);
    if (windows.size >= MAX_TRACKED_HOSTS) windows.delete(windows.keys().next().value!);
    window = { startedAt: now, count: 0 };
    windows.set(host, window);
  }
  if (window.count >= VERIFICATIONS_PER_HOST) return false;
  window.count += 1;
  return true;
}
