/**
 * The files of a new Worker project (`npx mcp-edge-sessions init`), as text: plain functions of
 * the options and of this package's own manifest, so the project pins exactly the toolchain
 * this library is tested with (its devDependencies: wrangler, workerd, vitest, TypeScript, the
 * `node` package) and nothing is written here twice. bin/mcp-edge-sessions.mjs writes them.
 */
import type { AuthMode, InitOptions } from './init-options.ts';

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

/** The compatibility date this library is tested at (the repository's wrangler.toml; scripts/check-package.mjs compares them). */
export const COMPATIBILITY_DATE = '2026-11-17';

/** The server's runtime dependencies: the SDK and the library's peers (hono, jose, the OAuth provider), at the versions tested. */
const RUNTIME = ['@cloudflare/workers-oauth-provider', '@modelcontextprotocol/server', 'hono', 'jose', 'zod'] as const;
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

function wranglerToml({ name, auth, tasks }: InitOptions): string {
  const classes = ['Sessions', 'McpEventBus', ...(tasks ? ['Tasks'] : [])];
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
# reaches only the listeners of the isolate that made it).
[[durable_objects.bindings]]
name = "MCP_BUS"
class_name = "McpEventBus"
${
  tasks
    ? `
# Optional: the Tasks extension for 2026-07-28 clients, one object per task (a tool opts in with runTask).
[[durable_objects.bindings]]
name = "MCP_TASKS"
class_name = "Tasks"
`
    : ''
}
# Optional: each principal's (or client address's) requests a minute; beyond it, 429. The
# namespace id is any number you choose for this limit.
[[ratelimits]]
name = "MCP_RATE_LIMIT"
namespace_id = "1001"
simple = { limit = 600, period = 60 }

# Optional: metrics, a data point per request and per notable event (the library's
# docs/operations.md has the schema and queries). Uncomment to write them to Analytics Engine.
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
# Each SQLite class is named by a migration once; a class added later needs a new tag (v2, …).
[[migrations]]
tag = "v1"
new_sqlite_classes = [${classes.map((c) => `"${c}"`).join(', ')}]

[vars]
# Hosts this Worker answers (others get 403, against DNS rebinding); entries without a port match
# any port. Add your deployed hostname (my-server.<you>.workers.dev) before deploying.
ALLOWED_HOSTS = "localhost,127.0.0.1,[::1]"
# Origins of browser-based clients allowed to call it (CORS); others get 403.
ALLOWED_ORIGINS = "http://localhost,http://127.0.0.1,http://[::1]"
${authVars(auth)}`;
}

function authVars(auth: AuthMode): string {
  switch (auth) {
    case 'none':
      return '';
    case 'jwt':
      return `# AUTH=jwt: tokens of your authorization server, verified against its keys (docs/auth.md).
AUTH = "jwt"
AUTH_ISSUER = "https://auth.example.com/"
AUTH_JWKS_URL = "https://auth.example.com/.well-known/jwks.json"
AUTH_SCOPES = "mcp"
# The endpoint's URL, the audience its tokens carry: https://<your host>/mcp once deployed.
# MCP_RESOURCE = "https://my-server.example.workers.dev/mcp"
`;
    case 'oauth':
      return `# AUTH=oauth: the authorization server embedded in this Worker (docs/auth.md). Its sign-in page
# authenticates nobody until you replace it (createMcpWorker's \`oauth.authorize\`).
AUTH = "oauth"
# The endpoint's URL: https://<your host>/mcp once deployed.
MCP_RESOURCE = "http://localhost:8787/mcp"
AUTH_SCOPES = "mcp"
`;
  }
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

function indexTs({ name, tasks }: InitOptions): string {
  const imports = [
    'createMcpWorker',
    'McpSessionObject',
    ...(tasks ? ['McpTaskObject'] : []),
    'sessionServerOptions',
    'type ModernContext',
    'type SessionContext',
  ];
  return `/**
 * The Worker: 2025-era clients get a session, one Durable Object each (\`Sessions\`); each
 * 2026-07-28 request gets an McpServer of its own (\`modernServer\`)${tasks ? ', and a tool that calls\n * `runTask` becomes a task, one `Tasks` object each' : ''}. The same tools serve both (src/tools.ts).
 */
import { McpServer } from '@modelcontextprotocol/server';
import {
${imports.map((i) => `  ${i},`).join('\n')}
} from 'mcp-edge-sessions';
import { registerTools } from './tools.ts';

const info = { name: '${name}', version: '0.0.0' };

export class Sessions extends McpSessionObject<Env> {
  protected override createServer(_session: SessionContext): McpServer {
    const server = new McpServer(info, sessionServerOptions());
    registerTools(server);
    return server;
  }
}

function modernServer({ requestState }: ModernContext): McpServer {
  const server = new McpServer(info, { requestState: { verify: requestState.verify } });
  registerTools(server);
  return server;
}
${
  tasks
    ? `
export class Tasks extends McpTaskObject<Env> {
  protected override createServer(context: ModernContext): McpServer {
    return modernServer(context);
  }
}
`
    : ''
}
export { McpEventBus } from 'mcp-edge-sessions';

export default createMcpWorker<Env>({
  sessions: (env) => env.MCP_SESSION,
  modern: modernServer,
  bus: (env) => env.MCP_BUS,
${tasks ? '  tasks: (env) => env.MCP_TASKS,\n' : ''}  rateLimit: (env) => env.MCP_RATE_LIMIT,
}) satisfies ExportedHandler<Env>;
`;
}

function toolsTs({ tasks }: InitOptions): string {
  const body = `const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= from; step++) {
        // Cancellable: the client's cancellation aborts the signal.
        await scheduler.wait(interval_ms, { signal: ctx.mcpReq.signal });
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: step, total: from } });
        }
      }
      return { content: [{ type: 'text', text: \`liftoff after \${from}\` }] };`;
  const handler = tasks
    ? `    // runTask: a task for 2026-07-28 clients that declare the Tasks extension (its progress
    // becomes the task's events); an ordinary call otherwise, its progress on the call's stream.
    async ({ from, interval_ms }, ctx) =>
      runTask(async () => {
        ${body.replaceAll('\n', '\n  ')}
      }),`
    : `    async ({ from, interval_ms }, ctx) => {
      ${body}
    },`;
  return `/**
 * The tools, written once for both protocol eras: a 2025 session's McpServer and each
 * 2026-07-28 request's register the same ones (src/index.ts). Add yours here.
 */
import type { McpServer } from '@modelcontextprotocol/server';
${tasks ? "import { runTask } from 'mcp-edge-sessions';\n" : ''}import * as z from 'zod';

export function registerTools(server: McpServer): void {
  server.registerTool(
    'countdown',
    {
      description: 'Counts down from \`from\`, one progress notification a step, then reports liftoff.',
      inputSchema: z.object({ from: z.number().int().min(1).max(100), interval_ms: z.number().int().min(0).max(10_000).default(100) }),
    },
${handler}
  );
}
`;
}

function serverTest({ auth, tasks }: InitOptions): string {
  const head = `/** The Worker as clients reach it, in workerd with its real bindings and storage. */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

/** Where \`npm run dev\` serves it (with AUTH=oauth, MCP_RESOURCE's origin). */
const ORIGIN = 'http://localhost:8787';
const JSON_AND_SSE = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const post = (body: unknown, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(\`\${ORIGIN}/mcp\`, { method: 'POST', headers: { ...JSON_AND_SSE, ...headers }, body: JSON.stringify(body) }));
`;
  if (auth !== 'none') {
    return `${head}
describe('the server (AUTH=${auth})', () => {
  it('asks for a token, and says where to get one', async () => {
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toContain('resource_metadata=');
    const metadata = await exports.default.fetch(new Request(\`\${ORIGIN}/.well-known/oauth-protected-resource/mcp\`));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: expect.stringContaining('/mcp') });
  });
});
`;
  }
  return `${head}
/** The JSON-RPC messages of a response: its SSE events' data, or its JSON body. */
async function messages(response: Response): Promise<any[]> {
  const text = await response.text();
  if (response.headers.get('Content-Type')?.startsWith('application/json')) return [JSON.parse(text)];
  return text.split('\\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice('data: '.length)));
}

/** A 2026-07-28 request: no session; the protocol version, capabilities and client in each request's _meta. */
function modern(id: number, method: string, params: Record<string, unknown>, extensions: Record<string, unknown> = {}) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions },
    'io.modelcontextprotocol/clientInfo': { name: 'test', version: '0' },
  };
  const name = (params.name ?? params.taskId) as string | undefined;
  return post(
    { jsonrpc: '2.0', id, method, params: { ...params, _meta } },
    { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(name !== undefined && { 'Mcp-Name': name }) },
  );
}

describe('the server', () => {
  it('serves a 2025 session: countdown streams its progress, then its result', async () => {
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '0' } };
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init });
    const session = opened.headers.get('Mcp-Session-Id');
    expect(session).not.toBeNull();
    await opened.body?.cancel();
    const headers = { 'Mcp-Session-Id': session!, 'MCP-Protocol-Version': '2025-11-25' };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
    const call = { name: 'countdown', arguments: { from: 3, interval_ms: 10 }, _meta: { progressToken: 'p1' } };
    const answer = await messages(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, headers));
    expect(answer.map((m) => m.params?.progress ?? m.result?.content[0].text)).toEqual([1, 2, 3, 'liftoff after 3']);
  });

  it('serves a 2026-07-28 call without a session', async () => {
    const answer = await messages(await modern(1, 'tools/call', { name: 'countdown', arguments: { from: 2, interval_ms: 0 } }));
    expect(answer.at(-1).result.content[0].text).toBe('liftoff after 2');
  });
${
  tasks
    ? `
  it('runs countdown as a task for a client that declares the Tasks extension', async () => {
    const tasks = { 'io.modelcontextprotocol/tasks': {} };
    const [created] = await messages(await modern(1, 'tools/call', { name: 'countdown', arguments: { from: 2, interval_ms: 10 } }, tasks));
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const { taskId } = created.result;
    // Polled as a client would, at most 5 s.
    for (let attempt = 0; attempt < 50; attempt++) {
      const [read] = await messages(await modern(2, 'tasks/get', { taskId }, tasks));
      if (read.result.status !== 'working') {
        expect(read.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'liftoff after 2' }] } });
        return;
      }
      await scheduler.wait(100);
    }
    throw new Error('the task did not complete within 5 s');
  });
`
    : ''
}});
`;
}

function readme({ name, auth, tasks }: InitOptions): string {
  const authLine = {
    none: "Anyone may call it (`AUTH` unset): fine for public tools and local work; see `AUTH` in the\nlibrary's docs/auth.md before exposing anything private.",
    jwt: 'It accepts JWT access tokens of your authorization server (`AUTH = "jwt"`): set `AUTH_ISSUER`,\n`AUTH_JWKS_URL` and `MCP_RESOURCE` in wrangler.toml to yours (the library\'s docs/auth.md).',
    oauth:
      'It embeds an OAuth authorization server (`AUTH = "oauth"`). Its sign-in page authenticates\nnobody: replace it (`createMcpWorker({ oauth: { authorize } })`), create the KV namespace\n(`npx wrangler kv namespace create OAUTH_KV`, its id into wrangler.toml) and set `MCP_RESOURCE`\nbefore deploying (the library\'s docs/auth.md).',
  }[auth];
  return `# ${name}

An MCP server on Cloudflare Workers, built with
[mcp-edge-sessions](https://www.npmjs.com/package/mcp-edge-sessions): every stream resumable
without loss or duplication, in both protocol eras (2025 sessions and 2026-07-28)${tasks ? ', with tasks' : ''}.

\`\`\`sh
npm install
npm run dev      # serves http://localhost:8787/mcp
npm test         # the server in workerd, with its real storage
npm run deploy   # wrangler deploy, with your own \`wrangler login\`
\`\`\`

Try it: \`npx @modelcontextprotocol/inspector --cli http://localhost:8787/mcp --transport http --method tools/list\`.

- **Tools** are in \`src/tools.ts\`, written once for both eras with the MCP SDK's \`McpServer\`.
- **wrangler.toml** has the bindings; the comments say which are optional. Add your deployed
  hostname to \`ALLOWED_HOSTS\` before deploying (other hosts are refused with 403).
- ${authLine.replaceAll('\n', '\n  ')}
`;
}
