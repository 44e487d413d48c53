/**
 * The resource's side of discovery (RFC 9728) and of refusal (RFC 6750 challenges), built with
 * the SDK's helpers. The metadata is served at both well-known forms: the path-suffixed one
 * (`/.well-known/oauth-protected-resource/mcp`, what clients try first) and the root one.
 */
import { bearerAuthChallengeResponse, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server';

export { METADATA_ROOT } from './well-known.ts';

/** The canonical URL of the endpoint: the configured one, else the endpoint as requested (no query). */
export function resourceUrl(request: Request, path: string, configured: string | undefined): URL {
  return new URL(configured ?? new URL(path, request.url).href);
}

export const metadataUrl = (resource: URL): string => getOAuthProtectedResourceMetadataUrl(resource);

export function metadataDocument(resource: URL, authorizationServer: string, scopes: readonly string[]): Record<string, unknown> {
  return {
    resource: resource.href,
    authorization_servers: [authorizationServer],
    ...(scopes.length > 0 && { scopes_supported: [...scopes] }),
    bearer_methods_supported: ['header'],
  };
}

/** 401 `invalid_token` or 403 `insufficient_scope`, with `resource_metadata` (and `scope`) in `WWW-Authenticate`. */
export function challenge(error: unknown, resource: URL, requiredScopes: readonly string[]): Response {
  return bearerAuthChallengeResponse(error, { requiredScopes: [...requiredScopes], resourceMetadataUrl: metadataUrl(resource) });
}
