/**
 * One webhook POST, judged: what a delivery attempt (or a verification POST) produced, as the
 * category the text lets the server say, and its answer's body read to a cap (MCP Events,
 * SEP-3415, *Webhook event delivery*, *Webhook delivery status*, *Webhook security*). Pure over
 * what the fetch produced, but for {@link readCapped}, which reads a real `Response`.
 *
 * Categories. "`lastError` MUST be a server-generated category string, one of
 * `connection_refused`, `timeout`, `tls_error`, `http_4xx`, `http_5xx` or `challenge_failed`. It
 * MUST NOT include raw response bodies, headers or status lines from the endpoint, so that it
 * cannot serve as a response oracle for attacker-chosen URLs." So every way an attempt can fail
 * lands in one of those five (the sixth is the handshake's, webhook-verification.ts):
 * - an answer: 2xx is delivered ("A `2xx` response … signals that the event has been accepted");
 *   5xx is `http_5xx`; everything else, a 3xx included, is `http_4xx` (webhook-retry.ts's
 *   `statusCategory`, the one mapping). A 3xx is an answer, never followed: "Webhook delivery
 *   requests MUST NOT follow HTTP redirects" (the fetch is made with `redirect: 'manual'`; a
 *   response that says it *was* redirected is that rule broken, a bug of ours, and throws
 *   {@link FollowedRedirectError} rather than count as a delivery to somewhere else). 410 and 413
 *   are failures too ("MUST treat `410` as a non-retryable failure", "MUST treat `413` as a
 *   non-retryable failure"): the `outcome` returned carries the status, and nextAttempt
 *   (webhook-retry.ts) declines or gives them up without retrying;
 * - no answer: our timer fired, `timeout` ("How long the server waits for the response before it
 *   treats the attempt as failed (`lastError: "timeout"`) … is a server implementation detail");
 *   a TLS failure (workerd words it `TLS peer's certificate is not trusted`, or as an opaque
 *   `internal error`), `tls_error` when the error says TLS, SSL or certificate; anything else
 *   (refused, reset, DNS, the runtime's refusal of a non-public address) `connection_refused`, the
 *   text's word for an unreachable endpoint, and the one that tells an attacker probing an
 *   internal name nothing.
 *
 * Bounds per attempt ({@link ATTEMPT_TIMEOUT_MS}, {@link MAX_RESPONSE_BYTES}): the receiver
 * chooses how slowly and how much it answers, so neither may be the Worker's problem. A delivery
 * never needs the answer's body (the status is the acknowledgement): {@link discardBody} cancels
 * it unread. The handshake needs `{"challenge":"<nonce>"}`, ~60 bytes: {@link readCapped} reads at
 * most the cap and cancels the rest, so a receiver cannot make the Worker hold a huge body.
 *
 * Left to neighbours: making the fetch (`redirect: 'manual'`, `AbortSignal.timeout`), what a
 * failure does next (webhook-retry.ts), the challenge's check (webhook-verification.ts).
 */
import type { CallbackFailure } from './events-wire.ts';
import { readBoundedBytes } from './bounded-body.ts';
import { type AttemptOutcome, statusCategory } from './webhook-retry.ts';

/**
 * How long one attempt may take, from the request to the last byte read: 10 s. The text: "A
 * timeout on the order of 5 seconds is common", and endpoints "SHOULD therefore respond quickly".
 * Twice that, because an attempt cut short after the receiver accepted the event is a duplicate
 * (and a handshake cut short fails the client's `events/subscribe`), and a serverless receiver's
 * cold start plus a TLS handshake can pass 5 s; not more, because the verification POST is made
 * inside the client's `events/subscribe` call, which waits for it, and a slow receiver holds a
 * delivery slot for as long. Waiting on a fetch costs wall time, not CPU.
 */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * The most of an answer's body the Worker reads: 64 KiB. The only body read is the handshake's,
 * `{"challenge":"<43 characters>"}`; 64 KiB leaves room for any framework's wrapping (whitespace,
 * extra members) a thousand times over, and is nothing beside a Worker's 128 MB even with every
 * attempt of a busy object reading one at once. Past it, the answer is not an echo.
 */
export const MAX_RESPONSE_BYTES = 65_536;

/** What the fetch produced: an answer's status, or what it threw; whether our timer fired. */
export interface AttemptObservation {
  /** The answer's status, when one came (a 3xx included: it is never followed). */
  readonly status?: number;
  /** What `fetch` (or reading the answer) threw, when it threw. It wins over a status: the attempt did not complete. */
  readonly error?: unknown;
  /** The attempt's timer ({@link ATTEMPT_TIMEOUT_MS}) fired before the attempt completed (a status already read included). */
  readonly timedOut: boolean;
  /** `Response.redirected`: true only if the fetch followed a redirect, which it must never do. */
  readonly redirected: boolean;
}

export interface AttemptClassification {
  /** `delivered` (2xx), or the category for `lastError` and `CallbackEndpointError`'s `data.reason` (never `challenge_failed`). */
  readonly verdict: 'delivered' | CallbackFailure;
  /** What nextAttempt (webhook-retry.ts) decides on: the status kept, so 410 and 413 stay unretried. */
  readonly outcome: AttemptOutcome;
}

/** A fetch followed a redirect: made without `redirect: 'manual'`, a bug of the caller's, never the receiver's. */
export class FollowedRedirectError extends Error {
  override readonly name = 'FollowedRedirectError';
  constructor() {
    super("a webhook fetch followed a redirect: it must be made with redirect: 'manual' (SEP-3415: MUST NOT follow HTTP redirects)");
  }
}

/** The category of one attempt. RangeError if it observed nothing, or a status no HTTP answer has. */
export function classifyAttempt(observation: AttemptObservation): AttemptClassification {
  const { status, error, timedOut, redirected } = observation;
  // "Webhook delivery requests MUST NOT follow HTTP redirects."
  if (redirected) throw new FollowedRedirectError();
  if (error === undefined && !timedOut) {
    if (status === undefined) throw new RangeError('an attempt observed neither an answer nor an error');
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new RangeError(`not an HTTP status: ${status}`);
    const outcome: AttemptOutcome = { kind: 'response', status };
    return { verdict: status >= 200 && status < 300 ? 'delivered' : statusCategory(status), outcome };
  }
  const reason = unreachableCategory(error, timedOut);
  return { verdict: reason, outcome: { kind: 'unreachable', reason } };
}

/** No (whole) answer: our timer, TLS, or the endpoint unreachable. The error's words choose, and never leave the server. */
function unreachableCategory(error: unknown, timedOut: boolean): 'timeout' | 'tls_error' | 'connection_refused' {
  if (timedOut || (error instanceof Error && error.name === 'TimeoutError')) return 'timeout';
  const message = error instanceof Error ? error.message : String(error);
  return /\b(tls|ssl|certificates?)\b/i.test(message) ? 'tls_error' : 'connection_refused';
}

/** An answer's body as read: whole (at most the cap), or past the cap (the rest cancelled, unread). */
export type CappedBody = { readonly kind: 'whole'; readonly bytes: Uint8Array } | { readonly kind: 'over_cap' };

/**
 * Reads `response`'s body up to `maxBytes` ({@link MAX_RESPONSE_BYTES} unless told): the bytes
 * when it ends within the cap, else `over_cap`, once a chunk passes it, the stream cancelled
 * there, so a receiver cannot make the Worker hold (or wait for) more. A read that fails (the
 * connection lost, the attempt's signal aborted) rejects: the caller classifies it as an error.
 */
export async function readCapped(response: Response, maxBytes: number = MAX_RESPONSE_BYTES): Promise<CappedBody> {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`a byte cap is a whole number ≥ 0, got ${maxBytes}`);
  const bytes = await readBoundedBytes(response.body, maxBytes);
  return bytes === undefined ? { kind: 'over_cap' } : { kind: 'whole', bytes };
}

/** Cancels an answer's body unread: a delivery's status is its acknowledgement, its body nothing the server needs. */
export async function discardBody(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}
