/**
 * Who a webhook subscription is, and how long it lives: the pure part of `events/subscribe` and
 * `events/unsubscribe` (MCP Events, SEP-3415, *Subscription identity* and *Subscription TTL*).
 *
 * Identity. "The subscription key is `(principal, delivery.url, name, arguments)` … `arguments`
 * is compared by canonical-JSON equality. There is no client-generated `id`." The server "computes
 * a deterministic `id` over the key, for example a truncated SHA-256 of the canonical key
 * serialization"; it is "stable across refreshes and server restarts", "a routing handle and not
 * a capability". Here the serialization is the canonical JSON (below) of
 * `["mcp-webhook-subscription", principal, url, name, arguments]` — an array, so no component can
 * bleed into the next — and the `id` is `sub_` and the first 16 bytes of its SHA-256 in hex: 128
 * bits, not the SEP example's 64, because a store may name the subscription's object by it, and
 * two keys sharing an object would share a subscription across tenants.
 *
 * The URL is keyed as WHATWG URL serializes it (`href`: scheme and host lowercased, default port
 * and dot segments dropped), without its fragment, which no request carries: two spellings that
 * fetch the same resource are one subscription, not two deliveries of every event. Whether the
 * URL is acceptable (https, not a special-purpose address) is the SSRF check's decision, made
 * before this; the principal comes from the authorization layer ("MUST be called with an
 * authenticated principal"), never from params.
 *
 * TTL. "`ttlMs` … Omitting the field means "server default". An explicit `ttlMs: null` requests
 * a subscription with no expiry." The grant "SHOULD be less than or equal to the suggestion"; "a
 * server MAY clamp an impractically short suggestion up to its minimum TTL"; "A server MUST NOT
 * return `null` unless the client suggested `ttlMs: null`"; "there is no rejection path for TTL
 * values". grantTtl is that table; persisting a no-expiry grant ("MUST persist no-expiry
 * subscriptions across restarts") is the store's.
 */
import { sha256Hex } from './digest.ts';
import { SUBSCRIPTION_ID_PREFIX } from './events-webhook-wire.ts';
/** Bytes of SHA-256 kept in the id: 128 bits. */
export const SUBSCRIPTION_ID_BYTES = 16;
/** Deeper arguments than this are refused rather than recursed into (no `inputSchema` worth serving nests so far). */
export const MAX_CANONICAL_DEPTH = 64;
/**
 * The most a subscription's arguments take as canonical JSON, in UTF-8 bytes: 16 KiB. They are
 * stored in the subscription's record and hashed into its key on every subscribe, refresh and
 * unsubscribe; a filter needs a few hundred bytes, and a request body (4 MiB) could otherwise
 * make a record past SQLite's 2 MB row.
 */
export const MAX_ARGUMENTS_BYTES = 16_384;

/** A value canonical JSON cannot spell: the caller answers -32602 (`invalid_arguments`). */
export class NotJsonError extends TypeError {
  override readonly name = 'NotJsonError';
}

/**
 * Canonical JSON (the JSON Canonicalization Scheme, RFC 8785, for the values parsed JSON holds):
 * object members sorted by their names' UTF-16 code units, no insignificant whitespace, strings
 * and numbers as `JSON.stringify` writes them (so `1.0` and `1`, `-0` and `0` are one value).
 * Anything JSON cannot hold — `undefined`, a non-finite number, a bigint, a function, a class
 * instance, a sparse array — is refused, never silently dropped as `JSON.stringify` would.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJsonError(`${value} is not a JSON number`);
    return JSON.stringify(value);
  }
  if (typeof value !== 'object') throw new NotJsonError(`a ${typeof value} is not a JSON value`);
  if (depth >= MAX_CANONICAL_DEPTH) throw new NotJsonError(`nested deeper than ${MAX_CANONICAL_DEPTH}`);
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) {
      items.push(write(value[i], depth + 1));
    }
    return `[${items.join(',')}]`;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw new NotJsonError('only plain objects are JSON objects');
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${write(record[key], depth + 1)}`);
  return `{${members.join(',')}}`;
}

/** `(principal, delivery.url, name, arguments)`: what makes two `events/subscribe` calls one subscription. */
export interface SubscriptionKey {
  readonly principal: string;
  readonly url: string;
  readonly name: string;
  readonly arguments: unknown;
}

/** The callback URL as keyed: its WHATWG serialization without the fragment. TypeError if it does not parse. */
export function keyedUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}

/** The canonical serialization of a key: equal texts, the same subscription. Throws NotJsonError for arguments JSON cannot hold. */
export function subscriptionKeyText(key: SubscriptionKey): string {
  return canonicalJson(['mcp-webhook-subscription', key.principal, keyedUrl(key.url), key.name, key.arguments]);
}

/** The derived `id`: `sub_` and 32 lowercase hex digits, the same for the same key in every isolate and after every restart. */
export async function subscriptionId(key: SubscriptionKey): Promise<string> {
  return SUBSCRIPTION_ID_PREFIX + (await sha256Hex(subscriptionKeyText(key), SUBSCRIPTION_ID_BYTES));
}

/**
 * What endpoint verification is cached under: "Verification is cached per `(principal, url)`",
 * across refreshes and `arguments`, and "one principal's verification never waives the challenge
 * for another".
 */
export function verificationScopeText(principal: string, url: string): string {
  return canonicalJson(['mcp-webhook-verification', principal, keyedUrl(url)]);
}

/** The server's TTL bounds. */
export interface TtlPolicy {
  /** The floor: a shorter suggestion (0 and negatives included) is clamped up to it, "to protect itself from refresh storms". */
  readonly minTtlMs: number;
  /** Granted when `ttlMs` is omitted ("server default"). */
  readonly defaultTtlMs: number;
  /** The longest finite grant: a longer suggestion is shortened to it. */
  readonly maxTtlMs: number;
  /** Whether `ttlMs: null` is granted as no expiry; if not, it gets `maxTtlMs` ("a finite `refreshBefore`"). */
  readonly noExpiry: boolean;
}

/**
 * One minute to one day, an hour by default: "grants from a few minutes up to about a day cover
 * most deployments", and the SEP's example suggests an hour. No expiry is granted when asked for:
 * subscriptions live in durable storage here, which is what the grant obliges.
 */
export const DEFAULT_TTL_POLICY: TtlPolicy = { minTtlMs: 60_000, defaultTtlMs: 3_600_000, maxTtlMs: 86_400_000, noExpiry: true };

/** How a grant was reached from the suggestion. */
export type TtlBasis = 'suggested' | 'default' | 'floor' | 'ceiling' | 'no_expiry';

export interface TtlGrant {
  /** The response's `refreshBefore`: ISO 8601, or `null` for no expiry (only ever when `ttlMs: null` was suggested). */
  readonly refreshBefore: string | null;
  /** The same instant in epoch milliseconds, what the store keeps and expires at; `null` for no expiry. */
  readonly expiresAt: number | null;
  readonly basis: TtlBasis;
}

/** RangeError unless `0 < minTtlMs ≤ defaultTtlMs ≤ maxTtlMs`, all safe integers. */
export function checkTtlPolicy(policy: TtlPolicy): void {
  const { minTtlMs, defaultTtlMs, maxTtlMs } = policy;
  if (
    ![minTtlMs, defaultTtlMs, maxTtlMs].every(Number.isSafeInteger) ||
    minTtlMs <= 0 ||
    minTtlMs > defaultTtlMs ||
    defaultTtlMs > maxTtlMs
  ) {
    throw new RangeError(`a TTL policy needs 0 < min ≤ default ≤ max (integer ms), got ${minTtlMs}, ${defaultTtlMs}, ${maxTtlMs}`);
  }
}

/**
 * The grant for a subscribe or a refresh ("The server grants a TTL again on each refresh", under
 * the same rules): `suggested` is the params' `ttlMs` — `undefined` when omitted, `null` when
 * no expiry is asked for, else an integer (a non-integer is the parser's -32602, a RangeError here).
 */
export function grantTtl(suggested: number | null | undefined, now: number, policy: TtlPolicy = DEFAULT_TTL_POLICY): TtlGrant {
  checkTtlPolicy(policy);
  if (suggested === null && policy.noExpiry) return { refreshBefore: null, expiresAt: null, basis: 'no_expiry' };
  let ttl: number;
  let basis: TtlBasis;
  if (suggested === undefined) [ttl, basis] = [policy.defaultTtlMs, 'default'];
  else if (suggested === null) [ttl, basis] = [policy.maxTtlMs, 'ceiling'];
  else if (!Number.isSafeInteger(suggested)) throw new RangeError(`ttlMs must be an integer, got ${suggested}`);
  else if (suggested < policy.minTtlMs) [ttl, basis] = [policy.minTtlMs, 'floor'];
  else if (suggested > policy.maxTtlMs) [ttl, basis] = [policy.maxTtlMs, 'ceiling'];
  else [ttl, basis] = [suggested, 'suggested'];
  const expiresAt = now + ttl;
  return { refreshBefore: new Date(expiresAt).toISOString(), expiresAt, basis };
}
