/**
 * The source files of a new project (`init`): its Worker, its tool and its README, as text of
 * the options (its test: project-tests.ts). project-files.ts puts them beside the configuration.
 */
import type { InitOptions } from './init-options.ts';
import { SIGN_IN_SOURCES } from './sign-in-sources.ts';

export function indexTs({ name, tasks, auth }: InitOptions): string {
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
export { McpEventBus${auth === 'none' ? '' : ', McpPrincipalRegistry'} } from 'mcp-edge-sessions';

export default createMcpWorker<Env>({
  sessions: (env) => env.MCP_SESSION,
  modern: modernServer,
  bus: (env) => env.MCP_BUS,
${tasks ? '  tasks: (env) => env.MCP_TASKS,\n' : ''}  rateLimit: (env) => env.MCP_RATE_LIMIT,
${auth === 'none' ? '' : '  principals: (env) => env.MCP_PRINCIPALS,\n'}}) satisfies ExportedHandler<Env>;
`;
}

export function toolsTs({ tasks }: InitOptions): string {
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

export function readme({ name, auth, idp, tasks }: InitOptions): string {
  const authLine = {
    none: "Anyone may call it (`AUTH` unset): fine for public tools and local work; see `AUTH` in the\nlibrary's [docs/auth.md](node_modules/mcp-edge-sessions/docs/auth.md) before exposing anything private.",
    jwt: 'It accepts JWT access tokens of your authorization server (`AUTH = "jwt"`): set `AUTH_ISSUER`,\n`AUTH_JWKS_URL` and `MCP_RESOURCE` in wrangler.toml to yours (the library\'s [docs/auth.md](node_modules/mcp-edge-sessions/docs/auth.md)).',
    oauth:
      'It embeds an OAuth authorization server (`AUTH = "oauth"`). **Its sign-in page is a demo that\nchecks no password: whoever reaches it can sign in as anyone.** It serves only on loopback\n(`npm run dev`: the request\'s host and `MCP_RESOURCE`\'s both localhost, 127.0.0.0/8 or [::1]) and\nrefuses elsewhere with a 403 saying why. Before deploying, sign users in otherwise:\n`SIGN_IN = "oidc"`, `"access"` or `"github"` (`npx mcp-edge-sessions init --auth oauth --idp …`\nwrites their variables and steps; the library\'s [docs/auth.md](node_modules/mcp-edge-sessions/docs/auth.md)), or your own page\n(`createMcpWorker({ oauth: { authorize } })`); create the KV namespace (`npx wrangler\nkv namespace create OAUTH_KV`, its id into wrangler.toml) and set `MCP_RESOURCE` (the library\'s\n[docs/auth.md](node_modules/mcp-edge-sessions/docs/auth.md)). `DEMO_SIGN_IN = "anyone-is-anyone"` in `[vars]` serves the demo page anywhere:\nanyone is anyone there, so only for a server that holds nothing of anyone\'s.',
  }[auth];
  const source = auth === 'oauth' && idp !== undefined && idp !== 'demo' ? SIGN_IN_SOURCES[idp] : undefined;
  const oauthLine =
    source === undefined
      ? authLine
      : `It embeds an OAuth authorization server (\`AUTH = "oauth"\`) whose users sign in through
${source.title.replace(/ \(.*/, '')}: the steps are under *Sign-in* below. Before deploying, also create the KV
namespace (\`npx wrangler kv namespace create OAUTH_KV\`, its id into wrangler.toml) and set
\`MCP_RESOURCE\` to \`https://<your host>/mcp\` (the library's [docs/auth.md](node_modules/mcp-edge-sessions/docs/auth.md)).`;
  const signIn =
    source === undefined
      ? ''
      : `
## Sign-in: ${source.title}

${source.readme}
`;
  return `# ${name}

An MCP server on Cloudflare Workers, built with
[mcp-edge-sessions](node_modules/mcp-edge-sessions/README.md): every stream resumable
without loss or duplication, in both protocol eras (2025 sessions and 2026-07-28)${tasks ? ', with tasks' : ''}.
Its docs are in [node_modules/mcp-edge-sessions/docs/](node_modules/mcp-edge-sessions/docs/) once
\`npm install\` has run.

\`\`\`sh
npm install
npm run dev      # serves http://localhost:8787/mcp
npm test         # the server in workerd, with its real storage
npm run deploy   # wrangler deploy, with your own \`wrangler login\`
\`\`\`

Try it: \`npx @modelcontextprotocol/inspector --cli http://localhost:8787/mcp --transport http --method tools/list\`.

- **Tools** are in \`src/tools.ts\`, written once for both eras with the MCP SDK's \`McpServer\`.
- **wrangler.toml** has the bindings; the comments say which are optional. Add your deployed
  hostname to \`ALLOWED_HOSTS\` before deploying (other hosts are refused with 403; an entry
  without a port is its default ports only, \`name:*\` any port).
- ${oauthLine.replaceAll('\n', '\n  ')}
${signIn}`;
}
