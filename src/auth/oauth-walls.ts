/**
 * What a request passes before the embedded authorization server (AUTH=oauth) sees it, on every
 * path but the endpoint's (which the Worker's own checks guard). The provider answers
 * unauthenticated requests by design — registration is open to anyone (RFC 7591), and so are the
 * authorization and token endpoints — and each of those writes to KV: a client, a consent, a
 * grant, a token. A registration's URI (RFC 7592, client-registration.ts) is open too, and
 * each request there reads KV, whatever its token. So, in this order:
 * 1. the DNS-rebinding defence, as on the endpoint: a Host or Origin not allowed is `403`
 *    ("Servers MUST validate the Origin header on all incoming connections"), no preflight grant;
 * 2. on the paths that write or read KV, the rate limit per client address
 *    (core/client-address.ts: an IPv6 client by its prefix), `429` with `Retry-After`: a flood
 *    writes and reads nothing past its allowance (issue 42, finding 7: 700 reads of a
 *    registration with a wrong token were 700 KV reads);
 * 3. on those paths, a body of at most {@link AUTHORIZATION_SERVER_BODY_BYTES}, `413` before any
 *    of it is parsed (the provider would read a form, or 1 MiB of registration JSON, whole).
 */
import type { Allowlist } from '../core/allowlist.ts';
import { addressKey } from '../core/client-address.ts';
import { httpErrors } from '../core/errors.ts';
import { checkHostAndOrigin, readBoundedText } from '../core/request-checks.ts';

export const AUTHORIZE_PATH = '/authorize';
export const TOKEN_PATH = '/oauth/token';
export const REGISTER_PATH = '/oauth/register';

const WRITING_PATHS: ReadonlySet<string> = new Set([AUTHORIZE_PATH, TOKEN_PATH, REGISTER_PATH]);

/**
 * The paths behind the rate limit: those that write, a registration's URI, which reads, and
 * below /authorize (a sign-in's callback: it reads and deletes the upstream transaction, calls
 * the identity provider, and writes a consent).
 */
const limited = (pathname: string) =>
  WRITING_PATHS.has(pathname) || pathname.startsWith(`${REGISTER_PATH}/`) || pathname.startsWith(`${AUTHORIZE_PATH}/`);

/**
 * A consent form or a token request is a few hundred bytes, a registration within its field
 * bounds (client-metadata-limits.ts) about 30 KB at most: 64 KiB is room for any of them.
 */
export const AUTHORIZATION_SERVER_BODY_BYTES = 64 * 1024;

export interface Walls {
  readonly hosts: Allowlist;
  /** ALLOWED_ORIGINS, and the server's own origin: the consent page posts its form from there. */
  readonly origins: Allowlist;
  readonly limiter: RateLimit | undefined;
  readonly ipv6Prefix: number;
  /** The rate limit's period: the `Retry-After` of a refusal. */
  readonly periodSeconds: number;
}

/** The request to hand the provider (its body read, within bounds), or the refusal thrown (`McpHttpError`). */
export async function passWalls(request: Request, pathname: string, walls: Walls): Promise<Request> {
  checkHostAndOrigin(request.headers, walls.hosts, walls.origins, () => new URL(request.url).host);
  if (!limited(pathname) || request.method === 'OPTIONS') return request;
  if (walls.limiter !== undefined) {
    const key = addressKey(request.headers.get('CF-Connecting-IP'), walls.ipv6Prefix);
    if (!(await walls.limiter.limit({ key })).success) throw httpErrors.tooManyRequests(walls.periodSeconds);
  }
  if (request.body === null || request.method === 'GET' || request.method === 'HEAD') return request;
  return new Request(request, { body: await readBoundedText(request, AUTHORIZATION_SERVER_BODY_BYTES) });
}
