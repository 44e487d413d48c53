/**
 * Access tokens for the `auth` test project (AUTH=jwt): signed here with a key made for these
 * tests only, whose public half is the project's AUTH_JWKS (vitest.config.ts).
 */
import { importJWK, SignJWT } from 'jose';

export const TEST_ISSUER = 'https://issuer.test';
export const TEST_RESOURCE = 'http://localhost/mcp';
/** The operator's bearer token (`ADMIN_TOKEN`) in the projects that serve the admin routes. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-not-a-secret';
export const TEST_PUBLIC_JWKS = {
  keys: [
    {
      kty: 'EC',
      crv: 'P-256',
      x: 'levMDvVI-bWCZtdXt13v5gpnZ5dGrBVqFTfZCAIvtUM',
      y: 'Bje71D5_9dCXhWxB-FMm9RZn3UenbGsWOThNhEIbrSo',
      kid: 'test-key-1',
      alg: 'ES256',
      use: 'sig',
    },
  ],
};
const TEST_PRIVATE_JWK = { ...TEST_PUBLIC_JWKS.keys[0]!, d: 'DH18HpmJYizVa29t3GnlUJOhIx4375eHjArtF2jxOSk' };

export interface TokenOptions {
  readonly scopes?: readonly string[];
  readonly audience?: string;
  readonly issuer?: string;
  /** Seconds from now; negative for an expired token. */
  readonly expiresIn?: number;
  readonly claims?: Record<string, unknown>;
  /** `iat`, in seconds since the epoch: now unless told; null for a token without one. */
  readonly issuedAt?: number | null;
}

/**
 * A token for `subject`, valid for this resource unless told otherwise. `null`: a token with no
 * `sub`, as a client-credentials grant issues one, standing for its `client_id` (set it in `claims`).
 */
export async function tokenFor(subject: string | null, options: TokenOptions = {}): Promise<string> {
  const { scopes = ['mcp'], audience = TEST_RESOURCE, issuer = TEST_ISSUER, expiresIn = 300, claims = {} } = options;
  const key = await importJWK(TEST_PRIVATE_JWK, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  const token = new SignJWT({ scope: scopes.join(' '), client_id: 'test-client', ...claims });
  if (subject !== null) token.setSubject(subject);
  const issuedAt = options.issuedAt === undefined ? now : options.issuedAt;
  if (issuedAt !== null) token.setIssuedAt(issuedAt);
  return token
    .setProtectedHeader({ alg: 'ES256', kid: 'test-key-1' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setExpirationTime(now + expiresIn)
    .sign(key);
}

/** The Authorization header of a fresh token for `subject`. */
export async function bearer(subject: string | null, options: TokenOptions = {}): Promise<Record<string, string>> {
  return { Authorization: `Bearer ${await tokenFor(subject, options)}` };
}
