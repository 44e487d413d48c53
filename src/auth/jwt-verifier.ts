/**
 * `AUTH=jwt`: an access token is a JWT from an external authorization server, verified with
 * `jose` against the server's keys: signature, issuer, audience (this resource: "MCP servers
 * MUST validate that access tokens were issued specifically for them"), expiry. The SDK's
 * `verifyBearerToken` then checks scopes and turns every failure into its challenge.
 */
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Principal } from './principal.ts';

export interface JwtSettings {
  readonly issuer: string;
  readonly keys: { readonly url: URL } | { readonly jwks: { keys: JsonWebKey[] } };
  readonly audience: string;
}

/** The principal a token stands for: its issuer and subject; the scopes and claims of this token. */
export function principalOfClaims(claims: JWTPayload, scopes: readonly string[]): Principal {
  const subject = claims.sub ?? null;
  const clientId = (claims.client_id ?? claims.azp ?? null) as string | null;
  return { id: `${claims.iss}#${subject ?? clientId}`, subject, clientId, scopes, claims };
}

/** `scope` (RFC 9068: space-separated) or `scp` (an array, as some servers issue it). */
function scopesOf(claims: JWTPayload): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((scope) => scope !== '');
  if (Array.isArray(claims.scp)) return claims.scp.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

export function jwtVerifier({ issuer, keys, audience }: JwtSettings): OAuthTokenVerifier {
  // One key set per isolate: remote keys are fetched once and refreshed by jose on an unknown `kid`.
  const keySet = 'url' in keys ? createRemoteJWKSet(keys.url) : createLocalJWKSet(keys.jwks as Parameters<typeof createLocalJWKSet>[0]);
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(token, keySet, { issuer, audience }));
      } catch (error) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${(error as { code?: string }).code ?? 'not verifiable'}`);
      }
      if (claims.sub === undefined && claims.client_id === undefined && claims.azp === undefined) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: it names no subject');
      }
      if (claims.exp === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: it never expires');
      const scopes = scopesOf(claims);
      const principal = principalOfClaims(claims, scopes);
      return { token, clientId: principal.clientId ?? '', scopes, expiresAt: claims.exp, extra: { principal } };
    },
  };
}
