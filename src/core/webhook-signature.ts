/**
 * Standard Webhooks signatures for MCP Events webhooks (SEP-3415, *Webhook security*: "MCP webhook
 * delivery is a profile of Standard Webhooks"): the `whsec_` secret, the three headers a delivery
 * carries, and their verification. One module for both sides: the server signs every attempt, the
 * client (`mcp-edge-sessions/client`) verifies a delivery. Pure but for Web Crypto; no storage,
 * no fetch, no clock it does not take as an argument.
 *
 * Why Web Crypto and not the `standardwebhooks` package (1.3.0, read from its tarball, the spec
 * authors' JS library): it runs in workerd (pure JS, synchronous, no Node crypto), but
 * - it would be this package's first runtime dependency, and a client one too (the receiver
 *   verifies), with two more beneath it (`@stablelib/base64`, `fast-sha256`), CommonJS only;
 * - its `verify` reads `Date.now()` itself, with the 5-minute tolerance fixed, takes one secret
 *   (rotation means two instances and two exceptions), and reports by throwing messages, where
 *   this project wants an injected clock and typed reasons; its secret check is "not empty", where
 *   the SEP says 24 to 64 bytes; so we would wrap everything but `sign`;
 * - `sign` is HMAC-SHA256 over `${id}.${timestamp}.` + body, base64: the primitive is the
 *   platform's (`crypto.subtle`, native in workerd, Node and browsers), not re-derived here; what
 *   this file composes is the message and the header format, checked byte for byte against the
 *   library's published vector and vectors computed with the library itself
 *   (test/core/webhook-signature.test.ts).
 *
 * What it leaves to neighbours: which secrets sign (the subscription's current one, and the one it
 * replaced during the grace window: SEP "SHOULD dual-sign"), `X-MCP-Subscription-Id`, the
 * challenge echo of the `verification` envelope, deduplication by `webhook-id`, and what a refusal
 * becomes (`-32602` for a bad `delivery.secret`; a 4xx for a delivery that does not verify). The
 * header names are the wire's (events-wire.ts, with every other name of the extension).
 */
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './events-wire.ts';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** SEP-3415: "`whsec_` followed by base64 that decodes to 24 to 64 bytes". */
export const MIN_WEBHOOK_SECRET_BYTES = 24;
export const MAX_WEBHOOK_SECRET_BYTES = 64;
/** SEP-3415: "The receiver SHOULD reject deliveries whose `webhook-timestamp` is more than 5 minutes old." */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The longest base64 text of MAX_WEBHOOK_SECRET_BYTES: anything longer is refused before decoding. */
const MAX_SECRET_BASE64_LENGTH = Math.ceil(MAX_WEBHOOK_SECRET_BYTES / 3) * 4;
const SIGNATURE_VERSION = 'v1';
/** base64 of a SHA-256 MAC: 32 bytes, 44 characters. */
const SIGNATURE_BASE64_LENGTH = 44;

/** Why a text is not a `whsec_` secret. */
export type WebhookSecretRefusal = 'not_a_string' | 'missing_prefix' | 'not_base64' | 'too_short' | 'too_long';

export type ParsedWebhookSecret =
  | { readonly ok: true; readonly key: Uint8Array }
  | { readonly ok: false; readonly reason: WebhookSecretRefusal };

/**
 * The key bytes of a Standard Webhooks symmetric secret, or why `text` is not one. SEP-3415:
 * "Servers MUST reject a `delivery.secret` that is not `whsec_` followed by base64 that decodes
 * to 24 to 64 bytes" (the caller answers `InvalidParams`). The prefix is case-sensitive, and the
 * base64 is RFC 4648's standard alphabet with its padding, in its one canonical spelling (no
 * whitespace, no URL-safe alphabet, no stray bits): what Standard Webhooks libraries and secret
 * generators emit, and what the strict decoders (Go's, Python's) read, so a secret we accept
 * verifies at any receiver. Text longer than the longest 64-byte secret is `too_long` unread.
 */
export function parseWebhookSecret(text: unknown): ParsedWebhookSecret {
  if (typeof text !== 'string') return { ok: false, reason: 'not_a_string' };
  if (!text.startsWith(WEBHOOK_SECRET_PREFIX)) return { ok: false, reason: 'missing_prefix' };
  const encoded = text.slice(WEBHOOK_SECRET_PREFIX.length);
  if (encoded.length > MAX_SECRET_BASE64_LENGTH) return { ok: false, reason: 'too_long' };
  const key = fromBase64(encoded);
  if (key === undefined) return { ok: false, reason: 'not_base64' };
  if (key.byteLength < MIN_WEBHOOK_SECRET_BYTES) return { ok: false, reason: 'too_short' };
  if (key.byteLength > MAX_WEBHOOK_SECRET_BYTES) return { ok: false, reason: 'too_long' };
  return { ok: true, key };
}

/**
 * A new secret from the CSPRNG, `whsec_` and the base64 of `byteLength` random bytes (32 unless
 * told). SEP-3415: "Client SDKs SHOULD generate it from a CSPRNG by default."
 */
export function newWebhookSecret(byteLength = 32): string {
  if (!Number.isInteger(byteLength) || byteLength < MIN_WEBHOOK_SECRET_BYTES || byteLength > MAX_WEBHOOK_SECRET_BYTES) {
    throw new RangeError(`a webhook secret has ${MIN_WEBHOOK_SECRET_BYTES} to ${MAX_WEBHOOK_SECRET_BYTES} bytes`);
  }
  return WEBHOOK_SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** A delivery's body as sent or received: text (signed as its UTF-8) or the raw bytes. */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

/**
 * Whether `id` can be a `webhook-id`: 1 to 256 visible ASCII characters (a header value as it is,
 * no space, which separates nothing here but would be trimmed by some stacks) and no `.`.
 * Standard Webhooks: the id and timestamp must "not be allowed to include any `.`", or
 * `{id}.{timestamp}.{body}` could be read with the dots in other places. An author's `eventId`
 * that fails this cannot be the `webhook-id` as it is (the delivery layer decides what it uses).
 */
export function isWebhookId(id: string): boolean {
  return id.length > 0 && id.length <= 256 && /^[\x21-\x2d\x2f-\x7e]+$/.test(id);
}

export interface SignWebhookInput {
  /** Key bytes, as parseWebhookSecret gives them. */
  readonly secret: Uint8Array;
  /** The `webhook-id`: the occurrence's `eventId`, or `msg_<type>_<random>` for a control envelope. */
  readonly id: string;
  /** The attempt's Unix time in whole seconds: "Each retry attempt MUST regenerate the timestamp and signature." */
  readonly timestamp: number;
  /** Exactly the bytes the POST sends. */
  readonly body: WebhookBody;
}

/**
 * The signature of one attempt under one secret, `v1,<base64>`. SEP-3415: "The signature is
 * `HMAC-SHA256(secret, webhook-id + "." + webhook-timestamp + "." + body)`, encoded as base64 with
 * a `v1,` prefix". Throws RangeError for an id isWebhookId refuses or a timestamp that is not a
 * non-negative whole number of seconds: the caller's mistakes, never a delivery's.
 */
export async function signWebhook({ secret, id, timestamp, body }: SignWebhookInput): Promise<string> {
  if (!isWebhookId(id)) throw new RangeError('a webhook-id is 1 to 256 visible ASCII characters without "."');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError('a webhook-timestamp is whole seconds since the epoch');
  return `${SIGNATURE_VERSION},${await macBase64(secret, signedContent(id, timestamp, bytesOf(body)))}`;
}

/** A type, not an interface, so that it passes where a header record is taken (verifyWebhook, `fetch`). */
export type WebhookHeaders = {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
};

/**
 * The three Standard Webhooks headers of one attempt, signed under each of `secrets` in order,
 * space-separated: "The header MAY contain several space-delimited signatures (`v1,<sigA>
 * v1,<sigB>`) during secret rotation." Pass the current secret, and the replaced one during its
 * grace window.
 */
export async function webhookHeaders(input: {
  readonly secrets: readonly Uint8Array[];
  readonly id: string;
  readonly timestamp: number;
  readonly body: WebhookBody;
}): Promise<WebhookHeaders> {
  if (input.secrets.length === 0) throw new RangeError('webhookHeaders needs at least one secret');
  const { id, timestamp, body } = input;
  const signatures = await Promise.all(input.secrets.map((secret) => signWebhook({ secret, id, timestamp, body })));
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: signatures.join(' '),
  };
}

/** Why a delivery does not verify. */
export type WebhookRefusal =
  /** One of the three headers is absent or empty. */
  | 'missing_headers'
  /** `webhook-timestamp` is not a whole number of seconds in canonical decimal. */
  | 'malformed_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  /** No `v1,` signature in the header verifies under any of the secrets. */
  | 'bad_signature';

export type VerifiedWebhook =
  | { readonly ok: true; readonly id: string; readonly timestamp: number }
  | { readonly ok: false; readonly reason: WebhookRefusal };

/** Request headers: a `Headers`, or a plain record (its names compared without case). */
export type WebhookHeaderSource = Headers | Readonly<Record<string, string | undefined>>;

export interface VerifyWebhookInput {
  /** The current secret's key, and the previous one while the receiver rotates: any may verify. */
  readonly secrets: readonly Uint8Array[];
  readonly headers: WebhookHeaderSource;
  /** The raw body "exactly as received, before any parsing or re-serialization". */
  readonly body: WebhookBody;
  /** Now, in milliseconds since the epoch (Date.now() unless given). */
  readonly now?: number;
  /** How far `webhook-timestamp` may lie from now, either way, in seconds. */
  readonly toleranceSeconds?: number;
}

/**
 * Verifies a delivery: its id and timestamp (returned for deduplication) when a `v1,` signature
 * among the header's space-separated ones is the MAC of this body under one of `secrets`; else
 * why not. SEP-3415: "The receiver MUST verify the signature before processing, SHOULD reject
 * deliveries whose `webhook-timestamp` is more than 5 minutes old" — and, as Standard Webhooks
 * does, as far in the future. The window is checked first (it needs no MAC); signatures of
 * other schemes (`v1a,`, ed25519, "Endpoints that do not enforce server identity ignore `v1a,`")
 * are skipped. The MAC is computed once per secret and compared to each candidate in constant
 * time ("use a constant time comparison function"), so a header of many signatures costs no
 * more MACs.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<VerifiedWebhook> {
  const { secrets, headers, body, now = Date.now(), toleranceSeconds = DEFAULT_TOLERANCE_SECONDS } = input;
  if (secrets.length === 0) throw new RangeError('verifyWebhook needs at least one secret');
  if (!Number.isSafeInteger(toleranceSeconds) || toleranceSeconds < 0) throw new RangeError('toleranceSeconds is a whole number ≥ 0');
  const id = headerOf(headers, WEBHOOK_ID_HEADER);
  const timestampText = headerOf(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatureHeader = headerOf(headers, WEBHOOK_SIGNATURE_HEADER);
  if (!id || !timestampText || !signatureHeader) return { ok: false, reason: 'missing_headers' };
  const timestamp = /^(0|[1-9][0-9]{0,14})$/.test(timestampText) ? Number(timestampText) : undefined;
  if (timestamp === undefined) return { ok: false, reason: 'malformed_timestamp' };
  const nowSeconds = Math.floor(now / 1000);
  if (nowSeconds - timestamp > toleranceSeconds) return { ok: false, reason: 'timestamp_too_old' };
  if (timestamp - nowSeconds > toleranceSeconds) return { ok: false, reason: 'timestamp_too_new' };
  const candidates = signatureHeader
    .split(' ')
    .filter((entry) => entry.startsWith(`${SIGNATURE_VERSION},`))
    .map((entry) => entry.slice(SIGNATURE_VERSION.length + 1))
    .filter((value) => value.length === SIGNATURE_BASE64_LENGTH);
  if (candidates.length === 0) return { ok: false, reason: 'bad_signature' };
  const content = signedContent(id, timestamp, bytesOf(body));
  let verified = false;
  for (const secret of secrets) {
    const expected = await macBase64(secret, content);
    for (const candidate of candidates) if (equalInConstantTime(candidate, expected)) verified = true;
  }
  return verified ? { ok: true, id, timestamp } : { ok: false, reason: 'bad_signature' };
}

/** `${id}.${timestamp}.` in UTF-8, then the body's bytes ("The prefix is UTF-8"). */
function signedContent(id: string, timestamp: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.byteLength + body.byteLength);
  content.set(prefix);
  content.set(body, prefix.byteLength);
  return content;
}

async function macBase64(secret: Uint8Array, content: Uint8Array<ArrayBuffer>): Promise<string> {
  if (secret.byteLength === 0) throw new RangeError('an empty webhook secret');
  const key = await crypto.subtle.importKey('raw', new Uint8Array(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', key, content)));
}

function bytesOf(body: WebhookBody): Uint8Array {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/** Two strings of equal length compared without an early exit (lengths are public: 44 for every v1 MAC). */
function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function headerOf(headers: WebhookHeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The bytes of canonical padded standard base64, else undefined (atob is lenient; the round trip is not). */
function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  try {
    const binary = atob(text);
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    return toBase64(bytes) === text ? bytes : undefined;
  } catch {
    return undefined;
  }
}
