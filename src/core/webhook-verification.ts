/**
 * The verification handshake's pure parts: the challenge, the envelope that carries it, the check
 * of the answer, and whether a cached verification still holds (MCP Events, SEP-3415, *Webhook
 * security*, "Endpoint verification (anti-flooding)"). The text: "a server therefore MUST NOT
 * begin delivering to a callback URL until the endpoint's intent to receive deliveries is
 * confirmed", here by "A verification handshake. Before activating, the server POSTs a
 * `verification` control envelope that carries a single-use, short-lived `challenge` nonce,
 * signed and headed like any delivery. The endpoint proves intent by echoing the nonce in a `2xx`
 * body (`{"challenge":"<nonce>"}`), which the server compares in constant time."
 *
 * The challenge: 256 random bits, base64url (43 characters), minted per POST (a retried
 * handshake mints a new one). Short-lived: it lives as long as the attempt that carries it
 * ({@link CHALLENGE_TTL_MS}), since it is answered in that POST's own response. Single-use: the
 * first check spends it, whatever it finds; a second check fails.
 *
 * The answer: a 2xx whose body, read to webhook-attempt.ts's cap, is a JSON object whose
 * `challenge` member equals the nonce, compared in constant time. An object that also carries
 * the envelope's `type` is refused: it is what an endpoint that reflects any JSON it is sent
 * (an echo service, a debugging bin) answers, which proves no intent. "A reachable endpoint that
 * fails to echo the challenge yields `CallbackEndpointError` with `data.reason:
 * "challenge_failed"`" — every failure of an endpoint that answered, a non-2xx and a redirect
 * included ("Failures surface only through the `lastError` category `challenge_failed`, and
 * never through raw endpoint responses"); "An unreachable one yields the same error with the
 * relevant connection-failure category" (webhook-attempt.ts's classifyAttempt). An answer after
 * the challenge expired is a `timeout`.
 *
 * The cache: "Verification is cached per `(principal, url)`" (webhook-subscription-key.ts's
 * verificationScopeText is the key) … "The cache is in-memory, TTL-scoped soft state like the
 * subscription itself". The text gives no TTL: {@link VERIFICATION_TTL_MS} is a day, the longest
 * finite grant of DEFAULT_TTL_POLICY, so a URL is proved again at least daily by a subscribe
 * that needs it. The cache decides only whether a subscribe sends a challenge; an activated
 * subscription's deliveries never consult it ("A persisted subscription resumes delivery without
 * a resubscribe"; the store persists the verification of no-expiry subscriptions with them).
 *
 * Left to neighbours: signing the envelope (webhook-signature.ts's webhookHeaders), the fetch and
 * its bounds (webhook-attempt.ts), rate-limiting challenges per destination host ("SHOULD be
 * rate-limited per destination host"), and the store.
 */
import { randomBase64Url } from './base64url.ts';
import { controlWebhookId, verificationEnvelope } from './events-webhook-wire.ts';
import type { CallbackFailure } from './events-wire.ts';
import { ATTEMPT_TIMEOUT_MS, type CappedBody } from './webhook-attempt.ts';

/** Random bytes in a challenge: 256 bits (the text asks a nonce; 128 bits would do, 256 costs nothing). */
export const CHALLENGE_BYTES = 32;
/** A challenge's life: the attempt that carries it, whose response answers it. */
export const CHALLENGE_TTL_MS = ATTEMPT_TIMEOUT_MS;
/** How long a verification of `(principal, url)` spares further challenges: a day (ours; the text gives none). */
export const VERIFICATION_TTL_MS = 86_400_000;

/** A challenge sent: its nonce and expiry, and whether an answer has been checked against it. */
export class VerificationChallenge {
  #spent = false;

  private constructor(
    readonly value: string,
    readonly issuedAt: number,
    readonly expiresAt: number,
  ) {}

  /** A new challenge from the CSPRNG, issued at `now`, expiring `ttlMs` later. */
  static issue(now: number, ttlMs: number = CHALLENGE_TTL_MS): VerificationChallenge {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new RangeError(`a challenge lives a positive whole number of ms, got ${ttlMs}`);
    return new VerificationChallenge(randomBase64Url(CHALLENGE_BYTES), now, now + ttlMs);
  }

  get spent(): boolean {
    return this.#spent;
  }

  /** Spends the challenge: true the first time, false ever after. */
  spend(): boolean {
    const fresh = !this.#spent;
    this.#spent = true;
    return fresh;
  }

  /** The POST's `webhook-id` and body, to sign and send. */
  message(): { readonly id: string; readonly body: string } {
    const envelope = verificationEnvelope(this.value);
    return { id: controlWebhookId(envelope.type), body: JSON.stringify(envelope) };
  }
}

/**
 * Why an answer does not verify (for the server's log and tests; the wire says only `reason`):
 * the challenge already `spent` or `expired`; a `status` not 2xx; a body `over_cap`, `not_json`
 * (not UTF-8 JSON, or not an object), with `no_challenge` (no string member), `reflected` (it
 * carries the envelope's `type`), or a challenge that is not the one sent (`mismatch`).
 */
export type ChallengeRefusal = 'spent' | 'expired' | 'status' | 'over_cap' | 'not_json' | 'no_challenge' | 'reflected' | 'mismatch';

export type ChallengeCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: Extract<CallbackFailure, 'challenge_failed' | 'timeout'>; readonly why: ChallengeRefusal };

/**
 * Whether the verification POST's answer proves the endpoint's intent: a 2xx echoing `expected`
 * in `{"challenge":"<nonce>"}`, checked once ("single-use") and before `expected` expires
 * ("short-lived"), the nonce "compare[d] in constant time". `now` is when the answer was read.
 */
export function checkChallengeAnswer(
  expected: VerificationChallenge,
  responseStatus: number,
  responseBody: CappedBody,
  now: number,
): ChallengeCheck {
  if (!expected.spend()) return failed('spent');
  if (now >= expected.expiresAt || now < expected.issuedAt) return { ok: false, reason: 'timeout', why: 'expired' };
  if (responseStatus < 200 || responseStatus > 299) return failed('status');
  if (responseBody.kind === 'over_cap') return failed('over_cap');
  let answer: unknown;
  try {
    answer = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(responseBody.bytes));
  } catch {
    return failed('not_json');
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return failed('not_json');
  const { challenge } = answer as { challenge?: unknown };
  if (typeof challenge !== 'string') return failed('no_challenge');
  if (Object.hasOwn(answer, 'type')) return failed('reflected');
  return sameInConstantTime(challenge, expected.value) ? { ok: true } : failed('mismatch');
}

/**
 * Whether two texts are equal, in time that depends on the expected one's length only (public:
 * every challenge has 43 characters), never on where they first differ. An answer of another
 * length is compared in full all the same, and fails.
 */
export function sameInConstantTime(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let difference = a.byteLength ^ b.byteLength;
  for (let i = 0; i < b.byteLength; i++) difference |= (a[i] ?? 0) ^ b[i]!;
  return difference === 0;
}

/** A verification of `(principal, url)`, as the cache holds it. */
export interface VerificationEntry {
  /** When the handshake succeeded. */
  readonly verifiedAt: number;
}

/**
 * Whether a cached verification spares this subscribe a challenge: held, and less than `ttlMs`
 * old. An entry from the future (a clock that went back) is not current: the challenge is sent
 * again, the safe side.
 */
export function verificationCurrent(entry: VerificationEntry | undefined, now: number, ttlMs: number = VERIFICATION_TTL_MS): boolean {
  if (entry === undefined) return false;
  return entry.verifiedAt <= now && now < entry.verifiedAt + ttlMs;
}

const failed = (why: ChallengeRefusal): ChallengeCheck => ({ ok: false, reason: 'challenge_failed', why });
