/**
 * CORS for browser clients. Only origins that passed the allowlist get here (the DNS-rebinding
 * check runs first), so an allowed origin is granted what it asked for.
 */
import { ALLOWED_METHODS, ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS } from '../core/wire.ts';

/** The answer to a preflight `OPTIONS`. */
export const preflightResponse = (): Response =>
  new Response(null, {
    status: 204,
    headers: {
      'Access-Control-Allow-Methods': ALLOWED_METHODS.join(', '),
      'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS.join(', '),
      'Access-Control-Max-Age': '86400',
    },
  });

/** `response` as `origin` may read it. */
export function withCors(response: Response, origin: string): Response {
  // Responses from a Durable Object have immutable headers: copy before adding CORS.
  const copy = new Response(response.body, response);
  copy.headers.set('Access-Control-Allow-Origin', origin);
  copy.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
  copy.headers.append('Vary', 'Origin');
  return copy;
}
