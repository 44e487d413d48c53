/**
 * GitHub as the sign-in flow's source (SIGN_IN=github): github.ts speaks to GitHub, this file
 * plugs it into flow.ts. `begin` keeps a PKCE verifier with the flow's upstream transaction
 * (`beginUpstream`: server-side, bound to this browser, once) and sends the browser to GitHub
 * with its `state` and the S256 challenge; `finish` reads GitHub's answer at the callback (the
 * `state` already matched there) and exchanges the code with that verifier. Every refusal
 * github.ts returns becomes the OAuth error the client's redirect URI gets, its words the
 * description, its reason the log's detail.
 */
import type { AuthorizationErrorCode } from '@cloudflare/workers-oauth-provider';
import * as oauth from 'oauth4webapi';
import { type IdentitySourceHandler, SignInFailed } from './flow.ts';
import { type GitHubConfig, type GitHubRefusal, githubAuthorizationUrl, githubCallbackRefusal, githubIdentity } from './github.ts';

interface Pending {
  readonly verifier: string;
}

/** `fetch` only for tests; by default the Worker's. */
export function githubSource(config: GitHubConfig, fetch?: (request: Request) => Promise<Response>): IdentitySourceHandler {
  return {
    async begin({ authRequest, oauth: helpers, callbackUrl }) {
      const verifier = oauth.generateRandomCodeVerifier();
      const pending: Pending = { verifier };
      const { state, headers } = await helpers.beginUpstream(authRequest, { data: pending });
      const codeChallenge = await oauth.calculatePKCECodeChallenge(verifier);
      headers.set('Location', githubAuthorizationUrl({ config, redirectUri: callbackUrl, state, codeChallenge }));
      return new Response(null, { status: 302, headers });
    },

    async finish({ request, resumed, callbackUrl }) {
      const params = new URL(request.url).searchParams;
      const refusal = githubCallbackRefusal(params);
      if (refusal !== undefined) throw failed(refusal);
      const code = params.get('code');
      // GitHub sends a code or an error; neither is no sign-in.
      if (code === null || code === '')
        throw new SignInFailed('access_denied', 'GitHub sent back no code', 'no code and no error at the callback');
      const { verifier } = resumed.data as Pending;
      const outcome = await githubIdentity({ config, code, redirectUri: callbackUrl, codeVerifier: verifier, fetch });
      if (!outcome.ok) throw failed(outcome.refusal);
      return outcome.identity;
    },
  };
}

/** GitHub's refusals carry only authorization-response codes (access_denied, server_error, temporarily_unavailable). */
const failed = (refusal: GitHubRefusal) => new SignInFailed(refusal.oauthError as AuthorizationErrorCode, refusal.message, refusal.reason);
