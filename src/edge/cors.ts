/**
 * CORS for browser clients. Only origins that passed the allowlist get here (the DNS-rebinding
 * check runs first), so an allowed origin is granted what it asked for.
 */
import { ALLOWED_METHODS, ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS, PARAM_HEADER_PREFIX } from '../core/wire.ts';

/**
 * The answer to a preflight `OPTIONS`: the transport's headers, and the parameter headers
 * (`Mcp-Param-*`) the preflight asks for, which no fixed list can name.
 */
export function preflightResponse(request: Request): Response {
  const asked = (request.headers.get('Access-Control-Request-Headers') ?? '').split(',').map((name) => name.trim());
  const params = asked.filter((name) => name.toLowerCase().startsWith(PARAM_HEADER_PREFIX) && /^[A-Za-z0-9-]+$/.test(name));
  return new Response(null, {
    status: 204,
    headers: {
      'Access-Control-Allow-Methods': ALLOWED_METHODS.join(', '),
      'Access-Control-Allow-Headers': [...ALLOWED_REQUEST_HEADERS, ...params].join(', '),
      'Access-Control-Max-Age': '86400',
      // The answer depends on what was asked: a cache keeps one per list.
      Vary: 'Access-Control-Request-Headers',
    },
  });
}

/** `response` as `origin` may read it. */
export function withCors(response: Response, origin: string): Response {
  // Responses from a Durable Object have immutable headers: copy before adding CORS.
  const copy = new Response(response.body, response);
  copy.headers.set('Access-Control-Allow-Origin', origin);
  copy.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
  copy.headers.append('Vary', 'Origin');
  return copy;
}
