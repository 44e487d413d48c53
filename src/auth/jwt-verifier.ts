/**
 * `AUTH=jwt`: an access token is a JWT from an external authorization server, verified with
 * `jose` against the server's keys: signature, issuer, audience (this resource: "MCP servers
 * MUST validate that access tokens were issued specifically for them"), expiry. The SDK's
 * `verifyBearerToken` then checks scopes and turns every failure into its challenge. jose itself
 * is jwt-keys.ts's, imported when the verifier is made (at the isolate's first token): a Worker
 * of another mode never evaluates it.
 */
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import type { JWTPayload } from 'jose';
import type { JwtKeys } from './jwt-keys.ts';
import type { Principal } from './principal.ts';

export interface JwtSettings {
  readonly issuer: string;
  readonly keys: JwtKeys;
}

/** A verifier of the issuer's tokens for one audience. */
export type VerifierFor = (audience: string) => OAuthTokenVerifier;

/**
 * What separates a principal id's issuer from the name after it, and says whose name it is: a
 * user's (`sub`), or, in a token with no `sub` (a client-credentials grant), the OAuth client's
 * (`client_id`, else `azp`).
 *
 * Why no name of one kind can give the id of the other: every token verified here has the same
 * `iss`, the configured AUTH_ISSUER exactly (jwtVerify's `issuer`), so every id starts with that
 * one string I, and the character right after it says which kind: `#` for a user, `!` for a
 * client. Past that prefix each kind's id is its name verbatim, so each is injective, and
 * nothing in I (AUTH_ISSUER may be any string, `#` and `!client#` included), in a `sub` or in a
 * client id can move that character. An id with a marker inside the name (`I#!client#x`, the
 * user `!client#x`) still has `#` at that place. User ids keep the form they always had, so their
 * sessions and tasks keep their addresses; a client's id differs from what it was (`I#<client>`,
 * which a user of that name also had), so sessions a client opened before are not reachable.
 * Both marks hold `#`, so no id here is `anonymous` (the bare-named principal of AUTH=none).
 * A server that names the client in `sub` itself (RFC 9068 §2.2 suggests it for client
 * credentials) makes it a user here: keeping those apart from its users' is then its job
 * (RFC 9068 §5: it must not let a client pick an id that collides with a user's `sub`).
 */
const USER_MARK = '#';
const CLIENT_MARK = '!client#';

/** The principal a token stands for: its issuer and subject, or its client; the scopes and claims of this token. */
export function principalOfClaims(claims: JWTPayload, scopes: readonly string[]): Principal {
  const subject = stringClaim(claims, 'sub');
  const clientId = claims.client_id != null ? stringClaim(claims, 'client_id') : stringClaim(claims, 'azp');
  if (subject !== null) return { id: `${claims.iss}${USER_MARK}${subject}`, subject, clientId, scopes, claims };
  if (clientId !== null) return { id: `${claims.iss}${CLIENT_MARK}${clientId}`, subject, clientId, scopes, claims };
  throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: it names no subject');
}

/**
 * `sub` (RFC 7519), `client_id` (RFC 9068) and `azp` (OpenID Connect) are strings. jose checks
 * none of their types, and a number, array or object would be turned into text that a string
 * could spell too (`5` and `"5"`, every object as `[object Object]`): such a token is refused.
 * A null claim is no claim.
 */
function stringClaim(claims: JWTPayload, name: 'sub' | 'client_id' | 'azp'): string | null {
  const value = claims[name];
  if (value == null) return null;
  if (typeof value !== 'string') throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: its ${name} is not a string`);
  return value;
}

/** `scope` (RFC 9068: space-separated) or `scp` (an array, as some servers issue it). */
function scopesOf(claims: JWTPayload): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((scope) => scope !== '');
  if (Array.isArray(claims.scp)) return claims.scp.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

/**
 * One key set per isolate (remote keys are fetched once and refreshed by jose on an unknown
 * `kid`), shared by the verifiers of every audience: a verifier holds nothing else, so one is
 * made per request rather than kept. Made with jose's import (jwt-keys.ts): call it once per
 * isolate, at its first token.
 */
export async function jwtVerifier({ issuer, keys }: JwtSettings): Promise<VerifierFor> {
  const { claimsVerifier } = await import('./jwt-keys.ts');
  const verifyClaims = claimsVerifier(keys);
  return (audience) => ({
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let claims: JWTPayload;
      try {
        claims = await verifyClaims(token, { issuer, audience });
      } catch (error) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${(error as { code?: string }).code ?? 'not verifiable'}`);
      }
      const scopes = scopesOf(claims);
      const principal = principalOfClaims(claims, scopes);
      if (claims.exp === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: it never expires');
      // `iat` (jose has checked it is a number where present): what a revocation of the
      // principal is checked against at admission (principals/principal-registry.ts).
      const issuedAt = claims.iat ?? null;
      return { token, clientId: principal.clientId ?? '', scopes, expiresAt: claims.exp, extra: { principal, issuedAt } };
    },
  });
}
