/**
 * What `init --auth oauth --idp <source>` writes for its sign-in (the Worker's `SIGN_IN`): the
 * `[vars]` lines, the secret's name, the README's provider-side steps, `.dev.vars.example`, and
 * the stand-in values the project's own test signs in with. One table row per source, so that
 * each says its variables once.
 *
 * The variables a user must fill in are written empty, never as an example value: an empty one
 * is a configuration error whose message names the variable and where its value comes from
 * (auth/sign-in/sign-in-config.ts and its neighbours), so the Worker refuses to serve until it
 * is filled in; an example value (`https://accounts.example.com`) would be believed, and fail
 * later at the provider, or be fetched.
 */
import type { Idp } from './init-options.ts';

export interface SignInVar {
  readonly name: string;
  /** `''`: a placeholder the user must fill in (the Worker refuses to serve until then). */
  readonly value: string;
  /** Its comment in wrangler.toml, above it. */
  readonly comment: string;
  /** Written commented out (`# NAME = "value"`): optional. */
  readonly optional?: true;
}

export interface SignInSource {
  readonly title: string;
  readonly vars: readonly SignInVar[];
  /** The secret it needs (`npx wrangler secret put <name>`), never in wrangler.toml. */
  readonly secret: string | undefined;
  /** Values the project's test signs in with, so that it needs no provider (none is reached). */
  readonly testValues: Readonly<Record<string, string>>;
  /** Each placeholder (and the secret) emptied: what the Worker's log says, naming the fix. */
  readonly refusals: readonly (readonly [variable: string, logged: string])[];
  /** The README's section: what to set up at the provider, then here. */
  readonly readme: string;
}

const CALLBACK = "`https://<your host>/authorize/callback` (`MCP_RESOURCE`'s origin, then `/authorize/callback`)";
const UNFILLED =
  "Until the variables below are filled in, the Worker refuses every request (`500`) and its log\n(`npm run dev`'s console, `npx wrangler tail`) names the one to set.";

export const SIGN_IN_SOURCES: Readonly<Record<Exclude<Idp, 'demo'>, SignInSource>> = {
  oidc: {
    title: 'your OpenID Connect provider (`SIGN_IN = "oidc"`)',
    vars: [
      { name: 'OIDC_ISSUER', value: '', comment: 'The issuer\'s https URL, exactly as its discovery document\'s "issuer" says it.' },
      { name: 'OIDC_CLIENT_ID', value: '', comment: 'The client id your provider gave this server.' },
      { name: 'OIDC_SCOPES', value: 'openid email profile', comment: 'Asked of the provider; must include openid.' },
      {
        name: 'OIDC_ALLOWED_EMAIL_DOMAINS',
        value: 'example.com',
        comment: 'Optional: only users whose verified e-mail is in one of these domains (others get a page saying why).',
        optional: true,
      },
      {
        name: 'OIDC_REQUIRED_GROUP',
        value: 'mcp-users',
        comment: 'Optional: only users whose "groups" claim holds this group.',
        optional: true,
      },
    ],
    secret: 'OIDC_CLIENT_SECRET',
    testValues: { OIDC_ISSUER: 'https://issuer.example', OIDC_CLIENT_ID: 'test-client', OIDC_CLIENT_SECRET: 'test-secret' },
    refusals: [
      ['OIDC_ISSUER', 'OIDC_ISSUER'],
      ['OIDC_CLIENT_ID', 'OIDC_CLIENT_ID'],
      ['OIDC_CLIENT_SECRET', 'wrangler secret put OIDC_CLIENT_SECRET'],
    ],
    readme: `Users sign in at your identity provider (Google, Microsoft Entra, Okta, Auth0, Keycloak,
Authentik, …); the consent page then shows who is signing in.
${UNFILLED}

1. **At your provider**, create a *web application* (confidential) client:
   - redirect URI: ${CALLBACK},
     exactly, no wildcard; for \`npm run dev\`, also \`http://localhost:8787/authorize/callback\`
     (or a second client for local work);
   - grant type authorization code, PKCE (S256) allowed, client authentication
     \`client_secret_basic\` (most providers' default);
   - scopes \`openid email profile\` (add \`groups\`, or your provider's equivalent, for
     \`OIDC_REQUIRED_GROUP\`).
2. **In wrangler.toml \`[vars]\`**: \`OIDC_ISSUER\` (the issuer URL exactly as the provider writes it:
   Google \`https://accounts.google.com\`, Entra \`https://login.microsoftonline.com/<tenant>/v2.0\`,
   Okta \`https://<org>.okta.com\`, Auth0 \`https://<tenant>.auth0.com/\`, Keycloak
   \`https://<host>/realms/<realm>\`) and \`OIDC_CLIENT_ID\`; optionally \`OIDC_ALLOWED_EMAIL_DOMAINS\`
   and \`OIDC_REQUIRED_GROUP\`.
3. **The client secret**, never in wrangler.toml: \`npx wrangler secret put OIDC_CLIENT_SECRET\`
   (for \`npm run dev\`: \`cp .dev.vars.example .dev.vars\`, and put it there).`,
  },
  access: {
    title: 'Cloudflare Access (`SIGN_IN = "access"`)',
    vars: [
      {
        name: 'ACCESS_TEAM_DOMAIN',
        value: '',
        comment: 'Your Zero Trust team domain: https://<team>.cloudflareaccess.com (Zero Trust > Settings).',
      },
      {
        name: 'ACCESS_AUD',
        value: '',
        comment: "The Access application's Application Audience (AUD) Tag, 64 hex characters (its Overview tab).",
      },
    ],
    secret: undefined,
    testValues: { ACCESS_TEAM_DOMAIN: 'https://test-team.cloudflareaccess.com', ACCESS_AUD: 'a'.repeat(64) },
    refusals: [
      ['ACCESS_TEAM_DOMAIN', 'ACCESS_TEAM_DOMAIN'],
      ['ACCESS_AUD', 'ACCESS_AUD'],
    ],
    readme: `Your team's Cloudflare Access signs users in (its identity providers and policies: SSO, MFA,
device posture); the Worker verifies the \`Cf-Access-Jwt-Assertion\` Access adds and the user goes
straight to the consent page.
${UNFILLED}

1. **In Zero Trust** > Access > Applications > *Add an application* > *Self-hosted*:
   - application domain: your server's host and the path **\`/authorize\`** only
     (\`mcp.example.com/authorize\`; Access covers everything under it, the callback included).
     **Not the whole host, not \`/mcp\`**: MCP clients cannot pass Access's login, and \`/mcp\`,
     \`/token\`, \`/register\` and \`/.well-known/…\` are protected by this server's OAuth tokens;
   - policies: who may sign in (this is the admission rule); no *Service Auth* policy (a service
     token is not a person, and is refused);
   - session duration: short (15 min – 1 h), the assertion is needed only to sign in;
   - copy the application's **Application Audience (AUD) Tag** (its Overview tab) and your team
     domain (Zero Trust > Settings).
2. **In wrangler.toml \`[vars]\`**: \`ACCESS_TEAM_DOMAIN\` (\`https://<team>.cloudflareaccess.com\`) and
   \`ACCESS_AUD\` (the tag). Neither is a secret. Serve \`/authorize\` only through Access: a custom
   domain the application covers, with \`workers_dev = false\` and \`preview_urls = false\` in
   wrangler.toml (or those hosts left out of \`ALLOWED_HOSTS\`).`,
  },
  github: {
    title: 'GitHub (`SIGN_IN = "github"`)',
    vars: [{ name: 'GITHUB_CLIENT_ID', value: '', comment: "Your GitHub OAuth app's Client ID." }],
    secret: 'GITHUB_CLIENT_SECRET',
    testValues: { GITHUB_CLIENT_ID: 'test-client', GITHUB_CLIENT_SECRET: 'test-secret' },
    refusals: [
      ['GITHUB_CLIENT_ID', 'GITHUB_CLIENT_ID'],
      ['GITHUB_CLIENT_SECRET', 'wrangler secret put GITHUB_CLIENT_SECRET'],
    ],
    readme: `Users sign in with their GitHub account; the principal is GitHub's numeric user id, never the
login. Anyone with a GitHub account can sign in: restrict what your tools do by principal.
${UNFILLED}

1. **On GitHub**, Settings > Developer settings > OAuth Apps > *New OAuth App* (or your
   organization's): homepage URL your server's origin; **authorization callback URL**
   ${CALLBACK},
   exactly (one per app: \`npm run dev\`'s \`http://localhost:8787/authorize/callback\` needs an app
   of its own); Device Flow off; generate a client secret. No scope is asked: the sign-in reads only the public profile.
2. **In wrangler.toml \`[vars]\`**: \`GITHUB_CLIENT_ID\`.
3. **The client secret**, never in wrangler.toml: \`npx wrangler secret put GITHUB_CLIENT_SECRET\`
   (for \`npm run dev\`: \`cp .dev.vars.example .dev.vars\`, and put it there).`,
  },
};

/** wrangler.toml's `[vars]` lines for the source, after `SIGN_IN`. */
export function signInTomlVars(idp: Exclude<Idp, 'demo'>): string {
  const { vars, secret } = SIGN_IN_SOURCES[idp];
  const lines = [
    '# Fill in the empty ones (the README says where each comes from): until then the Worker refuses',
    "# every request (500), and its log (npm run dev's console, npx wrangler tail) names the variable.",
  ];
  for (const { name, value, comment, optional } of vars) {
    lines.push(`# ${comment}`, `${optional ? '# ' : ''}${name} = "${value}"`);
  }
  if (secret !== undefined) {
    lines.push(
      `# And a secret, never written here: npx wrangler secret put ${secret}`,
      '# (for npm run dev, a line in .dev.vars: see .dev.vars.example).',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `.dev.vars.example`, for a source with a secret: what `npm run dev` needs beside wrangler.toml. */
export function devVarsExample(idp: Idp | undefined): string | undefined {
  const secret = idp === undefined || idp === 'demo' ? undefined : SIGN_IN_SOURCES[idp].secret;
  if (secret === undefined) return undefined;
  return `# Copy to .dev.vars (git-ignored) for npm run dev; deployed, the secret is
# npx wrangler secret put ${secret}
${secret}=
`;
}
