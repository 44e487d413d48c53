/**
 * Sign-in through an OpenID Connect issuer (SIGN_IN=oidc), with `oauth4webapi` doing the
 * protocol: discovery (cached per isolate; a failed one is not), the authorization code flow
 * with PKCE S256, `state` (the provider's `beginUpstream` handle: server-side, bound to the
 * browser, once) and `nonce`, the callback's parameters (`validateAuthResponse`: an upstream
 * error, RFC 9207 `iss`), the code exchange (client_secret_basic), and the ID token's claims
 * (`processAuthorizationCodeResponse`: `iss`, `aud`, `exp`, `iat`, `nonce`, `azp`). The ID
 * token's signature is verified too, against the issuer's JWKS (`validateApplicationLevelSignature`):
 * the library leaves it optional, because the token came straight from the issuer over TLS; the
 * issue requires it, and it costs one JWKS fetch per isolate. What is ours: which claims name
 * the user, and who is admitted (admission.ts).
 */
import * as oauth from 'oauth4webapi';
import { admissionRefusal } from './admission.ts';
import { type BeginContext, type FinishContext, type IdentitySourceHandler, NotAdmitted, SignInFailed } from './flow.ts';
import type { SignedInIdentity } from './identity.ts';
import type { OidcSignIn } from './sign-in-config.ts';

/** What `beginUpstream` keeps for the callback. */
interface Pending {
  readonly verifier: string;
  readonly nonce: string;
}

/** Discovery documents, per isolate and issuer: a failure is forgotten, so the next sign-in tries again. */
const discovered = new Map<string, Promise<oauth.AuthorizationServer>>();

/**
 * oauth4webapi refuses http unless told: an http issuer passed sign-in-config.ts only on a
 * loopback host (a provider on this machine, in development), and only then is it told.
 */
const overHttp = (issuer: string) => ({ [oauth.allowInsecureRequests]: new URL(issuer).protocol === 'http:' });

function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  let server = discovered.get(issuer);
  if (server === undefined) {
    const url = new URL(issuer);
    server = oauth
      .discoveryRequest(url, { algorithm: 'oidc', ...overHttp(issuer) })
      .then((response) => oauth.processDiscoveryResponse(url, response));
    discovered.set(issuer, server);
    server.catch(() => discovered.delete(issuer));
  }
  return server;
}

/** The claims kept in the grant (strings only): they become the principal's `claims`. */
const KEPT_CLAIMS = ['email', 'name', 'preferred_username'] as const;

export function oidcSource(config: OidcSignIn): IdentitySourceHandler {
  const client: oauth.Client = { client_id: config.clientId };
  const clientAuth = oauth.ClientSecretBasic(config.clientSecret);
  return {
    async begin({ authRequest, oauth: helpers, callbackUrl }: BeginContext): Promise<Response> {
      const server = await reach(() => discover(config.issuer));
      if (server.authorization_endpoint === undefined)
        throw new SignInFailed('server_error', 'the identity provider has no authorization endpoint');
      const verifier = oauth.generateRandomCodeVerifier();
      const nonce = oauth.generateRandomNonce();
      const pending: Pending = { verifier, nonce };
      const { state, headers } = await helpers.beginUpstream(authRequest, { data: pending });
      const url = new URL(server.authorization_endpoint);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: config.clientId,
        redirect_uri: callbackUrl,
        scope: config.scopes.join(' '),
        state,
        nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      headers.set('Location', url.href);
      return new Response(null, { status: 302, headers });
    },

    async finish({ request, resumed, callbackUrl }: FinishContext): Promise<SignedInIdentity> {
      const pending = resumed.data as Pending;
      const server = await reach(() => discover(config.issuer));
      const url = new URL(request.url);
      let claims: oauth.IDToken;
      try {
        // `state` was matched already: finishUpstream found it, for this browser, once.
        const params = oauth.validateAuthResponse(server, client, url, url.searchParams.get('state') ?? '');
        const response = await oauth.authorizationCodeGrantRequest(
          server,
          client,
          clientAuth,
          params,
          callbackUrl,
          pending.verifier,
          overHttp(config.issuer),
        );
        const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
          expectedNonce: pending.nonce,
          requireIdToken: true,
        });
        await oauth.validateApplicationLevelSignature(server, response, overHttp(config.issuer));
        claims = oauth.getValidatedIdTokenClaims(result)!;
      } catch (error) {
        throw failure(error);
      }
      const refusal = admissionRefusal(claims, config.admission);
      if (refusal !== undefined) throw new NotAdmitted(refusal);
      return identityOf(claims);
    },
  };
}

/** The user, as the ID token names them: `iss` and `sub` are who; the rest is what the page shows. */
export function identityOf(claims: oauth.IDToken): SignedInIdentity {
  const kept: Record<string, string> = {};
  for (const name of KEPT_CLAIMS) {
    const value = claims[name];
    if (typeof value === 'string' && value.length <= 256) kept[name] = value;
  }
  if (typeof claims.email_verified === 'boolean') kept.email_verified = String(claims.email_verified);
  return {
    source: 'oidc',
    issuer: claims.iss,
    subject: claims.sub,
    display: kept.email ?? kept.preferred_username ?? kept.name ?? claims.sub,
    claims: kept,
  };
}

/** The issuer could not be reached, or its discovery document is not one: the client is told to try later. */
async function reach<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch {
    throw new SignInFailed('temporarily_unavailable', 'the identity provider could not be reached');
  }
}

/** Why the callback failed, as the client's redirect URI hears it: the upstream's refusal, or a sign-in that did not verify. */
function failure(error: unknown): SignInFailed {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof oauth.AuthorizationResponseError) {
    // The upstream's own answer (the user declined, or it refused): access_denied, with its code.
    return new SignInFailed('access_denied', `the identity provider answered ${error.error}`, error.error_description ?? undefined);
  }
  if (error instanceof oauth.ResponseBodyError)
    return new SignInFailed(
      'access_denied',
      `the identity provider refused the code (${error.error})`,
      error.error_description ?? undefined,
    );
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError)
    return new SignInFailed('access_denied', "the identity provider's answer did not verify", detail);
  return new SignInFailed('temporarily_unavailable', 'the identity provider could not be reached', detail);
}
