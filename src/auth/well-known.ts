/**
 * The root form of the resource metadata's well-known path (RFC 9728 §3.1), apart from
 * protected-resource.ts, which builds the documents and challenges with the SDK's helpers: the
 * authorization server's front (oauth-server.ts), imported only by an AUTH=oauth Worker at its
 * first request, needs the path and not the SDK, and what it imports is evaluated with it.
 */
export const METADATA_ROOT = '/.well-known/oauth-protected-resource';
