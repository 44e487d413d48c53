/**
 * The files of a new Worker project (`npx mcp-edge-sessions init`), as text: plain functions of
 * the options and of this package's own manifest. Here the configuration (package.json,
 * wrangler.toml, tsconfig, vitest), which pins exactly the toolchain this library is tested
 * with (its devDependencies: wrangler, workerd, vitest, TypeScript, the `node` package), so
 * nothing is written here twice; the sources are project-sources.ts. bin/mcp-edge-sessions.mjs
 * writes them.
 */
import type { Idp, InitOptions } from './init-options.ts';
import { indexTs, readme, toolsTs } from './project-sources.ts';
import { serverTest } from './project-tests.ts';
import { devVarsExample, signInTomlVars } from './sign-in-sources.ts';

/** What of this package's package.json a new project is built from. */
export interface LibraryManifest {
  readonly version: string;
  readonly devDependencies: Readonly<Record<string, string>>;
  readonly overrides?: Readonly<Record<string, unknown>>;
  readonly allowScripts?: Readonly<Record<string, boolean>>;
}

export interface ProjectFile {
  /** Relative to the project's folder, with `/`. */
  readonly path: string;
  readonly text: string;
}

/** The compatibility date this library is tested at (the repository's wrangler.toml; scripts/ci/check-package.mjs compares them). */
export const COMPATIBILITY_DATE = '2026-11-17';

/** The server's runtime dependencies: the SDK and the library's peers (hono, jose, the OAuth provider and OpenID client), at the versions tested. */
const RUNTIME = ['@cloudflare/workers-oauth-provider', '@modelcontextprotocol/server', 'hono', 'jose', 'oauth4webapi', 'zod'] as const;
/** Its toolchain, pinned. */
const TOOLCHAIN = [
  '@cloudflare/vitest-plugin',
  '@cloudflare/workers-types',
  'node',
  'typescript',
  'vitest',
  'workerd',
  'wrangler',
] as const;

/** Wrangler kept off the network in dev and test (never in deploy, which must see the user's login). */
const QUIET = 'WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true';

export function projectFiles(options: InitOptions, manifest: LibraryManifest): ProjectFile[] {
  const devVars = devVarsExample(options.idp);
  return [
    { path: 'package.json', text: packageJson(options, manifest) },
    { path: 'wrangler.toml', text: wranglerToml(options) },
    { path: 'tsconfig.json', text: TSCONFIG },
    { path: 'vitest.config.ts', text: VITEST_CONFIG },
    { path: 'src/index.ts', text: indexTs(options) },
    { path: 'src/tools.ts', text: toolsTs(options) },
    { path: 'test/server.test.ts', text: serverTest(options) },
    { path: '.gitignore', text: 'node_modules/\n.wrangler/\n.dev.vars\n' },
    { path: 'README.md', text: readme(options) },
    ...(devVars === undefined ? [] : [{ path: '.dev.vars.example', text: devVars }]),
  ];
}

function packageJson({ name, packageSpec }: InitOptions, manifest: LibraryManifest): string {
  const pinned = (names: readonly string[]) =>
    Object.fromEntries(
      names.map((dependency) => {
        const version = manifest.devDependencies[dependency];
        if (version === undefined)
          throw new Error(`mcp-edge-sessions ${manifest.version}: no tested version of ${dependency} in its package.json`);
        return [dependency, version];
      }),
    );
  const project = {
    name,
    version: '0.0.0',
    private: true,
    type: 'module',
    scripts: {
      dev: `${QUIET} wrangler dev`,
      // The Env type first (wrangler prints the whole file; the errors still show).
      test: `npm run types --silent > /dev/null && tsc && ${QUIET} vitest run`,
      deploy: 'wrangler deploy',
      // The Env type (worker-configuration.d.ts) from wrangler.toml: rerun after editing it (npm test does).
      types: `${QUIET} wrangler types --include-runtime=false --strict-vars=false`,
    },
    dependencies: { 'mcp-edge-sessions': packageSpec ?? `^${manifest.version}`, ...pinned(RUNTIME) },
    devDependencies: pinned(TOOLCHAIN),
    ...(manifest.overrides !== undefined && { overrides: manifest.overrides }),
    ...(manifest.allowScripts !== undefined && { allowScripts: manifest.allowScripts }),
  };
  return `${JSON.stringify(project, null, 2)}\n`;
}

function wranglerToml({ name, auth, idp, tasks }: InitOptions): string {
  const classes = ['Sessions', 'McpEventBus', ...(tasks ? ['Tasks'] : []), ...(auth === 'none' ? [] : ['McpPrincipalRegistry'])];
  return `name = "${name}"
main = "src/index.ts"
compatibility_date = "${COMPATIBILITY_DATE}"
# nodejs_compat: the library uses AsyncLocalStorage. global_fetch_strictly_public: with
# AUTH=oauth the Worker fetches clients' metadata documents, and must reach public addresses only.
compatibility_flags = ["nodejs_compat", "global_fetch_strictly_public"]

[dev]
ip = "127.0.0.1"
port = 8787

# Required: one object per 2025-era session (Mcp-Session-Id), its events stored before they are sent.
[[durable_objects.bindings]]
name = "MCP_SESSION"
class_name = "Sessions"

# Optional: carries 2026-07-28 subscriptions/listen events between isolates (without it a change
# reaches only the listeners of the isolate that made it). To go without it, remove the \`bus\`
# line in src/index.ts too: a binding removed while its line stays is a configuration error.
[[durable_objects.bindings]]
name = "MCP_BUS"
class_name = "McpEventBus"
${
  tasks
    ? `
# Optional: the Tasks extension for 2026-07-28 clients, one object per task (a tool opts in with
# runTask). To go without it, remove the \`tasks\` line in src/index.ts too.
[[durable_objects.bindings]]
name = "MCP_TASKS"
class_name = "Tasks"
`
    : ''
}${
  auth === 'none'
    ? ''
    : `
# Optional: one object per signed-in principal; bounds its sessions and tasks
# (MAX_SESSIONS_PER_PRINCIPAL, MAX_TASKS_PER_PRINCIPAL) and lets a revocation end them. To go
# without it, remove the \`principals\` line in src/index.ts too.
[[durable_objects.bindings]]
name = "MCP_PRINCIPALS"
class_name = "McpPrincipalRegistry"
`
}
# Optional: each principal's (or client address's) requests a minute; beyond it, 429. The
# namespace id is any number you choose for this limit. To go without it, remove the
# \`rateLimit\` line in src/index.ts too.
[[ratelimits]]
name = "MCP_RATE_LIMIT"
namespace_id = "1001"
simple = { limit = 600, period = 60 }

# Optional: metrics, a data point per request and per notable event (the schema and queries:
# node_modules/mcp-edge-sessions/docs/operations.md). Uncomment to write them to Analytics Engine.
# Its principal index is keyed with a secret, which the binding needs (without it, every
# request is a configuration error): openssl rand -base64 32 | npx wrangler secret put METRICS_KEY
# (for wrangler dev, a METRICS_KEY line in .dev.vars).
# [[analytics_engine_datasets]]
# binding = "MCP_METRICS"
# dataset = "mcp_metrics"
${
  auth === 'oauth'
    ? `
# AUTH=oauth: the embedded authorization server's clients and grants. Before deploying:
# npx wrangler kv namespace create OAUTH_KV, and put its id here.
[[kv_namespaces]]
binding = "OAUTH_KV"
id = "replace-with-your-namespace-id"
`
    : ''
}
# Required: each Durable Object class this Worker exports, and its storage. \`wrangler deploy\`
# compares this map with the classes already deployed and provisions those it lacks, so a class
# you add later is one more line here (wrangler warns of a bound class missing from it: such a
# class has no SQLite). Each needs SQLite, and a class's storage is fixed by its first deploy.
# This map replaces the older [[migrations]], which it cannot be combined with (wrangler 4.107 or
# later; node_modules/mcp-edge-sessions/docs/operations.md, "Deploying and upgrading").
[exports]
${classes.map((c) => `${c} = { type = "durable-object", storage = "sqlite" }`).join('\n')}

[vars]
# Hosts this Worker answers (others get 403, against DNS rebinding). An entry without a port is
# its default ports only (a Host without one, :80, :443); "name:8787" is that port; "name:*" any
# port (here: loopback, for npm run dev and local clients). Add your deployed hostname
# (my-server.<you>.workers.dev, no port) before deploying.
ALLOWED_HOSTS = "localhost:*,127.0.0.1:*,[::1]:*"
# Origins of browser-based clients allowed to call it (CORS); others get 403. Same port rule.
ALLOWED_ORIGINS = "http://localhost:*,http://127.0.0.1:*,http://[::1]:*"
# Where every Durable Object lives, decided before the first deploy (node_modules/mcp-edge-sessions/docs/operations.md, "Placement"):
# DO_JURISDICTION = "eu"     # its data rests only there (eu, fedramp, fedramp-high, us); changed later, every object is orphaned; locally none (.dev.vars: DO_JURISDICTION=)
# DO_LOCATION_HINT = "weur"  # where a new object is created, best effort: wnam, enam, sam, weur, eeur, apac, apac-ne, apac-se, oc, afr, me
${authVars(auth, idp)}`;
}

function authVars(auth: InitOptions['auth'], idp: Idp | undefined): string {
  switch (auth) {
    case 'none':
      return '';
    case 'jwt':
      return `# AUTH=jwt: tokens of your authorization server, verified against its keys
# (node_modules/mcp-edge-sessions/docs/auth.md).
AUTH = "jwt"
AUTH_ISSUER = "https://auth.example.com/"
AUTH_JWKS_URL = "https://auth.example.com/.well-known/jwks.json"
AUTH_SCOPES = "mcp"
# The endpoint's URL, the audience its tokens carry: https://<your host>/mcp once deployed.
# MCP_RESOURCE = "https://my-server.example.workers.dev/mcp"
`;
    case 'oauth':
      return idp === undefined || idp === 'demo' ? OAUTH_DEMO_VARS : oauthVars(idp);
  }
}

const OAUTH_DEMO_VARS = `# AUTH=oauth: the authorization server embedded in this Worker
# (node_modules/mcp-edge-sessions/docs/auth.md). Its sign-in page is a demo that checks no
# password: whoever reaches it can sign in as anyone. So it serves only on loopback (the
# request's host and MCP_RESOURCE's both localhost, 127.0.0.0/8 or [::1]), and refuses elsewhere
# (403, saying why) until you sign users in otherwise: SIGN_IN = "oidc", "access" or "github"
# (init --idp writes their variables), or your own page as createMcpWorker's
# \`oauth: { authorize }\`. DEMO_SIGN_IN = "anyone-is-anyone" serves the demo page anywhere: only
# for a server that holds nothing of anyone's, since anyone is anyone there.
AUTH = "oauth"
# The endpoint's URL: https://<your host>/mcp once deployed.
MCP_RESOURCE = "http://localhost:8787/mcp"
AUTH_SCOPES = "mcp"
SIGN_IN = "demo"
`;

/** AUTH=oauth with its users signed in by an identity provider. */
function oauthVars(idp: Exclude<Idp, 'demo'>): string {
  return `# AUTH=oauth: the authorization server embedded in this Worker
# (node_modules/mcp-edge-sessions/docs/auth.md), its users signed in by
# ${{ oidc: 'your OpenID Connect provider', access: 'Cloudflare Access', github: 'GitHub' }[idp]} (the README's steps).
AUTH = "oauth"
# The endpoint's URL: https://<your host>/mcp once deployed. ${
    idp === 'access'
      ? "Your Access application covers its\n# origin's /authorize (not /mcp)."
      : 'Its origin, then /authorize/callback,\n# is the callback URL your provider must know (here http://localhost:8787/authorize/callback).'
  }
MCP_RESOURCE = "http://localhost:8787/mcp"
AUTH_SCOPES = "mcp"
SIGN_IN = "${idp}"
${signInTomlVars(idp)}`;
}

const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'es2023',
      lib: ['es2023'],
      module: 'es2022',
      moduleResolution: 'bundler',
      types: ['@cloudflare/workers-types', '@cloudflare/vitest-plugin/types'],
      strict: true,
      noEmit: true,
      verbatimModuleSyntax: true,
      allowImportingTsExtensions: true,
      // The MCP server SDK's declarations name Node's Buffer type, which a Worker has not.
      skipLibCheck: true,
    },
    include: ['src', 'test', 'worker-configuration.d.ts'],
  },
  null,
  2,
)}\n`;

const VITEST_CONFIG = `import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

// The tests run in workerd, with this Worker's bindings and real Durable Object storage.
export default defineConfig({
  plugins: [cloudflareTest({ main: './src/index.ts', wrangler: { configPath: './wrangler.toml' } })],
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    // The Worker's one JSON line per request is for \`wrangler tail\`, not for test output.
    onConsoleLog: (log: string) => !log.includes('"msg":"mcp.request"'),
  },
});
`;
