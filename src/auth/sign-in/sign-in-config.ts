/**
 * Who signs users in to the embedded authorization server (`AUTH=oauth`): `SIGN_IN` and its
 * companions in wrangler `[vars]` (and one secret). `demo`, the default, is the page that believes
 * any name (consent-page.ts, loopback only): nothing changes for a deployment that sets nothing.
 * `oidc` is an OpenID Connect issuer (oidc.ts); `access`, Cloudflare Access in front of
 * `/authorize` (access.ts, its settings read by access-settings.ts); `github`, a GitHub OAuth app
 * (github.ts, github-source.ts). A missing or malformed value is a configuration error that
 * names the fix, never a fallback to the demo.
 */
import { readAccessSettings, type AccessSettings, type AccessVars } from './access-settings.ts';
import { readGitHubConfig, type GitHubConfig, type GitHubVars } from './github.ts';
import { isHttpsOrLoopback } from '../../core/allowlist.ts';

export interface SignInVars extends AccessVars, GitHubVars {
  /** `demo` (default), `oidc`, `access` or `github`. */
  readonly SIGN_IN?: string;
  /** oidc: the issuer's URL, whose `/.well-known/openid-configuration` is its discovery document. */
  readonly OIDC_ISSUER?: string;
  /** oidc: this server's client id at the issuer. */
  readonly OIDC_CLIENT_ID?: string;
  /** oidc, secret (`wrangler secret put OIDC_CLIENT_SECRET`): the client's secret, sent as client_secret_basic. */
  readonly OIDC_CLIENT_SECRET?: string;
  /** oidc: the scopes asked of the issuer; default `openid email profile`. */
  readonly OIDC_SCOPES?: string;
  /** oidc: only users whose verified `email` is in one of these domains (comma- or space-separated). */
  readonly OIDC_ALLOWED_EMAIL_DOMAINS?: string;
  /** oidc: only users whose `groups` claim holds this group. */
  readonly OIDC_REQUIRED_GROUP?: string;
}

/** Who may sign in, of those the issuer vouches for. Empty: anyone it signs in. */
export interface Admission {
  /** Lowercase domains; the user's `email` must be verified and end in `@<one of them>`. */
  readonly emailDomains: readonly string[];
  readonly group: string | undefined;
}

export interface OidcSignIn {
  readonly kind: 'oidc';
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: readonly string[];
  readonly admission: Admission;
}

export type SignInConfig =
  | { readonly kind: 'demo' }
  | OidcSignIn
  | { readonly kind: 'access'; readonly settings: AccessSettings }
  | { readonly kind: 'github'; readonly config: GitHubConfig };

const KINDS = ['oidc', 'access', 'github'] as const;

export const DEFAULT_OIDC_SCOPES = ['openid', 'email', 'profile'] as const;

const list = (text: string | undefined) => (text ?? '').split(/[\s,]+/).filter((item) => item !== '');

export function readSignInConfig(vars: SignInVars): SignInConfig {
  const kind = (vars.SIGN_IN ?? '').trim() || 'demo';
  if (kind === 'demo') return { kind };
  if (kind === 'access') return { kind, settings: readAccessSettings(vars) };
  if (kind === 'github') return { kind, config: readGitHubConfig(vars) };
  if (kind !== 'oidc')
    throw new Error(
      `configuration: SIGN_IN must be ${KINDS.map((name) => JSON.stringify(name)).join(', ')} or "demo" (the default), got ${JSON.stringify(kind)}`,
    );
  const issuer = required(vars.OIDC_ISSUER, 'OIDC_ISSUER', "in [vars], your identity provider's issuer URL");
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`configuration: OIDC_ISSUER must be the issuer's absolute URL, got ${JSON.stringify(issuer)}`);
  }
  // Discovery and the code exchange carry the client's secret and the user's tokens: https,
  // except to a provider on this machine (localhost, 127.0.0.0/8, [::1]), in development, where
  // nothing crosses a network (scripts/ci/oidc-e2e.mjs runs a real provider on 127.0.0.1).
  if (!isHttpsOrLoopback(url))
    throw new Error(
      `configuration: OIDC_ISSUER must be an https URL (http only for a provider on this machine: localhost, 127.0.0.0/8 or [::1]), got ${JSON.stringify(issuer)}`,
    );
  const scopes = vars.OIDC_SCOPES === undefined ? [...DEFAULT_OIDC_SCOPES] : list(vars.OIDC_SCOPES);
  // OpenID Connect Core §3.1.2.1: "OpenID Connect requests MUST contain the openid scope value."
  if (!scopes.includes('openid'))
    throw new Error(`configuration: OIDC_SCOPES must include "openid", got ${JSON.stringify(vars.OIDC_SCOPES)}`);
  const domains = list(vars.OIDC_ALLOWED_EMAIL_DOMAINS).map((domain) => domain.toLowerCase().replace(/^@/, ''));
  for (const domain of domains) {
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain))
      throw new Error(`configuration: OIDC_ALLOWED_EMAIL_DOMAINS lists domains such as example.com, got ${JSON.stringify(domain)}`);
  }
  const group = vars.OIDC_REQUIRED_GROUP?.trim() || undefined;
  return {
    kind,
    // As written: it is compared, byte for byte, with the discovery document's `issuer` and the ID token's `iss`.
    issuer,
    clientId: required(vars.OIDC_CLIENT_ID, 'OIDC_CLIENT_ID', 'in [vars], the client id your identity provider gave this server'),
    clientSecret: required(
      vars.OIDC_CLIENT_SECRET,
      'OIDC_CLIENT_SECRET',
      'as a secret: `wrangler secret put OIDC_CLIENT_SECRET` (the client secret your identity provider gave this server)',
    ),
    scopes,
    admission: { emailDomains: domains, group },
  };
}

function required(value: string | undefined, name: string, fix: string): string {
  const text = value?.trim();
  if (text === undefined || text === '') throw new Error(`configuration: SIGN_IN=oidc needs ${name}: set it ${fix}`);
  return text;
}
