/**
 * Every rejection this server sends is an {@link McpHttpError}, and every one reaches the
 * wire through {@link errorResponse}: an HTTP status paired with a JSON-RPC error body.
 * Nothing else builds error responses, and nothing sends a stack trace.
 */
import { JsonRpcCode } from './wire.ts';

/** Machine-readable refusal reasons, carried in `error.data.reason`. Part of the wire contract. */
export type RefusalReason =
  | 'malformed_cursor'
  | 'unknown_stream'
  | 'cursor_ahead'
  | 'stream_superseded'
  | 'events_pruned'
  | 'duplicate_request_id'
  | 'message_too_large'
  | 'rate_limited'
  | 'session_full'
  | 'too_many_running_calls'
  | 'session_limit'
  | 'task_limit'
  | 'too_many_listens'
  | 'too_many_streams'
  | 'grant_revoked'
  | 'token_revoked';

export interface ErrorData {
  readonly reason?: RefusalReason;
  readonly [key: string]: unknown;
}

export type JsonRpcId = string | number;

export class McpHttpError extends Error {
  override readonly name = 'McpHttpError';

  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: ErrorData,
    /** The id of the JSON-RPC request the error answers, when there is exactly one. */
    readonly id: JsonRpcId | null = null,
    /** Extra response headers (e.g. `Allow` on a 405). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** The start of every unknown-session answer ("Session not found"), what a client may look for. */
export const SESSION_NOT_FOUND = 'Session not found';

export const httpErrors = {
  badRequest: (message: string, data?: ErrorData) => new McpHttpError(400, JsonRpcCode.ServerError, `Bad Request: ${message}`, data),
  parseError: (message: string) => new McpHttpError(400, JsonRpcCode.ParseError, `Parse error: ${message}`),
  invalidRequest: (message: string, id: JsonRpcId | null = null) =>
    new McpHttpError(400, JsonRpcCode.InvalidRequest, `Invalid Request: ${message}`, undefined, id),
  invalidParams: (message: string, id: JsonRpcId | null = null) =>
    new McpHttpError(400, JsonRpcCode.InvalidParams, `Invalid params: ${message}`, undefined, id),
  forbidden: (message: string) => new McpHttpError(403, JsonRpcCode.ServerError, `Forbidden: ${message}`),
  sessionNotFound: () =>
    new McpHttpError(404, JsonRpcCode.SessionNotFound, `${SESSION_NOT_FOUND}: it ended or never existed; start a new one with initialize`),
  methodNotAllowed: (allow: readonly string[]) =>
    new McpHttpError(405, JsonRpcCode.ServerError, 'Method not allowed', undefined, null, {
      Allow: allow.join(', '),
    }),
  notAcceptable: (message: string) => new McpHttpError(406, JsonRpcCode.ServerError, `Not Acceptable: ${message}`),
  conflict: (reason: RefusalReason, message: string, extra: Omit<ErrorData, 'reason'> = {}, id: JsonRpcId | null = null) =>
    new McpHttpError(409, JsonRpcCode.ServerError, message, { ...extra, reason }, id),
  gone: (reason: RefusalReason, message: string) => new McpHttpError(410, JsonRpcCode.ServerError, message, { reason }),
  payloadTooLarge: (limit: number) => new McpHttpError(413, JsonRpcCode.ServerError, `Payload Too Large: the body exceeds ${limit} bytes`),
  unsupportedMediaType: (message: string) => new McpHttpError(415, JsonRpcCode.ServerError, `Unsupported Media Type: ${message}`),
  /** The session made all the requests it may (MAX_SESSION_REQUESTS): a new session makes more. */
  sessionFull: (limit: number, id: JsonRpcId | null = null) =>
    new McpHttpError(
      409,
      JsonRpcCode.ServerError,
      `the session has made the ${limit} requests a session may make; start a new session (initialize)`,
      { reason: 'session_full', limit },
      id,
    ),
  /** The session runs as many calls as it may at once (MAX_RUNNING_CALLS): retry when one ends. */
  tooManyRunningCalls: (limit: number, id: JsonRpcId | null = null) =>
    new McpHttpError(
      429,
      JsonRpcCode.ServerError,
      `the session is running the ${limit} calls it may run at once; retry when one has ended`,
      { reason: 'too_many_running_calls', limit },
      id,
    ),
  /** The principal holds the live sessions it may (MAX_SESSIONS_PER_PRINCIPAL). */
  sessionLimit: (limit: number, id: JsonRpcId | null = null) =>
    new McpHttpError(
      429,
      JsonRpcCode.ServerError,
      `you have the ${limit} live sessions you may have; end one you no longer use (DELETE with its Mcp-Session-Id), or wait for an idle one to expire, then initialize again`,
      { reason: 'session_limit', limit },
      id,
    ),
  /** The principal holds the unexpired tasks it may (MAX_TASKS_PER_PRINCIPAL): the next expires in `retryAfterSeconds`. */
  taskLimit: (limit: number, retryAfterSeconds: number, id: JsonRpcId | null = null) =>
    new McpHttpError(
      429,
      JsonRpcCode.ServerError,
      `you have the ${limit} unexpired tasks you may have; retry once one expires (in ${retryAfterSeconds} s), or call without a task`,
      { reason: 'task_limit', limit, retryAfterSeconds },
      id,
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  /** The principal holds the listen streams it may on this isolate (MAX_LISTENS_PER_PRINCIPAL): retry when one has ended. */
  tooManyListens: (limit: number, id: JsonRpcId | null = null) =>
    new McpHttpError(
      429,
      JsonRpcCode.ServerError,
      `you hold the ${limit} listen streams you may hold at once on this server; close one you no longer read, then listen again`,
      { reason: 'too_many_listens', limit },
      id,
    ),
  /**
   * The principal holds the SSE streams it may on this isolate (MAX_STREAMS_PER_PRINCIPAL: a
   * session's GET streams and POST responses, task streams): retry when one has ended.
   */
  tooManyStreams: (limit: number, id: JsonRpcId | null = null) =>
    new McpHttpError(
      429,
      JsonRpcCode.ServerError,
      `you hold the ${limit} open streams you may hold at once on this server; close one you no longer read (or let a call finish), then retry`,
      { reason: 'too_many_streams', limit },
      id,
    ),
  /** The grant that authorized the request was revoked before what it asked for was created. */
  grantRevoked: (id: JsonRpcId | null = null) =>
    new McpHttpError(
      403,
      JsonRpcCode.ServerError,
      'Forbidden: the grant this request was authorized by has been revoked; sign in again',
      { reason: 'grant_revoked' },
      id,
    ),
  /**
   * The token was issued before its principal was revoked (AUTH=jwt: a token cannot be recalled
   * at its issuer, so the principal's registry refuses it at admission). `challenge` is the
   * `WWW-Authenticate` of an invalid token (auth/authenticate.ts): a 401 with it makes a client
   * authorize again, and a token issued since is served.
   */
  tokenRevoked: (challenge: string) =>
    new McpHttpError(
      401,
      JsonRpcCode.ServerError,
      'Unauthorized: this token was issued before its principal’s access was revoked; authorize again for a new token',
      { reason: 'token_revoked' },
      null,
      { 'WWW-Authenticate': challenge },
    ),
  internal: () => new McpHttpError(500, JsonRpcCode.InternalError, 'Internal error'),
  tooManyRequests: (retryAfterSeconds: number) =>
    new McpHttpError(429, JsonRpcCode.ServerError, 'Too Many Requests', { reason: 'rate_limited' }, null, {
      'Retry-After': String(retryAfterSeconds),
    }),
} as const;

/** Anything thrown that is not an McpHttpError is a bug on our side: a bare 500, no details. */
export function asHttpError(error: unknown): McpHttpError {
  return error instanceof McpHttpError ? error : httpErrors.internal();
}

export function errorBody(error: McpHttpError): string {
  const { code, message, data, id } = error;
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: data === undefined ? { code, message } : { code, message, data },
  });
}

/** The one path from a typed error to the wire. */
export function errorResponse(error: McpHttpError, headers: HeadersInit = {}): Response {
  const merged = new Headers(headers);
  merged.set('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(error.headers)) merged.set(name, value);
  return new Response(errorBody(error), { status: error.status, headers: merged });
}
