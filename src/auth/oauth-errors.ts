/**
 * The authorization server's refusals, as OAuth error responses (RFC 6749 §5.2: a JSON object
 * with `error` and `error_description`; RFC 7591 §3.2.2 for registration, RFC 7592 for reading it): what an OAuth client
 * reads on these paths, where the endpoint's refusals are JSON-RPC (core/errors.ts). Every
 * refusal on them reaches the wire through {@link oauthErrorResponse}; what the shared checks
 * throw (`McpHttpError`: Host, Origin, body size, rate limit) keeps its status and headers.
 */
import { McpHttpError } from '../core/errors.ts';

/** RFC 6749 §4.1.2.1 and §5.2, RFC 8707 §2 (`invalid_target`), RFC 7591 §3.2.2. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_client_metadata'
  /** RFC 6750 §3.1: a registration access token (RFC 7592) that is missing, wrong, or of a client gone. */
  | 'invalid_token';

export class OAuthHttpError extends Error {
  override readonly name = 'OAuthHttpError';

  constructor(
    readonly status: number,
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
  }
}

/** The OAuth code for a status the shared checks answer with. */
function codeOf(status: number): OAuthErrorCode {
  if (status === 403) return 'access_denied';
  if (status === 429) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/** Anything thrown that is neither error of ours is a bug: `server_error`, no details. */
export function asOAuthError(error: unknown): OAuthHttpError {
  if (error instanceof OAuthHttpError) return error;
  if (error instanceof McpHttpError) return new OAuthHttpError(error.status, codeOf(error.status), error.message, error.headers);
  return new OAuthHttpError(500, 'server_error', 'Internal error');
}

/** The one path from an authorization-server refusal to the wire. Never cached (RFC 6749 §5.1). */
export function oauthErrorResponse(error: OAuthHttpError): Response {
  const headers = new Headers(error.headers);
  headers.set('Content-Type', 'application/json');
  headers.set('Cache-Control', 'no-store');
  return new Response(JSON.stringify({ error: error.code, error_description: error.description }), { status: error.status, headers });
}
