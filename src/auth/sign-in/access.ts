/**
 * Cloudflare Access as an identity source (AUTH=oauth): a deployment whose `/authorize` is
 * behind an Access application signs the user in from the assertion Access signed, without
 * another login.
 *
 * Cloudflare ("Validate JWTs"): every request Access lets through to the origin carries the
 * application token as the `Cf-Access-Jwt-Assertion` header, signed (RS256) with a key pair of
 * the team, whose public keys are at `https://<team>.cloudflareaccess.com/cdn-cgi/access/certs`;
 * "You should validate the token with your public key to ensure that the request came from
 * Access and not a malicious third party". Checked here, with `jose`:
 * - the signature, by one of the team's keys (a remote key set per team, per isolate: fetched
 *   once, refetched by jose when an assertion names a key it does not hold, as happens when
 *   Access rotates its key every 6 weeks), RS256 only: `none`, HS256 (a MAC "keyed" with a
 *   public key) and every other algorithm are refused before any key is looked at;
 * - `iss` is the team domain exactly, `aud` contains this application's AUD tag (a team signs
 *   every application's assertions with the same keys: the tag is what says this one was made
 *   for us), `exp` and `nbf`, with 30 seconds of tolerance for clocks; `exp` and `iat` present;
 * - `sub` non-empty and `email` present: a person. Cloudflare's "Application token" page says
 *   the payload differs for a service token; its assertion names the token (its Client ID in
 *   `common_name`, an empty `sub`) and no e-mail. It is refused (`not_a_person` when it looks so,
 *   `malformed` otherwise: either way no `sub` and e-mail, no sign-in): the grant made next is a
 *   person's consent to a client, and a machine holding a service token has no one to consent.
 *   A machine that needs the MCP server uses an OAuth client of its own.
 *
 * Only the header is read, never the `CF_Authorization` cookie: the header is what Access
 * injects on every request it forwards, while the cookie is the browser's (Cloudflare: "We
 * recommend validating the Cf-Access-Jwt-Assertion header instead of the CF_Authorization
 * cookie, since the cookie is not guaranteed to be passed"); a cookie also outlives the request
 * Access judged, and one set for a sibling path or subdomain may ride along.
 *
 * Every failure is a typed refusal with a reason the sign-in page shows; nothing here throws for
 * a bad assertion. The result is a SignedInIdentity (identity.ts): the principal is the team
 * domain and `sub`, never the e-mail address, which a user of the team's identity provider may
 * change and another may later hold.
 */
import { createRemoteJWKSet, customFetch, jwtVerify, type FetchImplementation, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AccessSettings } from './access-settings.ts';
import { type IdentitySourceHandler, NotAdmitted, SignInFailed } from './flow.ts';
import { type SignedInIdentity, userIdOf } from './identity.ts';

export { readAccessSettings, type AccessSettings, type AccessVars } from './access-settings.ts';

/** The header Access adds to every request it forwards to the origin. */
export const ACCESS_ASSERTION_HEADER = 'Cf-Access-Jwt-Assertion';

/** Seconds of clock difference forgiven on `exp` and `nbf`: Cloudflare's clock and the isolate's. */
export const ACCESS_CLOCK_TOLERANCE_SECONDS = 30;

/**
 * The longest assertion read: an application token is a few hundred bytes to a couple of
 * kilobytes (no group lists: those are in the get-identity endpoint, not the token). Anything
 * longer is refused before it is decoded.
 */
export const MAX_ASSERTION_LENGTH = 16 * 1024;

export type AccessRefusalKind =
  | 'missing'
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'unknown_key'
  | 'not_a_person'
  | 'keys_unavailable';

export interface AccessRefusal {
  readonly kind: AccessRefusalKind;
  /** What the sign-in page says (escaped there): why, and what the user or operator can do. */
  readonly reason: string;
}

export type AccessSignIn =
  | { readonly ok: true; readonly identity: SignedInIdentity }
  | { readonly ok: false; readonly refusal: AccessRefusal };

const REASONS: Readonly<Record<AccessRefusalKind, string>> = {
  missing:
    'This request did not come through Cloudflare Access (it has no Cf-Access-Jwt-Assertion): the sign-in path must be covered by the Access application.',
  malformed: 'The Cloudflare Access assertion is not a well-formed token signed with RS256.',
  expired: 'Your Cloudflare Access session has expired: reload the page to sign in to Access again.',
  not_yet_valid: "The Cloudflare Access assertion is not valid yet: this server's clock may be wrong.",
  wrong_audience: "The Cloudflare Access assertion was made for another Access application than this server's (ACCESS_AUD).",
  wrong_issuer: "The Cloudflare Access assertion was signed for another Access team than this server's (ACCESS_TEAM_DOMAIN).",
  unknown_key: "The Cloudflare Access assertion is not signed by one of the team's keys.",
  not_a_person:
    'A Cloudflare Access service token cannot sign in here: signing in grants a client access on a person’s behalf, and a service token is no person.',
  keys_unavailable: "The team's signing keys could not be fetched from Cloudflare Access: try again in a moment.",
};

export function accessRefusal(kind: AccessRefusalKind): AccessRefusal {
  return { kind, reason: REASONS[kind] };
}

/** Where a team's public keys are published. */
export function accessCertsUrl(teamDomain: string): URL {
  return new URL('/cdn-cgi/access/certs', teamDomain);
}

/** One remote key set per team per isolate: jose keeps its keys, its cooldown and its pending fetch in it. */
const teamKeySets = new Map<string, JWTVerifyGetKey>();

/**
 * The team's keys, as jose resolves them for a token's header. Shared by every request of the
 * isolate for the same team; with `fetch` given (tests), a key set of its own, never cached,
 * that fetches through it.
 */
export function accessKeySet(teamDomain: string, fetch?: FetchImplementation): JWTVerifyGetKey {
  const url = accessCertsUrl(teamDomain);
  if (fetch !== undefined) return createRemoteJWKSet(url, { [customFetch]: fetch });
  let keySet = teamKeySets.get(url.href);
  if (keySet === undefined) {
    keySet = createRemoteJWKSet(url);
    teamKeySets.set(url.href, keySet);
  }
  return keySet;
}

/** The assertion Access put on the request, or null; never the cookie (see the header comment). */
export function accessAssertionOf(headers: Headers): string | null {
  const value = headers.get(ACCESS_ASSERTION_HEADER);
  return value === null || value.trim() === '' ? null : value.trim();
}

/**
 * Who Access says is signing in: the request's assertion verified for these settings. `keys`
 * defaults to the team's remote key set (cached per isolate).
 */
export async function signInWithAccess(
  headers: Headers,
  settings: AccessSettings,
  keys: JWTVerifyGetKey = accessKeySet(settings.teamDomain),
): Promise<AccessSignIn> {
  return verifyAccessAssertion(accessAssertionOf(headers), settings, keys);
}

/** An assertion (or its absence) verified for these settings with these keys. */
export async function verifyAccessAssertion(
  assertion: string | null,
  settings: AccessSettings,
  keys: JWTVerifyGetKey,
): Promise<AccessSignIn> {
  if (assertion === null) return refuse('missing');
  if (assertion.length > MAX_ASSERTION_LENGTH) return refuse('malformed');
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(assertion, keys, {
      algorithms: ['RS256'],
      issuer: settings.teamDomain,
      audience: settings.audience,
      clockTolerance: ACCESS_CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp', 'iat'],
    }));
  } catch (error) {
    return refuse(refusalKindOf(error));
  }
  return identityOf(claims, settings);
}

/** The verified claims as a person's identity, or the refusal of a token that names none. */
export function identityOf(claims: JWTPayload, settings: AccessSettings): AccessSignIn {
  const { sub, email } = claims;
  // A service token: no person behind it (see the header comment).
  if (sub === '' || (typeof claims.common_name === 'string' && typeof email !== 'string')) return refuse('not_a_person');
  if (typeof sub !== 'string') return refuse('malformed');
  if (typeof email !== 'string' || email === '') return refuse('malformed');
  const kept: Record<string, string> = { email };
  if (typeof claims.country === 'string') kept.country = claims.country;
  return { ok: true, identity: { source: 'access', issuer: settings.teamDomain, subject: sub, display: email, claims: kept } };
}

/**
 * jose's failure as a refusal. Its errors carry a `code` (and, for claims, the claim's name);
 * anything else thrown while verifying is the key set's fetch failing (a network error, a
 * non-200 answer, a body that is no JSON): the team's keys are unavailable, not the user wrong.
 */
export function refusalKindOf(error: unknown): AccessRefusalKind {
  const { code, claim } = (error ?? {}) as { code?: unknown; claim?: unknown };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'aud') return 'wrong_audience';
      if (claim === 'iss') return 'wrong_issuer';
      if (claim === 'nbf') return 'not_yet_valid';
      return 'malformed';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'unknown_key';
    case 'ERR_JWKS_TIMEOUT':
    case 'ERR_JWKS_INVALID':
    case 'ERR_JOSE_GENERIC':
      return 'keys_unavailable';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JWK_INVALID':
      return 'malformed';
    default:
      return 'keys_unavailable';
  }
}

function refuse(kind: AccessRefusalKind): AccessSignIn {
  return { ok: false, refusal: accessRefusal(kind) };
}

/**
 * Access as the sign-in flow's source (SIGN_IN=access): no upstream round trip, the request's
 * assertion names the user at once. It is checked again on the consent form's POST (also under
 * `/authorize`, so Access judged it too): it must still verify, and name the same user the page
 * showed, else nothing is granted — the page's handle alone does not stand for the person.
 * The team's keys are its remote key set, cached per isolate (accessKeySet).
 */
export function accessSource(settings: AccessSettings): IdentitySourceHandler {
  const verified = async (request: Request) => {
    const outcome = await signInWithAccess(request.headers, settings);
    if (outcome.ok) return outcome.identity;
    // Cloudflare's key server out of reach is no fault of the user's: the client is told to try again.
    if (outcome.refusal.kind === 'keys_unavailable')
      throw new SignInFailed('temporarily_unavailable', 'the Cloudflare Access keys could not be fetched', outcome.refusal.reason);
    throw new NotAdmitted(outcome.refusal.reason, false); // its reasons say what to do
  };
  return {
    begin: ({ request }) => verified(request),
    async confirm(request, identity) {
      const now = await verified(request);
      if (userIdOf(now) !== userIdOf(identity))
        throw new SignInFailed(
          'access_denied',
          'the Cloudflare Access user changed between the consent page and its answer',
          'another assertion subject at the consent POST',
        );
    },
  };
}
