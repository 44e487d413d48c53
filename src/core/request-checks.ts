/**
 * Stateless checks on an incoming HTTP request, run at the edge before any Durable Object
 * is woken. Each returns the parsed value or throws the one McpHttpError that names the
 * problem; the order of the calls in the Worker fixes which problem wins.
 */
import { readBoundedBytes } from './bounded-body.ts';
import { httpErrors } from './errors.ts';
import { parseEventId, type EventId } from './event-id.ts';
import { acceptListsType, isJsonContentType, parseAccept } from './media-type.ts';
import { hostEntriesAdmitting, isHostAllowed, isOriginAllowed, originEntriesAdmitting, type Allowlist } from './allowlist.ts';
import {
  ASSUMED_PROTOCOL_VERSION,
  isSupportedProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ProtocolVersion,
} from './protocol-version.ts';
import { isSessionIdSyntax, isWellFormedSessionId } from './session-id.ts';
import { HEADERS } from './wire.ts';

/**
 * `urlHost` stands in when there is no Host header: a request made in-process (a service
 * binding, a test) has none, and its URL is then the only statement of where it was sent.
 * It is asked for only then (parsing the URL of every request costs the edge time for nothing).
 */
export function checkHostAndOrigin(
  headers: Headers,
  hosts: Allowlist,
  origins: Allowlist,
  urlHost: () => string | null = () => null,
): void {
  const host = headers.get('Host') ?? urlHost();
  const origin = headers.get('Origin');
  const last = lastAdmitted;
  if (last !== undefined && last.host === host && last.origin === origin && last.hosts === hosts && last.origins === origins) return;
  if (!isHostAllowed(hosts, host))
    throw httpErrors.forbidden(
      `host ${JSON.stringify(host)} is not allowed (add it to ALLOWED_HOSTS${portFix(hostEntriesAdmitting(hosts, host))})`,
    );
  if (!isOriginAllowed(origins, origin))
    throw httpErrors.forbidden(
      `origin ${JSON.stringify(origin)} is not allowed (add it to ALLOWED_ORIGINS${portFix(originEntriesAdmitting(origins, origin))})`,
    );
  lastAdmitted = { host, origin, hosts, origins };
}

/** The last Host and Origin the walls admitted, with the lists that admitted them: a client sends the same pair on every request. */
let lastAdmitted:
  | { readonly host: string | null; readonly origin: string | null; readonly hosts: Allowlist; readonly origins: Allowlist }
  | undefined;

/**
 * A name listed without this port (allowlist.ts: an entry without a port is the default ports
 * only): the refusal names the entries that would admit it, so a list written before that rule
 * (`localhost` for `npm run dev` on 8787) says how to fix itself.
 */
function portFix(entries: readonly [string, string] | undefined): string {
  if (entries === undefined) return '';
  return `: its name is listed for other ports, and an entry without a port is the default ports only; ${JSON.stringify(entries[0])} admits this port, ${JSON.stringify(entries[1])} every port`;
}

/**
 * A verdict on a header value, remembered for the last value seen: a client sends the same
 * Accept and Content-Type on every request, and parsing them is most of the edge's checking.
 */
function rememberLast(verdict: (value: string | null) => boolean): (value: string | null) => boolean {
  let last: string | null | undefined;
  let result = false;
  return (value) => {
    if (value !== last) {
      result = verdict(value);
      last = value;
    }
    return result;
  };
}

const postAcceptable = rememberLast((value) => {
  const ranges = parseAccept(value);
  return acceptListsType(ranges, 'application/json') && acceptListsType(ranges, 'text/event-stream');
});
const getAcceptable = rememberLast((value) => acceptListsType(parseAccept(value), 'text/event-stream'));
const jsonContent = rememberLast(isJsonContentType);

/** "The client MUST include an Accept header, listing both application/json and text/event-stream." */
export function checkPostAccept(headers: Headers): void {
  if (!postAcceptable(headers.get('Accept'))) {
    throw httpErrors.notAcceptable('the client must accept both application/json and text/event-stream');
  }
}

/** "The client MUST include an Accept header, listing text/event-stream." */
export function checkGetAccept(headers: Headers): void {
  if (!getAcceptable(headers.get('Accept'))) {
    throw httpErrors.notAcceptable('the client must accept text/event-stream');
  }
}

export function checkJsonContentType(headers: Headers): void {
  if (!jsonContent(headers.get('Content-Type'))) {
    throw httpErrors.unsupportedMediaType('Content-Type must be application/json');
  }
}

/**
 * "If the server receives a request with an invalid or unsupported MCP-Protocol-Version,
 * it MUST respond with 400 Bad Request." An absent header means 2025-03-26.
 */
export function readProtocolVersion(headers: Headers): ProtocolVersion {
  const value = headers.get(HEADERS.protocolVersion);
  if (value === null) return ASSUMED_PROTOCOL_VERSION;
  if (!isSupportedProtocolVersion(value.trim())) {
    // The revisions this path serves, as the 2026-07-28 refusal lists its own (`data.supported`,
    // `data.requested`); the code stays -32000: -32022 is a 2026-07-28 code, which a client's
    // probe reads as "a modern server", and this is a session's request.
    throw httpErrors.badRequest(`unsupported protocol version ${JSON.stringify(value)}`, {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      requested: value,
    });
  }
  return value.trim() as ProtocolVersion;
}

/**
 * The session id, if the request carries one. Neither a malformed id (400) nor one of another
 * server's format (404, an unknown session: a client moved from another deployment starts a
 * new one) is ever looked up.
 */
export function readSessionId(headers: Headers): string | undefined {
  const value = headers.get(HEADERS.sessionId);
  if (value === null) return undefined;
  if (!isSessionIdSyntax(value)) throw httpErrors.badRequest('malformed Mcp-Session-Id header');
  if (!isWellFormedSessionId(value)) throw httpErrors.sessionNotFound();
  return value;
}

export function requireSessionId(headers: Headers): string {
  const id = readSessionId(headers);
  if (id === undefined) throw httpErrors.badRequest('Mcp-Session-Id header is required');
  return id;
}

/** The resumption cursor, if any. */
export function readCursor(headers: Headers): EventId | undefined {
  const value = headers.get(HEADERS.lastEventId);
  if (value === null) return undefined;
  const cursor = parseEventId(value.trim());
  if (cursor === undefined) {
    throw httpErrors.badRequest('Last-Event-ID is not an event id of this server', { reason: 'malformed_cursor' });
  }
  return cursor;
}

/**
 * The body's declared length (Content-Length), if it declares one; a declared length over
 * `limit` is refused with 413 before any of the body is read.
 */
export function readDeclaredLength(headers: Headers, limit: number): number | undefined {
  const declared = headers.get('Content-Length');
  if (declared === null) return undefined;
  const length = Number(declared);
  if (length > limit) throw httpErrors.payloadTooLarge(limit);
  return length;
}

/** Stateless when not streaming, so one decoder serves every request. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads a body of at most `limit` bytes, refusing larger ones with 413 without buffering
 * them whole (Content-Length can be absent or wrong).
 */
export async function readBoundedText(request: Request, limit: number): Promise<string> {
  readDeclaredLength(request.headers, limit);
  const bytes = await readBoundedBytes(request.body, limit);
  if (bytes === undefined) throw httpErrors.payloadTooLarge(limit);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw httpErrors.parseError('the body is not valid UTF-8');
  }
}
