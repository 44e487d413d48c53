/**
 * The cursor of an event log (MCP Events, SEP-3415; docs/events.md) and the decision of where a
 * poll or a push stream starts from one; and the cursor of an upstream-backed type
 * (events/upstream-event-type.ts), whose position is its upstream's own.
 *
 * A cursor is a position in ONE log: the log's identity (event type, partition, and a log id that
 * changes whenever the log is reset, so a position is never read against a log that did not issue
 * it) and the seq of the next occurrence to deliver. It is sealed with HMAC-SHA256 under a server
 * key (Web Crypto), so a client can hold it, but not make one: a cursor this server did not mint is
 * refused, never read as a position. The SEP leaves cursors "opaque strings managed by the
 * server"; this one is `<payload>.<mac>`, both base64url, the payload JSON `[1, type, partition,
 * logId, next]`. Not secret (anyone holding one can read its seq), only tamper-evident.
 *
 * An upstream-backed type keeps no log: its upstream (an API's event history, a database's
 * changefeed) keeps the history, and its author's `read` speaks the upstream's own cursor, an
 * opaque string. Ours seals it the same way, bound to the type and the partition its arguments
 * name: payload `[2, type, partition, upstreamCursor]` (version 2), the same MAC and domain, so
 * a client can no more make one than a log cursor; a cursor of one kind presented to a type of
 * the other is refused as another type's or another log's (decideUpstreamStart, logCursorOf).
 *
 * The decision table (decideStart) is the events' counterpart of task-stream.ts and resume.ts:
 * not "is this a cursor?" but "can delivery continue right after it, with nothing skipped?";
 * when it cannot, `truncated: true` with a fresh position — the SEP's "single signal" that events
 * were skipped — or, for a cursor that is not a position in this log at all, a typed refusal.
 * Never a silent skip, never a position of another log.
 */
import { fromBase64Url, toBase64Url } from './base64url.ts';
import { eventsError, type InvalidParamsReason, MAX_CURSOR_LENGTH, type ParamsRefusal, refuseParams } from './events-wire.ts';

/** What a log is: the type it serves, its partition ('' when the type has none), and its generation. */
export interface LogIdentity {
  readonly type: string;
  readonly partition: string;
  /** Changes when the log is reset (its occurrences dropped and seq restarted): old cursors then name another log. */
  readonly logId: string;
}

/** A decoded cursor: the log that minted it, and the seq of the first occurrence not yet delivered. */
export interface EventCursor extends LogIdentity {
  readonly next: number;
}

/**
 * A decoded cursor of an upstream-backed type: the type and partition it was minted for, and the
 * upstream's own position as the type's author gave it (opaque: only the author's `read` reads it).
 */
export interface UpstreamCursor {
  readonly type: string;
  readonly partition: string;
  readonly upstream: string;
}

/** What a sealed cursor decodes to: a position in a log, or in an upstream. */
export type SealedCursor = EventCursor | UpstreamCursor;

export function isUpstreamCursor(cursor: SealedCursor): cursor is UpstreamCursor {
  return 'upstream' in cursor;
}

/**
 * The longest upstream cursor an author may give, in printable ASCII: sealed with the type's name
 * and partition it stays under MAX_CURSOR_LENGTH.
 */
export const MAX_UPSTREAM_CURSOR_LENGTH = 512;

/** The keys cursors are sealed with: minted with `current`, accepted under `previous` too while a key rotates. */
export interface CursorKeys {
  readonly current: CryptoKey;
  readonly previous?: CryptoKey;
}

/** Domain separation: a MAC made for anything else under the same key never verifies as a cursor. */
const DOMAIN = new TextEncoder().encode('mcp-edge-sessions/event-cursor/v1\0');
const VERSION = 1;
const UPSTREAM_VERSION = 2;
export const MIN_CURSOR_KEY_BYTES = 32;

/** An HMAC-SHA256 key from a secret of at least 32 bytes (a configuration error names the fix). */
export async function importCursorKey(secret: string): Promise<CryptoKey> {
  const bytes = new TextEncoder().encode(secret);
  if (bytes.byteLength < MIN_CURSOR_KEY_BYTES)
    throw new Error(`configuration: the event cursor key must be at least ${MIN_CURSOR_KEY_BYTES} bytes`);
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

function signed(payload: Uint8Array): Uint8Array {
  const message = new Uint8Array(DOMAIN.byteLength + payload.byteLength);
  message.set(DOMAIN);
  message.set(payload, DOMAIN.byteLength);
  return message;
}

/** The cursor for position `next` of the log `identity`. */
export async function mintCursor(cursor: EventCursor, keys: CursorKeys): Promise<string> {
  if (!Number.isSafeInteger(cursor.next) || cursor.next < 0)
    throw new RangeError(`cursor position must be a non-negative integer, not ${cursor.next}`);
  return seal([VERSION, cursor.type, cursor.partition, cursor.logId, cursor.next], keys);
}

/** The cursor of an upstream-backed type at its upstream's position `cursor.upstream`. */
export async function mintUpstreamCursor(cursor: UpstreamCursor, keys: CursorKeys): Promise<string> {
  if (!isUpstreamPosition(cursor.upstream)) {
    throw new RangeError(`an upstream cursor is 1 to ${MAX_UPSTREAM_CURSOR_LENGTH} printable ASCII characters`);
  }
  return seal([UPSTREAM_VERSION, cursor.type, cursor.partition, cursor.upstream], keys);
}

/** Whether `value` is an upstream cursor an author may give (and this module seals). */
export function isUpstreamPosition(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_UPSTREAM_CURSOR_LENGTH && /^[\x20-\x7e]+$/.test(value);
}

/** One spelling per position: the payload is the JSON of `fields` as written here, and only it carries the MAC. */
async function seal(fields: readonly (string | number)[], keys: CursorKeys): Promise<string> {
  const payload = new TextEncoder().encode(JSON.stringify(fields));
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', keys.current, signed(payload)));
  const text = `${toBase64Url(payload)}.${toBase64Url(mac)}`;
  if (text.length > MAX_CURSOR_LENGTH) throw new RangeError('cursor longer than MAX_CURSOR_LENGTH: the type name or partition is too long');
  return text;
}

export type DecodedCursor =
  | { readonly ok: true; readonly cursor: SealedCursor }
  | { readonly ok: false; readonly reason: 'malformed_cursor' | 'forged_cursor' };

/**
 * The cursor `text` if this server minted it (under either key), else why not: `malformed_cursor`
 * when it is not the shape of one, `forged_cursor` when the MAC does not verify (altered, made
 * up, or minted under a key no longer accepted). The MAC is checked before the payload is read.
 */
export async function decodeCursor(text: string, keys: CursorKeys): Promise<DecodedCursor> {
  const parts = text.length > MAX_CURSOR_LENGTH ? [] : text.split('.');
  const payload = parts.length === 2 ? fromBase64Url(parts[0]!) : undefined;
  const mac = parts.length === 2 ? fromBase64Url(parts[1]!) : undefined;
  if (payload === undefined || mac === undefined || payload.byteLength === 0 || mac.byteLength !== 32) {
    return { ok: false, reason: 'malformed_cursor' };
  }
  let verified = false;
  // crypto.subtle.verify compares in constant time.
  for (const key of [keys.current, keys.previous]) {
    if (key !== undefined && !verified) verified = await crypto.subtle.verify('HMAC', key, mac, signed(payload));
  }
  if (!verified) return { ok: false, reason: 'forged_cursor' };
  let fields: unknown;
  try {
    fields = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(payload));
  } catch {
    return { ok: false, reason: 'malformed_cursor' };
  }
  // A verified payload is one we minted; a shape we do not read is a cursor of another version.
  if (Array.isArray(fields) && fields.length === 4 && fields[0] === UPSTREAM_VERSION) {
    const [, type, partition, upstream] = fields as unknown[];
    if (typeof type !== 'string' || typeof partition !== 'string' || !isUpstreamPosition(upstream))
      return { ok: false, reason: 'malformed_cursor' };
    return { ok: true, cursor: { type, partition, upstream } };
  }
  if (!Array.isArray(fields) || fields.length !== 5 || fields[0] !== VERSION) return { ok: false, reason: 'malformed_cursor' };
  const [, type, partition, logId, next] = fields as unknown[];
  if (typeof type !== 'string' || typeof partition !== 'string' || typeof logId !== 'string')
    return { ok: false, reason: 'malformed_cursor' };
  if (typeof next !== 'number' || !Number.isSafeInteger(next) || next < 0) return { ok: false, reason: 'malformed_cursor' };
  return { ok: true, cursor: { type, partition, logId, next } };
}

/** What the log holds when a poll or a stream asks to start (the log's object reads it in one turn). */
export interface LogState extends LogIdentity {
  /** The seq the next occurrence will take: how many the log ever had since its reset. */
  readonly nextSeq: number;
  /** The lowest seq still retained; `nextSeq` when none is. */
  readonly earliestSeq: number;
}

/**
 * With `maxAgeMs`, the seq of the first retained occurrence whose timestamp is at or after
 * `now − maxAgeMs` (`nextSeq` when none is): the floor the SEP says replay begins at when it is
 * later than the cursor. The log computes it (one index read); this module only compares.
 */
export interface MaxAgeFloor {
  readonly floorSeq: number;
}

/** Why a start skipped occurrences. The SEP does not distinguish causes on the wire; our logs and tests do. */
export type TruncationCause = 'retention' | 'max_age' | 'log_reset';

export type StartDecision =
  /** `cursor: null`: "start from now", no replay, nothing skipped ("maxAgeMs is ignored when cursor is null"). */
  | { readonly kind: 'from_now'; readonly fromSeq: number; readonly truncated: false }
  /** Deliver from `fromSeq` (the cursor's own position): nothing skipped. At the head, nothing to deliver yet. */
  | { readonly kind: 'continue'; readonly fromSeq: number; readonly truncated: false }
  /** Deliver from `fromSeq`, later than the cursor's position: `truncated: true` with the fresh cursor at `fromSeq`. */
  | { readonly kind: 'truncated'; readonly fromSeq: number; readonly truncated: true; readonly cause: TruncationCause }
  /** Not a position in this log: the request is refused with -32602 and the reason, and nothing is delivered. */
  | ({ readonly kind: 'refused' } & ParamsRefusal);

function refused(detail: string, reason: InvalidParamsReason): StartDecision {
  return { kind: 'refused', ...refuseParams(detail, reason) };
}

/**
 * Where delivery starts for the decoded cursor `cursor` (null: none given) against the log's
 * state, with `maxAge` when the request carries `maxAgeMs`. Rows, in order:
 * 1. no cursor → from now (the head);
 * 2. a cursor of another type → refused (`cursor_other_type`); of another partition → refused
 *    (`cursor_other_log`): reading its seq here would splice another log's positions into this one;
 * 3. a cursor of this log's earlier generation (the log was reset) → truncated, from the new log's
 *    earliest retained occurrence (or the maxAge floor): the SEP's own answer for cursors a
 *    restart invalidated ("clients receive truncated: true with a fresh cursor"), and nothing of
 *    the old log is read;
 * 4. a position past the head → refused (`cursor_ahead`): this log never issued it in this
 *    generation (a log that lost occurrences must take a new log id, which is row 3);
 * 5. a position before the earliest retained occurrence → truncated (`retention`), from it;
 * 6. a maxAge floor past the position → truncated (`max_age`), from the floor: "If the floor
 *    advances past the cursor, the server SHOULD set truncated: true";
 * 7. otherwise → continue at the position (at the head: nothing yet, and nothing skipped).
 * Truncation is reported only when occurrences were in fact skipped (the start is past the
 * position), so a floor or retention limit that skips nothing is a plain continue.
 */
export function decideStart(cursor: EventCursor | null, log: LogState, maxAge?: MaxAgeFloor): StartDecision {
  const { nextSeq, earliestSeq } = log;
  if (!(0 <= earliestSeq && earliestSeq <= nextSeq))
    throw new RangeError(`log state out of order: earliest ${earliestSeq}, next ${nextSeq}`);
  if (maxAge !== undefined && !(earliestSeq <= maxAge.floorSeq && maxAge.floorSeq <= nextSeq)) {
    throw new RangeError(`maxAge floor ${maxAge.floorSeq} outside the retained range ${earliestSeq}..${nextSeq}`);
  }
  if (cursor === null) return { kind: 'from_now', fromSeq: nextSeq, truncated: false };
  if (cursor.type !== log.type)
    return refused(`the cursor is for event type ${JSON.stringify(cursor.type)}, not this one`, 'cursor_other_type');
  if (cursor.partition !== log.partition) return refused('the cursor is for another partition of this event type', 'cursor_other_log');
  const floor = maxAge === undefined ? earliestSeq : maxAge.floorSeq;
  if (cursor.logId !== log.logId) return { kind: 'truncated', fromSeq: floor, truncated: true, cause: 'log_reset' };
  if (cursor.next > nextSeq) return refused(`the cursor's position ${cursor.next} is past the log's head ${nextSeq}`, 'cursor_ahead');
  if (cursor.next < earliestSeq) return { kind: 'truncated', fromSeq: floor, truncated: true, cause: 'retention' };
  if (cursor.next < floor) return { kind: 'truncated', fromSeq: floor, truncated: true, cause: 'max_age' };
  return { kind: 'continue', fromSeq: cursor.next, truncated: false };
}

/**
 * A log-backed type's cursor from a decoded one: a log cursor goes on to its log's object
 * (decideStart decides it there); an upstream-backed type's cursor is refused here — another
 * type's (`cursor_other_type`), or, should a type have changed from upstream to log, another
 * log's (`cursor_other_log`): never read as a position of the log.
 */
export function logCursorOf(cursor: SealedCursor, type: string): EventCursor | ParamsRefusal {
  if (!isUpstreamCursor(cursor)) return cursor;
  if (cursor.type !== type)
    return refuseParams(`the cursor is for event type ${JSON.stringify(cursor.type)}, not this one`, 'cursor_other_type');
  return refuseParams("the cursor is a position in this type's former upstream, not in its log", 'cursor_other_log');
}

/** Where an upstream-backed type's read starts: from now, after the upstream's own position, or refused (-32602). */
export type UpstreamStart =
  /** `cursor: null`: "start from now": the author's read is given null, and answers the upstream's head. */
  { readonly kind: 'from_now' } | { readonly kind: 'continue'; readonly upstream: string } | ({ readonly kind: 'refused' } & ParamsRefusal);

/**
 * The upstream counterpart of decideStart, for a cursor the Worker decoded (its MAC verified):
 * 1. no cursor → from now;
 * 2. another type's cursor, of either kind → refused (`cursor_other_type`);
 * 3. a log cursor of this type's name (the type was log-backed once) → refused (`cursor_other_log`);
 * 4. another partition's → refused (`cursor_other_log`): the upstream's position for other arguments;
 * 5. otherwise → continue after the upstream's position. Whether the upstream still keeps it is
 *    the author's to say (`truncated`); retention is the upstream's.
 */
export function decideUpstreamStart(
  cursor: SealedCursor | null,
  expected: { readonly type: string; readonly partition: string },
): UpstreamStart {
  if (cursor === null) return { kind: 'from_now' };
  if (cursor.type !== expected.type)
    return {
      kind: 'refused',
      ...refuseParams(`the cursor is for event type ${JSON.stringify(cursor.type)}, not this one`, 'cursor_other_type'),
    };
  if (!isUpstreamCursor(cursor)) {
    return {
      kind: 'refused',
      ...refuseParams("the cursor is a position in an event log, not in this type's upstream", 'cursor_other_log'),
    };
  }
  if (cursor.partition !== expected.partition)
    return { kind: 'refused', ...refuseParams('the cursor is for another partition of this event type', 'cursor_other_log') };
  return { kind: 'continue', upstream: cursor.upstream };
}

/** A cursor `decodeCursor` refused, as the -32602 refusal the request answers with. */
export function refuseUndecodable(reason: 'malformed_cursor' | 'forged_cursor'): ParamsRefusal {
  return reason === 'forged_cursor'
    ? { invalid: eventsError('InvalidParams', 'the cursor was not issued by this server', { reason }) }
    : refuseParams('the cursor is not one this server issued', reason);
}
