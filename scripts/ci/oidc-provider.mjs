// A real OpenID provider on 127.0.0.1 for scripts/ci/oidc-e2e.mjs: panva's `oidc-provider` (the
// certified implementation, pinned in devDependencies), in this process, on a free loopback
// port. One static confidential client (our Worker: client_secret_basic, its callbacks as the
// only redirect URIs, PKCE required), any user: the provider's development interactions
// (`devInteractions`) show a login form that takes any login and any password, the login
// becoming the `sub`. Nothing here is fit for anything but a test on this machine: the signing
// keys are the library's development keys, the cookie key is fixed.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

/** Starts the provider; `{ issuer, close }`. `redirectUris` are the Workers' `/authorize/callback`s. */
export async function startProvider({ clientId, clientSecret, redirectUris }) {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The scopes' claims in the ID token itself, which is all our Worker reads (no userinfo call).
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@example.test`, email_verified: true, name: sub }),
    }),
    cookies: { keys: ['oidc-e2e: a fixed cookie key, for a provider on loopback only'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    // Short lives, said outright (the defaults are fine, and their notices are noise here).
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
  });
  // Its warnings (development keys, dev interactions) are this script's intent, not news.
  provider.on('server_error', (_ctx, error) => console.error(`oidc-provider: ${error}`));
  server.on('request', provider.callback());
  return {
    issuer,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
