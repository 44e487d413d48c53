/**
 * The GitHub sign-in's settings (`SIGN_IN = "github"`): the OAuth app's client id and secret, and
 * GitHub's two origins — github.com's unless code names another (an Enterprise Server, a test's
 * stand-in), never a variable. Pure: read once per isolate, a missing or malformed value a
 * configuration error that names the fix. The exchange itself is github.ts's.
 */
import { isHttpsOrLoopback } from '../../core/allowlist.ts';

export interface GitHubVars {
  /** The OAuth app's client id (GitHub: Settings → Developer settings → OAuth Apps). */
  readonly GITHUB_CLIENT_ID?: string;
  /** Its client secret: a secret (`wrangler secret put GITHUB_CLIENT_SECRET`), never a [vars] entry. */
  readonly GITHUB_CLIENT_SECRET?: string;
}

/** Where GitHub is. Only tests (a local stand-in) and an Enterprise Server pass anything else. */
export interface GitHubEndpoints {
  /** The web origin: `/login/oauth/authorize` and `/login/oauth/access_token` are under it. */
  readonly web: string;
  /** The REST API's base: `/user` is under it (`https://HOST/api/v3` on an Enterprise Server). */
  readonly api: string;
}

export const GITHUB_ENDPOINTS: GitHubEndpoints = { web: 'https://github.com', api: 'https://api.github.com' };

export interface GitHubConfig {
  readonly clientId: string;
  readonly clientSecret: string;
  /** The identity's issuer: the web base (`https://github.com`). */
  readonly issuer: string;
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly userUrl: string;
}

/**
 * The GitHub source's configuration. `endpoints` is code, not a variable: a deployment cannot
 * be pointed at another GitHub by a [vars] entry; an override must be written where it is used,
 * and must be https (or http on this machine's loopback, for a test's stand-in).
 */
export function readGitHubConfig(vars: GitHubVars, endpoints: GitHubEndpoints = GITHUB_ENDPOINTS): GitHubConfig {
  const clientId = vars.GITHUB_CLIENT_ID?.trim() ?? '';
  if (clientId === '') {
    throw new Error('configuration: GitHub sign-in needs GITHUB_CLIENT_ID, the client id of the GitHub OAuth app (in [vars])');
  }
  if (!/^[\x21-\x7e]{1,128}$/.test(clientId))
    throw new Error("configuration: GITHUB_CLIENT_ID must be the OAuth app's client id (printable ASCII, no spaces)");
  const clientSecret = vars.GITHUB_CLIENT_SECRET?.trim() ?? '';
  if (clientSecret === '') {
    throw new Error(
      "configuration: GitHub sign-in needs GITHUB_CLIENT_SECRET, the OAuth app's client secret: set it with `wrangler secret put GITHUB_CLIENT_SECRET` (a secret, not a [vars] entry)",
    );
  }
  const web = baseUrl('web', endpoints.web);
  const api = baseUrl('api', endpoints.api);
  return {
    clientId,
    clientSecret,
    issuer: web,
    authorizeUrl: `${web}/login/oauth/authorize`,
    tokenUrl: `${web}/login/oauth/access_token`,
    userUrl: `${api}/user`,
  };
}

/** A base URL without its trailing `/`: https, or http on loopback; no credentials, query or fragment. */
function baseUrl(name: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`configuration: the GitHub ${name} endpoint must be an absolute URL, got ${JSON.stringify(text)}`);
  }
  const secure = isHttpsOrLoopback(url);
  if (!secure || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new Error(
      `configuration: the GitHub ${name} endpoint must be an https URL (http only on loopback) without credentials, query or fragment, got ${JSON.stringify(text)}`,
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
