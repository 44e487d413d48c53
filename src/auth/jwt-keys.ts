/**
 * AUTH=jwt's use of `jose`: the issuer's key set, and a token's signature, issuer, audience and
 * times verified against it. Imported by jwt-verifier.ts at the first token an isolate verifies
 * (`import()`, which wrangler's bundler keeps in the one bundle but evaluates only then), so a
 * Worker of another mode never evaluates jose; what a verified token stands for, and every
 * refusal's wording, stay in jwt-verifier.ts.
 */
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/** Where the issuer's signing keys are (`AUTH_JWKS_URL`), or the key set itself (`AUTH_JWKS`). */
export type JwtKeys = { readonly url: URL } | { readonly jwks: { keys: JsonWebKey[] } };

/** Verifies a token's signature with the issuer's keys, and its issuer, audience and times; resolves with its claims. */
export type ClaimsVerifier = (token: string, expected: { readonly issuer: string; readonly audience: string }) => Promise<JWTPayload>;

/** The verifier of tokens signed with `keys`: remote keys are fetched at the first token, and again by jose on an unknown `kid`. */
export function claimsVerifier(keys: JwtKeys): ClaimsVerifier {
  const keySet = 'url' in keys ? createRemoteJWKSet(keys.url) : createLocalJWKSet(keys.jwks as Parameters<typeof createLocalJWKSet>[0]);
  return async (token, expected) => (await jwtVerify(token, keySet, expected)).payload;
}
