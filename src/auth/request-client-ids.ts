/**
 * Client IDs that are URLs on a host the server must not fetch, refused before the provider sees
 * them (issue 42, finding 9). With client ID metadata documents on, a `client_id` that is an
 * https URL is fetched by the provider wherever it looks the client up: the authorization
 * request (`/authorize`, through the sign-in page's `parseAuthRequest`), and every request to
 * the token endpoint (exchange, refresh, revocation). There the client can name itself in the
 * form's `client_id`, in HTTP Basic credentials, or as a client assertion's `iss`; each is read
 * here as the provider reads it, and every one is judged: a host the code refuses
 * (core/special-purpose-address.ts) means no lookup at all. The rule holds whatever the
 * runtime's `global_fetch_strictly_public` does (`wrangler dev` ignores it).
 *
 * The answer is the one the provider gives a client it cannot resolve, where it would give it:
 * at the token endpoint `401 invalid_client` (RFC 6749 §5.2, "unknown client"; with the Basic
 * challenge when the client used Basic, as §5.2 requires); at the authorization endpoint
 * `400 invalid_request`, shown and never redirected (RFC 6749 §4.1.2.1: "if the client
 * identifier is missing or invalid, the authorization server … MUST NOT automatically
 * redirect", and `invalid_client` is not among that section's codes); at a registration's URI
 * (RFC 7592) the `401 invalid_token` of a client that does not exist.
 */
import { urlHostRefusal } from '../core/special-purpose-address.ts';
import { invalidRegistrationToken, registeredClientIdOf } from './client-registration.ts';
import { OAuthHttpError } from './oauth-errors.ts';
import { AUTHORIZE_PATH, REGISTER_PATH, TOKEN_PATH } from './oauth-walls.ts';

/** The client IDs a request names (`named`), and the one the token endpoint would authenticate (`client`). */
export interface ClientIds {
  readonly named: readonly string[];
  readonly client: string | undefined;
}

/** Throws the path's refusal (`OAuthHttpError`) if any client ID the request names is a URL on a refused host. */
export function refuseLocalClientIds(ids: ClientIds, request: Request, pathname: string): void {
  for (const clientId of ids.named) {
    const refusal = urlHostRefusal(clientId);
    if (refusal === undefined) continue;
    const description = `a client ID metadata document is not fetched from this host: ${refusal}`;
    if (pathname === TOKEN_PATH) {
      const basic = /^basic[ \t]/i.test(request.headers.get('Authorization') ?? '');
      throw new OAuthHttpError(401, 'invalid_client', description, basic ? { 'WWW-Authenticate': 'Basic realm="OAuth"' } : {});
    }
    if (pathname.startsWith(`${REGISTER_PATH}/`)) throw invalidRegistrationToken();
    throw new OAuthHttpError(400, 'invalid_request', description);
  }
}

/**
 * Every client ID the request names, wherever the provider (or a sign-in page through its
 * helpers) could take one from: the query's `client_id` (`/authorize`); on a POST to the
 * authorization or token endpoint, the form's `client_id` and its client assertions' `iss`;
 * HTTP Basic's user name; a registration URI's last segment. Read from a copy: the provider
 * reads the request itself. The body was bounded by the walls first (oauth-walls.ts).
 */
export async function readClientIds(request: Request, pathname: string): Promise<ClientIds> {
  const named = new URL(request.url).searchParams.getAll('client_id');
  if (pathname.startsWith(`${REGISTER_PATH}/`)) named.push(registeredClientIdOf(pathname));
  const basic = basicClientId(request.headers.get('Authorization'));
  if (basic !== undefined) named.push(basic);
  if (request.method !== 'POST' || (pathname !== TOKEN_PATH && pathname !== AUTHORIZE_PATH)) return { named, client: undefined };
  // Read as a form whatever its Content-Type says: what a reader of the body could take as a
  // client ID is judged, not only what the provider's own Content-Type check lets through.
  // Bytes, decoded as .text() would: workerd warns of .text() on a body that is not text/*.
  const body = new URLSearchParams(new TextDecoder().decode(await request.clone().arrayBuffer()));
  const ids = body.getAll('client_id').filter((id) => id !== '');
  const issuers = body.getAll('client_assertion').flatMap((assertion) => assertionIssuer(assertion) ?? []);
  named.push(...ids, ...issuers);
  // As the provider picks: Basic's, else the form's `client_id`, else the assertion's issuer.
  return { named, client: pathname === TOKEN_PATH ? (basic ?? ids[0] ?? issuers[0]) : undefined };
}

/**
 * The client ID of HTTP Basic credentials, decoded as the provider decodes it (RFC 6749 §2.3.1:
 * form-urlencoded, then Base64); `undefined` when the header is not Basic or does not decode.
 */
function basicClientId(header: string | null): string | undefined {
  if (header === null) return undefined;
  const schemeEnd = header.search(/[ \t]/);
  if (schemeEnd === -1 || header.slice(0, schemeEnd).toLowerCase() !== 'basic') return undefined;
  try {
    const credentials = atob(header.slice(schemeEnd).trim());
    const colon = credentials.indexOf(':');
    return colon === -1 ? undefined : decodeURIComponent(credentials.slice(0, colon).replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** A JWT's `iss`, unverified (the provider takes the client ID from it the same way, before checking anything). */
function assertionIssuer(assertion: string): string | undefined {
  const claims = assertion.split('.')[1];
  if (claims === undefined) return undefined;
  try {
    const base64 = claims.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), '='));
    const json: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0))));
    const issuer = (json as { iss?: unknown } | null)?.iss;
    return typeof issuer === 'string' ? issuer : undefined;
  } catch {
    return undefined;
  }
}
