/**
 * The first thing the Worker does with a request to the endpoint (after the Host and Origin
 * checks): establish who is asking, or answer with the challenge. "Authorization MUST be
 * included in every HTTP request from client to server", streams and DELETE included; a token
 * is read from the `Authorization` header only, never from the URL.
 */
import { OAuthError, OAuthErrorCode, verifyBearerToken, type AuthInfo } from '@modelcontextprotocol/server';
import { httpErrors, type McpHttpError } from '../core/errors.ts';
import type { AuthConfig } from './auth-config.ts';
import { jwtVerifier, type VerifierFor } from './jwt-verifier.ts';
import { ANONYMOUS, OAUTH_PRINCIPAL_PREFIX, type Principal } from './principal.ts';
import { challenge, metadataUrl, resourceUrl } from './protected-resource.ts';

/** Who is asking, and the SDK's form of it for the 2026-07-28 handler (`ctx.http.authInfo`). */
export interface Authenticated {
  readonly principal: Principal;
  readonly authInfo?: AuthInfo;
  /**
   * The OAuth grant the token belongs to (AUTH=oauth), so that revoking one grant ends what
   * was created under it alone (principals/principal-control.ts); '' otherwise.
   */
  readonly grant?: string;
  /**
   * Since when the request's credential is known good, in ms, for the mark a revocation of the
   * whole principal leaves in its registry (principals/principal-registry.ts): an admission
   * whose credential is not later than the mark is refused. With AUTH=jwt the token's `iat`
   * (null for a token without one: nothing shows it was issued after a revocation); with
   * AUTH=oauth the moment the provider verified the token (its grant was not revoked then:
   * the operator's revocation revokes every grant of the user at the provider first). Absent
   * with AUTH=none, which has no registry.
   */
  readonly issuedAt?: number | null;
  /** The refusal of a credential issued before its principal was revoked: the challenge of an invalid token. */
  readonly revokedToken?: () => McpHttpError;
}

/**
 * What the embedded authorization server (AUTH=oauth) verified about the request's token before
 * the Worker ran: the grant's `props`, and `auth`, the token's own record (the provider's
 * `ctx.auth`): its scopes and its client.
 */
export interface VerifiedToken {
  readonly props: unknown;
  readonly auth: { readonly scope?: readonly string[]; readonly clientId?: string } | undefined;
}

/**
 * `verified`: read only by the mode that has one (reading the execution context is not free).
 */
export type Authenticator = (request: Request, verified: () => VerifiedToken) => Promise<Authenticated | Response>;

/**
 * What `AUTH=oauth` keeps with a grant (`completeAuthorization`'s `props`): `userId` says who.
 * The scopes a request holds are its token's (`completeAuthorization`'s `scope`, narrowed by
 * refreshes), never these: `scopes` here is not read.
 */
export interface GrantProps {
  readonly userId: string;
  readonly scopes?: readonly string[];
  readonly [claim: string]: unknown;
}

export function authenticator(config: AuthConfig, path: string): Authenticator {
  switch (config.mode) {
    case 'none':
      return async () => ({ principal: ANONYMOUS });
    case 'jwt': {
      // One key set per isolate, made at its first token with jose's import (jwt-verifier.ts).
      let verifiers: Promise<VerifierFor> | undefined;
      return async (request) => {
        verifiers ??= jwtVerifier({ issuer: config.issuer, keys: config.keys });
        const verifierFor = await verifiers;
        const resource = resourceUrl(request, path, config.resource);
        // The audience is the configured one, else this request's own resource: the endpoint's
        // URL at the host it names, which the Host allowlist admitted before this step. Decided
        // per request, never kept from an isolate's first one: a Worker served at two hosts
        // (a custom domain and workers.dev, staging and production) accepts at each exactly the
        // tokens issued for it, the same resource its metadata names there, whichever host
        // a fresh isolate was asked first.
        const verifier = verifierFor(config.audience ?? resource.href);
        try {
          const authInfo = await verifyBearerToken(request.headers.get('Authorization') ?? undefined, {
            verifier,
            requiredScopes: [...config.requiredScopes],
            resourceMetadataUrl: metadataUrl(resource),
          });
          const { principal, issuedAt } = authInfo.extra as { principal: Principal; issuedAt: number | null };
          return {
            principal,
            authInfo,
            issuedAt: issuedAt === null ? null : issuedAt * 1_000,
            revokedToken: revokedToken(resource, config.requiredScopes),
          };
        } catch (error) {
          return challenge(error, resource, config.requiredScopes);
        }
      };
    }
    case 'oauth':
      // The embedded authorization server has checked the token (and its audience) before the
      // Worker runs; what is left is the principal, and the scopes this endpoint requires.
      return async (request, verified) => {
        const resource = resourceUrl(request, path, config.resource);
        const { props, auth } = verified();
        const grant = props as GrantProps | undefined;
        if (typeof grant?.userId !== 'string')
          return challenge(new OAuthError(OAuthErrorCode.InvalidToken, 'Missing or invalid access token'), resource, config.requiredScopes);
        // The token's scopes, never the grant's: a client may narrow them when it refreshes
        // (RFC 6749 §6, "the requested scope MUST NOT include any scope not originally
        // granted"), and then holds only those. No record of them: no scopes (fails closed).
        const scopes = [...(auth?.scope ?? [])];
        const clientId = typeof auth?.clientId === 'string' ? auth.clientId : null;
        if (!config.requiredScopes.every((scope) => scopes.includes(scope))) {
          return challenge(new OAuthError(OAuthErrorCode.InsufficientScope, 'Insufficient scope'), resource, config.requiredScopes);
        }
        const principal: Principal = {
          id: `${OAUTH_PRINCIPAL_PREFIX}${grant.userId}`,
          subject: grant.userId,
          clientId,
          scopes,
          // What the grant keeps, but its scopes: the token's are `scopes`, and two lists would disagree.
          claims: claimsOf(grant),
        };
        const token = request.headers.get('Authorization')?.replace(/^Bearer\s+/i, '') ?? '';
        return {
          principal,
          authInfo: { token, clientId: clientId ?? '', scopes, extra: { principal } },
          grant: grantOfToken(token),
          // The provider's tokens carry no issue time: the moment it verified this one stands for it.
          issuedAt: Date.now(),
          revokedToken: revokedToken(resource, config.requiredScopes),
        };
      };
  }
}

/**
 * The refusal of a token its principal's revocation recalled, at admission (core/errors.ts
 * `tokenRevoked`): 401 with the very challenge an invalid token gets here — `invalid_token`, the
 * metadata's URL, the scopes — so that a client does what it does for an expired token:
 * authorize again. Built only when a token is refused.
 */
function revokedToken(resource: URL, requiredScopes: readonly string[]): () => McpHttpError {
  return () => {
    const refused = challenge(new OAuthError(OAuthErrorCode.InvalidToken, TOKEN_REVOKED), resource, requiredScopes);
    return httpErrors.tokenRevoked(refused.headers.get('WWW-Authenticate') ?? 'Bearer error="invalid_token"');
  };
}

const TOKEN_REVOKED = 'The token was issued before its principal was revoked';

/**
 * The grant a token of the embedded authorization server belongs to: its tokens are
 * `<userId>:<grantId>:<secret>` (the provider's format, which its own revocation parses). The
 * provider has verified the token before this runs; only the grant's id is read from it.
 */
export function grantOfToken(token: string): string {
  const parts = token.split(':');
  return parts.length === 3 ? parts[1]! : '';
}

/** A grant's props as a principal's claims: without `scopes`, which the token's own record states. */
function claimsOf({ scopes: _granted, ...claims }: GrantProps): Record<string, unknown> {
  return claims;
}
